import { accessTokenEnvShape, checkAccessTokenEnv, parseKeyRing } from '@invoicing/auth-guard';
import { baseEnvSchema, brokersSchema, describeEnv, EnvVariableSpec, loadConfig, requireRealSecretsInProduction } from '@invoicing/service-kit';
import { z } from 'zod';

export interface ResourceServiceIdentity {
  /** e.g. `invoice-service` */
  name: string;
  /** Postgres schema, e.g. `invoices` */
  schema: string;
  /** Role stem: runtime role `<role>_app`, migration role `<role>_owner`, e.g. `invoice` */
  role: string;
  defaultPort: number;
}

function schemaFor(id: ResourceServiceIdentity) {
  return baseEnvSchema
    .extend({
      PORT: z.coerce.number().int().min(0).max(65535).default(id.defaultPort),
      DATABASE_URL: z.string().url().default(`postgres://${id.role}_app:${id.role}_app_dev@127.0.0.1:5432/invoicing`),
      MIGRATION_DATABASE_URL: z
        .string()
        .url()
        .default(`postgres://${id.role}_owner:${id.role}_owner_dev@127.0.0.1:5432/invoicing`),
      DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
      KAFKA_BROKERS: brokersSchema.default('127.0.0.1:9092'),
      /** Upper bound on how long a revocation waits in a Kafka fetch (delivery latency). */
      REVOCATION_FETCH_MAX_WAIT_MS: z.coerce.number().int().min(10).max(5000).default(100),
      ...accessTokenEnvShape,
    })
    .superRefine((env, ctx) => {
      checkAccessTokenEnv(env, ctx);
      requireRealSecretsInProduction(env, { DATABASE_URL: env.DATABASE_URL, MIGRATION_DATABASE_URL: env.MIGRATION_DATABASE_URL }, ctx);
    });
}

export type ResourceConfig = z.infer<ReturnType<typeof schemaFor>> & { keys: ReadonlyMap<string, Buffer> };

/** Validates a resource service's environment once at start (throws ConfigError). */
export function loadResourceConfig(id: ResourceServiceIdentity, env: NodeJS.ProcessEnv = process.env): ResourceConfig {
  const parsed = loadConfig(schemaFor(id), env);
  return { ...parsed, keys: parseKeyRing(parsed.JWT_KEYS, parsed.JWT_SIGNING_KID).keys };
}

/** Variables read by a resource service (the `env-spec` command prints this). */
export function resourceEnvSpec(id: ResourceServiceIdentity): EnvVariableSpec[] {
  return describeEnv(schemaFor(id), ['JWT_KEYS', 'DATABASE_URL', 'MIGRATION_DATABASE_URL']);
}

import { parseKeyRing, KeyRing } from '@invoicing/auth-guard';
import { baseEnvSchema, brokersSchema, loadConfig, requireRealSecretsInProduction } from '@invoicing/service-kit';
import { z } from 'zod';

/**
 * Development defaults make `start` work on a fresh clone with no configuration; with
 * NODE_ENV=production every secret must be given and must not be one of these placeholders.
 */
const DEV_JWT_KEYS = 'dev-only=ZGV2LW9ubHktc2lnbmluZy1rZXktZG8tbm90LXVzZS1pbi1wcm9kdWN0aW9uIQ';

const schema = baseEnvSchema
  .extend({
    PORT: z.coerce.number().int().min(1).max(65535).default(3001),
    DATABASE_URL: z.string().url().default('postgres://auth_app:auth_app_dev@127.0.0.1:5432/invoicing'),
    MIGRATION_DATABASE_URL: z.string().url().default('postgres://auth_owner:auth_owner_dev@127.0.0.1:5432/invoicing'),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
    REDIS_URL: z.string().url().default('redis://127.0.0.1:6379/0'),
    /** Namespaces every Redis key; tests use their own. */
    REDIS_KEY_PREFIX: z.string().regex(/^[a-z0-9:_-]*$/).default('auth:'),
    KAFKA_BROKERS: brokersSchema.default('127.0.0.1:9092'),
    /** `kid=base64url-secret[,kid=secret...]`; each secret at least 32 bytes. */
    JWT_KEYS: z.string().default(DEV_JWT_KEYS),
    /** The kid that signs; defaults to the first of JWT_KEYS. */
    JWT_SIGNING_KID: z.string().optional(),
    JWT_ISSUER: z.string().min(1).default('http://localhost:8080'),
    JWT_AUDIENCE: z.string().min(1).default('invoicing-api'),
    /** Failed client authentications allowed per client and per address within the window. */
    AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).default(10),
    AUTH_THROTTLE_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(50),
    AUTH_THROTTLE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
  })
  .superRefine((env, ctx) => {
    requireRealSecretsInProduction(env, { JWT_KEYS: env.JWT_KEYS === DEV_JWT_KEYS ? 'dev-only' : env.JWT_KEYS }, ctx);
    try {
      parseKeyRing(env.JWT_KEYS, env.JWT_SIGNING_KID);
    } catch (e) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['JWT_KEYS'], message: (e as Error).message });
    }
  });

export type AuthEnv = z.infer<typeof schema>;

export interface AuthConfig extends AuthEnv {
  keyRing: KeyRing;
}

export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const parsed = loadConfig(schema, env);
  return { ...parsed, keyRing: parseKeyRing(parsed.JWT_KEYS, parsed.JWT_SIGNING_KID) };
}

/** Injection token of the validated configuration. */
export const AUTH_CONFIG = Symbol('AUTH_CONFIG');

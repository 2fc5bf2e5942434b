import { accessTokenEnvShape, checkAccessTokenEnv, KeyRing, parseKeyRing } from '@invoicing/auth-guard';
import { baseEnvSchema, databaseEnvShape, describeEnv, EnvVariableSpec, kafkaEnvShape, loadConfig, requireRealSecretsInProduction } from '@invoicing/service-kit';
import { z } from 'zod';
import { redisUrlProblem } from './redis-url';

/**
 * Development defaults make `start` work on a fresh clone with no configuration; with
 * NODE_ENV=production the development key ring and placeholder secrets stop the service.
 */
const schema = baseEnvSchema
  .extend({
    PORT: z.coerce.number().int().min(0).max(65535).default(3001),
    ...databaseEnvShape('auth'),
    /**
     * One Redis (`redis://`, `rediss://`) or a Redis Cluster: `redis-cluster://[user:password@]host:port[,host:port...]`,
     * seed nodes (ADR 0018).
     */
    REDIS_URL: z
      .string()
      .superRefine((value, ctx) => {
        const problem = redisUrlProblem(value);
        if (problem) ctx.addIssue({ code: z.ZodIssueCode.custom, message: problem });
      })
      .default('redis://127.0.0.1:6379/0'),
    /** Namespaces every Redis key; tests use their own. */
    REDIS_KEY_PREFIX: z.string().regex(/^[a-z0-9:_-]*$/).default('auth:'),
    ...kafkaEnvShape,
    ...accessTokenEnvShape,
    /**
     * Live refresh-token sessions one API key may hold; past it the least recently used one is
     * evicted (its refresh token stops working). Bounds Redis memory per key (ADR 0014).
     */
    AUTH_MAX_SESSIONS_PER_KEY: z.coerce.number().int().min(1).max(1_000_000).default(50_000),
    /** Failed client authentications allowed per client and per address within the window. */
    AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).default(10),
    AUTH_THROTTLE_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(50),
    AUTH_THROTTLE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
    /** Failed settings-area logins allowed per email and per address within the window. */
    LOGIN_THROTTLE_MAX_FAILURES_PER_EMAIL: z.coerce.number().int().min(1).default(10),
    LOGIN_THROTTLE_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(50),
    LOGIN_THROTTLE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(900),
    /** Secure flag on settings-area cookies; defaults to on in production. */
    COOKIE_SECURE: z.enum(['true', 'false']).optional(),
    /**
     * Origins allowed to make state-changing settings calls (comma-separated). When empty, a call's
     * Origin must equal the host it was sent to (through the gateway: X-Forwarded-Host).
     */
    ALLOWED_ORIGINS: z
      .string()
      .default('')
      .transform((s) => s.split(',').map((o) => o.trim()).filter(Boolean)),
  })
  .superRefine((env, ctx) => {
    checkAccessTokenEnv(env, ctx);
    requireRealSecretsInProduction(env, { DATABASE_URL: env.DATABASE_URL, MIGRATION_DATABASE_URL: env.MIGRATION_DATABASE_URL }, ctx);
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

/** Variables read by the auth service (the `env-spec` command prints this). */
export function authEnvSpec(): EnvVariableSpec[] {
  return describeEnv(schema, ['JWT_KEYS', 'DATABASE_URL', 'MIGRATION_DATABASE_URL']);
}

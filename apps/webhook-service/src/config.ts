import { accessTokenEnvShape, checkAccessTokenEnv, DEFAULT_REVOCATION_MAX_STALENESS_MS, parseKeyRing } from '@invoicing/auth-guard';
import { ACCESS_TOKEN_TTL_SECONDS, SERVICES } from '@invoicing/contracts';
import {
  baseEnvSchema,
  databaseEnvShape,
  describeEnv,
  EnvVariableSpec,
  isPlaceholderSecret,
  kafkaEnvShape,
  loadConfig,
  requestDeadlineEnvShape,
  requireRealSecretsInProduction,
  tracingEnvShape,
  trustedProxiesEnvShape,
} from '@invoicing/service-kit';
import { z } from 'zod';
import { parseRetrySchedule } from './delivery/retry-schedule';

/**
 * Development key of the endpoints' signing secrets at rest (AES-256-GCM): lets `start` and the tests
 * run with no configuration; production refuses it.
 */
export const DEV_WEBHOOK_SECRETS_KEY = 'dev-only-webhook-secrets-key-never-in-prodA';

const schema = baseEnvSchema
  .extend({
    PORT: z.coerce.number().int().min(0).max(65535).default(SERVICES['webhook-service'].port),
    ...databaseEnvShape('webhook'),
    ...kafkaEnvShape,
    ...trustedProxiesEnvShape,
    ...tracingEnvShape,
    ...requestDeadlineEnvShape,
    ...accessTokenEnvShape,
    REVOCATION_FETCH_MAX_WAIT_MS: z.coerce.number().int().min(10).max(5000).default(100),
    REVOCATION_MAX_STALENESS_MS: z.coerce
      .number()
      .int()
      .min(5000)
      .max(ACCESS_TOKEN_TTL_SECONDS * 1000)
      .default(DEFAULT_REVOCATION_MAX_STALENESS_MS),
    /** base64url of 32 bytes: encrypts the endpoints' signing secrets in the database (ADR 0037). */
    WEBHOOK_SECRETS_KEY: z
      .string()
      .default(DEV_WEBHOOK_SECRETS_KEY)
      .refine((v) => /^[A-Za-z0-9_-]{43}=?$/.test(v) && Buffer.from(v, 'base64url').length === 32, 'must be the base64url encoding of 32 bytes'),
    /**
     * Lets endpoints be registered on, and deliveries connect to, loopback, private and link-local
     * addresses, and over plain http: for a receiver on a developer's machine only. Off by default;
     * NODE_ENV=production refuses it.
     */
    WEBHOOK_ALLOW_PRIVATE_URLS: z
      .enum(['true', 'false'])
      .default('false')
      .transform((v) => v === 'true'),
    /**
     * Delays before each attempt, comma-separated durations (`0,5s,5m,30m,2h,5h,10h,10h`, the
     * default): the first attempt at once, the last one about 27 h 35 min after it. Tests use seconds.
     */
    WEBHOOK_RETRY_SCHEDULE: z
      .string()
      .default('0,5s,5m,30m,2h,5h,10h,10h')
      .refine((v) => parseRetrySchedule(v) !== null, 'expected comma-separated durations such as 0,5s,5m,2h (at most 20, the first 0)'),
    /** An endpoint whose deliveries have failed without a success for this long is disabled. */
    WEBHOOK_DISABLE_AFTER_MS: z.coerce.number().int().min(1000).default(5 * 24 * 3600_000),
    /** One attempt's deadline: connect, send, and the response's status and first bytes. */
    WEBHOOK_ATTEMPT_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(15_000),
    /** Attempts in flight on this instance (all endpoints), and per endpoint (on every instance together). */
    WEBHOOK_CONCURRENCY: z.coerce.number().int().min(1).max(1000).default(64),
    WEBHOOK_CONCURRENCY_PER_ENDPOINT: z.coerce.number().int().min(1).max(100).default(4),
    /** Attempts of one organization in flight (on every instance together): a tenant's endpoints together hold no more. */
    WEBHOOK_CONCURRENCY_PER_ORGANIZATION: z.coerce.number().int().min(1).max(1000).default(16),
    /** Tests, resends and replays one organization may ask for per minute, on each instance (429 past it). */
    WEBHOOK_ACTIONS_PER_MINUTE: z.coerce.number().int().min(1).max(10_000).default(30),
    /** How often the delivery loop looks for due deliveries when nothing woke it. */
    WEBHOOK_POLL_MS: z.coerce.number().int().min(10).max(60_000).default(1000),
  })
  .superRefine((env, ctx) => {
    checkAccessTokenEnv(env, ctx);
    requireRealSecretsInProduction(env, { DATABASE_URL: env.DATABASE_URL, MIGRATION_DATABASE_URL: env.MIGRATION_DATABASE_URL }, ctx);
    if (env.NODE_ENV === 'production') {
      if (env.WEBHOOK_SECRETS_KEY === DEV_WEBHOOK_SECRETS_KEY || isPlaceholderSecret(env.WEBHOOK_SECRETS_KEY)) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['WEBHOOK_SECRETS_KEY'], message: 'holds the development key or a placeholder; set a real key in production' });
      }
      if (env.WEBHOOK_ALLOW_PRIVATE_URLS) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['WEBHOOK_ALLOW_PRIVATE_URLS'], message: 'must be false in production: it would let a tenant reach internal addresses' });
      }
    }
  });

type Parsed = z.infer<typeof schema>;
/** The validated configuration; also the injection token Nest providers receive it by. */
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging -- a class as a typed injection token
export interface WebhookConfig extends Parsed {
  keys: ReadonlyMap<string, Buffer>;
  retryScheduleMs: number[];
}
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export abstract class WebhookConfig {}

/** Validates the environment once at start (throws ConfigError naming each bad variable). */
export function loadWebhookConfig(env: NodeJS.ProcessEnv = process.env): WebhookConfig {
  const parsed = loadConfig(schema, env);
  return { ...parsed, keys: parseKeyRing(parsed.JWT_KEYS, parsed.JWT_SIGNING_KID).keys, retryScheduleMs: parseRetrySchedule(parsed.WEBHOOK_RETRY_SCHEDULE)! };
}

export function webhookEnvSpec(): EnvVariableSpec[] {
  return describeEnv(schema, ['JWT_KEYS', 'WEBHOOK_SECRETS_KEY', 'DATABASE_URL', 'MIGRATION_DATABASE_URL']);
}

import { isIP } from 'node:net';
import { z } from 'zod';
import { DEFAULT_REQUEST_TIMEOUT_MS } from '../http/request-deadline';

/** Thrown at start when the environment does not satisfy a service's schema. */
export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`);
    this.name = 'ConfigError';
  }
}

/** Values that must never reach production: they are what docs and dev defaults contain. */
const PLACEHOLDER = /(change[-_]?me|placeholder|example|dev[-_]?only|_dev\b|insecure|secret123|^x+$)/i;

export function isPlaceholderSecret(value: string): boolean {
  return PLACEHOLDER.test(value);
}

/**
 * Parses `env` with a zod schema once at start. Problems are reported by variable name, never with
 * the value (it may be a secret): every malformed variable at once, then the cross-variable checks
 * (placeholders in production, key rings) once each variable parses. Exit on a ConfigError.
 */
export function loadConfig<T extends z.ZodTypeAny>(schema: T, env: NodeJS.ProcessEnv = process.env): z.infer<T> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((i) => `${i.path.join('.') || '(env)'}: ${i.message}`));
}

/** Common variables of every service; extend it with `.extend({...})`. */
export const baseEnvSchema = z.object({
  NODE_ENV: z.enum(['development', 'test', 'production']).default('development'),
  HOST: z.string().default('127.0.0.1'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Seconds to finish in-flight requests on SIGTERM before exiting. */
  SHUTDOWN_GRACE_SECONDS: z.coerce.number().int().min(0).max(120).default(10),
});

/** The request deadline of a service built with createServiceApp (installRequestDeadline). */
export const requestDeadlineEnvShape = {
  /**
   * Every request is answered within this many milliseconds: past it, 503 with Retry-After
   * (docs/api.md section 8). Below the gateway's 30 s, so that the caller reads the service's answer.
   */
  REQUEST_TIMEOUT_MS: z.coerce.number().int().min(1000).max(120_000).default(DEFAULT_REQUEST_TIMEOUT_MS),
};

/** A comma-separated list of host:port pairs. */
export const brokersSchema = z
  .string()
  .min(1)
  .transform((s) => s.split(',').map((b) => b.trim()).filter(Boolean))
  .refine((list) => list.length > 0 && list.every((b) => /^[^\s:]+:\d+$/.test(b)), 'expected host:port[,host:port...]');

/**
 * The database block of a service whose Postgres roles are `<role>_app` (DML only, for `serve`) and
 * `<role>_owner` (the schema owner, for `migrate`), as deploy/k8s/base/platform/postgres/bootstrap.sql creates
 * them; the defaults are the local development ones (production refuses them, see below).
 */
export function databaseEnvShape(role: string) {
  return {
    DATABASE_URL: z.string().url().default(`postgres://${role}_app:${role}_app_dev@127.0.0.1:5432/invoicing`),
    MIGRATION_DATABASE_URL: z.string().url().default(`postgres://${role}_owner:${role}_owner_dev@127.0.0.1:5432/invoicing`),
    DATABASE_POOL_SIZE: z.coerce.number().int().min(1).max(100).default(10),
  };
}

/** An IPv4 or IPv6 address, or a CIDR block of either. */
function isAddressOrBlock(entry: string): boolean {
  const [address, bits, extra] = entry.split('/');
  const family = isIP(address);
  if (family === 0 || extra !== undefined) return false;
  if (bits === undefined) return true;
  return /^\d{1,3}$/.test(bits) && Number(bits) <= (family === 4 ? 32 : 128);
}

/**
 * The proxies whose `X-Forwarded-For` a service believes (the gateway, an Ingress controller), by
 * address or CIDR block, comma-separated. From anyone else the client is the socket's peer, whatever
 * the header says: the per-address throttles and allowlists count the real caller. Empty (the
 * default) believes nobody; a deployment behind a proxy must name it, or every caller shares the
 * proxy's address (and its throttle budget).
 */
export const trustedProxiesEnvShape = {
  TRUSTED_PROXIES: z
    .string()
    .default('')
    .transform((s) => s.split(',').map((e) => e.trim()).filter(Boolean))
    .refine((list) => list.every(isAddressOrBlock), 'expected IP addresses or CIDR blocks, comma-separated (e.g. 10.0.0.0/8,127.0.0.2)'),
};

const httpUrl = z
  .string()
  .url()
  .refine((u) => /^https?:\/\//i.test(u), 'expected an http:// or https:// URL');

/** Unset or empty (as a compose file's `${VAR:-}` passes it): absent, as startTracing reads it. */
function optionalSetting<T extends z.ZodTypeAny>(type: T) {
  return z.preprocess((v) => (v === '' ? undefined : v), type.optional());
}

/**
 * Tracing (docs/observability.md): off unless an OTLP/HTTP endpoint is set. Read by startTracing
 * before this check runs (it must start before the instrumented modules load); declared here so that
 * a malformed value stops the service by name and `env-spec` lists the variables. The SDK reads the
 * other OTEL_* variables (OTEL_BSP_*, OTEL_TRACES_SAMPLER, OTEL_EXPORTER_OTLP_HEADERS...) itself.
 */
export const tracingEnvShape = {
  /** Base URL of an OTLP/HTTP receiver (a collector, Jaeger): spans go to `<url>/v1/traces`. */
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalSetting(httpUrl),
  /** The full URL for spans, when it is not `<OTEL_EXPORTER_OTLP_ENDPOINT>/v1/traces`. */
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: optionalSetting(httpUrl),
  /** `service.name` of the spans; the service's own name (e.g. `invoice-service`) by default. */
  OTEL_SERVICE_NAME: optionalSetting(z.string()),
};

/** The Kafka block every service has: the brokers, the local one by default. */
export const kafkaEnvShape = { KAFKA_BROKERS: brokersSchema.default('127.0.0.1:9092') };

/**
 * In production a secret-bearing variable must be set explicitly and must not be a placeholder; in
 * development and tests the documented default keeps `start` working with no configuration.
 */
export function requireRealSecretsInProduction(
  env: { NODE_ENV: string },
  secrets: Record<string, string | undefined>,
  ctx: z.RefinementCtx,
): void {
  if (env.NODE_ENV !== 'production') return;
  for (const [name, value] of Object.entries(secrets)) {
    if (!value) ctx.addIssue({ code: z.ZodIssueCode.custom, path: [name], message: 'is required in production' });
    else if (isPlaceholderSecret(value))
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: [name], message: 'holds a placeholder value; set a real secret' });
  }
}

import { readFileSync } from 'node:fs';
import { GithubPublicKeys, parseGithubPublicKeys } from '../secret-scanning/github-report';
import { accessTokenEnvShape, checkAccessTokenEnv, KeyRing, parseKeyRing } from '@invoicing/auth-guard';
import {
  baseEnvSchema,
  databaseEnvShape,
  describeEnv,
  EnvVariableSpec,
  kafkaEnvShape,
  loadConfig,
  requestDeadlineEnvShape,
  requireRealSecretsInProduction,
  tracingEnvShape,
  trustedProxiesEnvShape,
} from '@invoicing/service-kit';
import { createHmac } from 'node:crypto';
import { z } from 'zod';
import { ACCESS_TOKEN_TTL_SECONDS, SERVICES } from '@invoicing/contracts';
import { redisUrlProblem } from './redis-url';

/**
 * Development defaults make `start` work on a fresh clone with no configuration; with
 * NODE_ENV=production the development key ring and placeholder secrets stop the service.
 */
const schema = baseEnvSchema
  .extend({
    PORT: z.coerce.number().int().min(0).max(65535).default(3001),
    ...databaseEnvShape('auth'),
    ...requestDeadlineEnvShape,
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
    /**
     * Replicas that must hold a session write before it is acknowledged (Redis WAIT after the write,
     * on the same node; ADR 0030): a rotation, a new session, a revocation. Redis replicates
     * asynchronously, so without it a primary that dies after answering can come back, as its
     * promoted replica, without the write: a spent refresh token unspent. 0 (one Redis, no replica)
     * waits for nothing; production on a Redis Cluster with one replica per primary sets 1.
     */
    REDIS_WAIT_REPLICAS: z.coerce.number().int().min(0).max(5).default(0),
    /**
     * How long a write waits for its replicas; past it the request answers 503 and hands out
     * nothing (a rotation is then spent without a successor: the client exchanges again).
     */
    REDIS_WAIT_TIMEOUT_MS: z.coerce.number().int().min(10).max(1000).default(200),
    /** Namespaces every Redis key; tests use their own. */
    REDIS_KEY_PREFIX: z.string().regex(/^[a-z0-9:_-]*$/).default('auth:'),
    ...kafkaEnvShape,
    ...accessTokenEnvShape,
    ...trustedProxiesEnvShape,
    ...tracingEnvShape,
    /**
     * Live refresh-token sessions one API key may hold; past it the least recently used one is
     * evicted (its refresh token stops working). Bounds Redis memory per key (ADR 0014).
     */
    AUTH_MAX_SESSIONS_PER_KEY: z.coerce.number().int().min(1).max(1_000_000).default(50_000),
    /**
     * Lifetime of the access tokens issued (`expires_in`, `exp - iat`): 3600 as docs/api.md, section 5 promises.
     * Shorter only: every resource service keeps a revocation, and replays the topic, for the
     * longest lifetime (3600 s), so a longer one would outlive its revocation. Tests of the clients'
     * token lifecycle (the SDK across an expiry) set a few seconds.
     */
    ACCESS_TOKEN_LIFETIME_SECONDS: z.coerce.number().int().min(1).max(ACCESS_TOKEN_TTL_SECONDS).default(ACCESS_TOKEN_TTL_SECONDS),
    /**
     * Failed client authentications within the window (ADR 0022): past the first two limits the
     * token endpoints answer 429 to that client at that address, or to that address; the third only
     * raises an alert (a warning log line) for the client across every address, and refuses nobody.
     */
    AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT_ADDRESS: z.coerce.number().int().min(1).default(10),
    AUTH_THROTTLE_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(50),
    AUTH_THROTTLE_ALERT_FAILURES_PER_CLIENT: z.coerce.number().int().min(1).default(10),
    AUTH_THROTTLE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(60),
    /**
     * Failed settings-area log-ins (and refused sign-ups, per address) within the window, the same
     * way: per email at one address and per address refuse; per email across addresses alerts.
     */
    LOGIN_THROTTLE_MAX_FAILURES_PER_EMAIL_ADDRESS: z.coerce.number().int().min(1).default(10),
    LOGIN_THROTTLE_MAX_FAILURES_PER_ADDRESS: z.coerce.number().int().min(1).default(50),
    LOGIN_THROTTLE_ALERT_FAILURES_PER_EMAIL: z.coerce.number().int().min(1).default(10),
    LOGIN_THROTTLE_WINDOW_SECONDS: z.coerce.number().int().min(1).default(900),
    /** Live (not revoked) API keys one organization may hold; creating one more is refused with 409. */
    MAX_LIVE_KEYS_PER_ORGANIZATION: z.coerce.number().int().min(1).max(100_000).default(200),
    /**
     * Rolls and allowlist changes one organization may make per minute (ADR 0023): each is an event
     * every resource service applies and holds for an hour, so one tenant must not flood them.
     */
    KEY_CHANGES_PER_ORGANIZATION_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(60),
    /**
     * Keys one organization may create per minute (ADR 0035): every key stays a row, an audit record
     * and a line of the key list for ever, revoked or expired. 100 lets a script provision the whole
     * MAX_LIVE_KEYS_PER_ORGANIZATION in two minutes.
     */
    KEY_CREATIONS_PER_ORGANIZATION_PER_MINUTE: z.coerce.number().int().min(1).max(100_000).default(100),
    /**
     * Failed log-ins and failed key authentications reach the audit log aggregated (ADR 0035): per
     * account or key and fixed window of this length, one record at the first failure (and one per
     * alert), one summary with the counts and sample addresses when the window ends.
     */
    AUDIT_FAILURE_WINDOW_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
    /**
     * At most this many first-failure and alert records per organization and window; what the
     * ceiling holds back is counted in one record when the window ends, so strangers cannot bury
     * an organization's log under their failures.
     */
    AUDIT_FAILURE_RECORDS_PER_ORGANIZATION_PER_WINDOW: z.coerce.number().int().min(1).max(10_000).default(20),
    /** Secure flag (and `__Host-` prefix) on settings-area cookies; on except in development. */
    COOKIE_SECURE: z.enum(['true', 'false']).optional(),
    /**
     * GitHub's secret-scanning public keys (ADR 0025): the JSON document GitHub publishes at
     * https://api.github.com/meta/public_keys/secret_scanning, given inline or as a file path in
     * GITHUB_SECRET_SCANNING_KEYS_FILE (a deployment refreshes it from GitHub; this service makes
     * no outbound calls). Neither set: POST /api/v1/secret-scanning/github answers 404.
     */
    GITHUB_SECRET_SCANNING_KEYS: z.string().optional().transform((v) => v || undefined),
    GITHUB_SECRET_SCANNING_KEYS_FILE: z.string().optional().transform((v) => v || undefined),
    /**
     * Origins allowed to make state-changing settings calls (comma-separated, e.g.
     * `https://api.example.com`). When empty: the origin of JWT_ISSUER (the public base URL) and,
     * outside production, any loopback origin (http://localhost:<port>, http://127.0.0.1:<port>).
     */
    ALLOWED_ORIGINS: z
      .string()
      .default('')
      .transform((s) => s.split(',').map((o) => o.trim()).filter(Boolean))
      // Compared as origins (scheme://host[:port]): a trailing slash or path must not make an entry silently never match.
      .refine((list) => list.every((o) => URL.canParse(o) && new URL(o).origin === o), 'expected origins such as https://api.example.com (scheme, host, port; no path)'),
    /**
     * The webhook service, which Settings → Webhooks calls on the user's behalf (ADR 0038): an
     * http(s) origin, no credentials, path, query or fragment. The local stack's port by default.
     */
    WEBHOOK_SERVICE_URL: z
      .string()
      .refine((v) => URL.canParse(v) && /^https?:$/.test(new URL(v).protocol) && new URL(v).origin === v.replace(/\/$/, ''), 'expected an http(s) origin such as http://webhook-service:3020 (no credentials, path or query)')
      .default(`http://127.0.0.1:${SERVICES['webhook-service'].port}`),
    /** How long a forwarded webhook call may take, answer included; past it the page is answered 503. Below REQUEST_TIMEOUT_MS. */
    WEBHOOK_SERVICE_TIMEOUT_MS: z.coerce.number().int().min(100).max(60_000).default(10_000),
  })
  .superRefine((env, ctx) => {
    checkAccessTokenEnv(env, ctx);
    // The forwarded call must end (and be answered) before the request's own deadline answers for it.
    if (env.WEBHOOK_SERVICE_TIMEOUT_MS >= env.REQUEST_TIMEOUT_MS) {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['WEBHOOK_SERVICE_TIMEOUT_MS'], message: 'must be below REQUEST_TIMEOUT_MS' });
    }
    requireRealSecretsInProduction(env, { DATABASE_URL: env.DATABASE_URL, MIGRATION_DATABASE_URL: env.MIGRATION_DATABASE_URL }, ctx);
    // Without Secure (and so without the __Host- prefix), a sibling subdomain can plant settings cookies.
    if (env.NODE_ENV === 'production' && env.COOKIE_SECURE === 'false') {
      ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['COOKIE_SECURE'], message: 'cannot be false in production' });
    }
    for (const name of ['GITHUB_SECRET_SCANNING_KEYS', 'GITHUB_SECRET_SCANNING_KEYS_FILE'] as const) {
      const value = env[name];
      if (!value) continue;
      try {
        parseGithubPublicKeys(name === 'GITHUB_SECRET_SCANNING_KEYS' ? value : readFileSync(value, 'utf8'));
      } catch (e) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: [name], message: e instanceof Error ? e.message : String(e) });
      }
    }
  });

export type AuthEnv = z.infer<typeof schema>;

export interface AuthConfig extends AuthEnv {
  keyRing: KeyRing;
  /** GitHub's secret-scanning keys by identifier; null when reports are not accepted. */
  githubSecretScanningKeys: GithubPublicKeys | null;
}

export function loadAuthConfig(env: NodeJS.ProcessEnv = process.env): AuthConfig {
  const parsed = loadConfig(schema, env);
  const githubKeys = parsed.GITHUB_SECRET_SCANNING_KEYS ?? (parsed.GITHUB_SECRET_SCANNING_KEYS_FILE ? readFileSync(parsed.GITHUB_SECRET_SCANNING_KEYS_FILE, 'utf8') : null);
  return {
    ...parsed,
    keyRing: parseKeyRing(parsed.JWT_KEYS, parsed.JWT_SIGNING_KID),
    githubSecretScanningKeys: githubKeys ? parseGithubPublicKeys(githubKeys) : null,
  };
}

/**
 * Secrets for one purpose (the settings CSRF tokens, the throttle's email digests) derived from the
 * JWT key ring, so that every auth instance agrees without another secret to hand out: the one of
 * the signing key first, then one per key of the ring (to accept what an older signing key made).
 */
export function derivedSecrets(config: AuthConfig, purpose: string): { signing: Buffer; all: Buffer[] } {
  const derive = (secret: Buffer) => createHmac('sha256', secret).update(purpose).digest();
  const all = [...config.keyRing.keys.entries()].map(([kid, secret]) => ({ kid, key: derive(secret) }));
  const signing = all.find((k) => k.kid === config.keyRing.signingKid);
  if (!signing) throw new Error('the key ring has no signing key');
  return { signing: signing.key, all: all.map((k) => k.key) };
}

/** Injection token of the validated configuration. */
export const AUTH_CONFIG = Symbol('AUTH_CONFIG');

/** Variables read by the auth service (the `env-spec` command prints this). */
export function authEnvSpec(): EnvVariableSpec[] {
  return describeEnv(schema, ['JWT_KEYS', 'DATABASE_URL', 'MIGRATION_DATABASE_URL']);
}

import { accessTokenEnvShape, checkAccessTokenEnv, DEFAULT_REVOCATION_MAX_STALENESS_MS, KeyRing, parseKeyRing } from '@invoicing/auth-guard';
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
import { ACCESS_TOKEN_TTL_SECONDS, DomainObjectKind, ownerOfKind, ResourceServiceName, SERVICES, serviceUrlVariable } from '@invoicing/contracts';
import { z } from 'zod';

/**
 * Development ring of the service credentials (ADR 0012): a resource service asks another with a
 * token signed by it. Not JWT_KEYS: the auth service never holds it, and no access token is signed
 * with it. Production refuses it.
 */
export const DEV_SERVICE_TOKEN_KEYS = 'dev-only-services=ZGV2LW9ubHktc2VydmljZS1jcmVkZW50aWFscy1kby1ub3QtdXNlLWluLXByb2R1Y3Rpb24';

/** Smallest REVOCATION_MAX_STALENESS_MS accepted (ADR 0017). */
export const REVOCATION_MAX_STALENESS_MIN_MS = 5000;

/** `client` → `CLIENT_SERVICE_URL` */
export function ownerUrlVariable(kind: DomainObjectKind): string {
  return serviceUrlVariable(ownerOfKind(kind));
}

export interface ResourceServiceIdentity {
  /** e.g. `invoice-service`; its default port is the manifest's (SERVICES). */
  name: ResourceServiceName;
  /** Postgres schema, e.g. `invoices` */
  schema: string;
  /** Role stem: runtime role `<role>_app`, migration role `<role>_owner`, e.g. `invoice` */
  role: string;
  /** Kinds of other services' objects this service references: each needs its owner's URL. */
  references?: DomainObjectKind[];
}

function schemaFor(id: ResourceServiceIdentity) {
  return baseEnvSchema
    .extend({
      PORT: z.coerce.number().int().min(0).max(65535).default(SERVICES[id.name].port),
      ...databaseEnvShape(id.role),
      ...kafkaEnvShape,
      ...trustedProxiesEnvShape,
      ...tracingEnvShape,
      ...requestDeadlineEnvShape,
      /** Upper bound on how long a revocation waits in a Kafka fetch (delivery latency). */
      REVOCATION_FETCH_MAX_WAIT_MS: z.coerce.number().int().min(10).max(5000).default(100),
      /**
       * How long the revocation view may go without a completed Kafka fetch before the instance
       * stops answering ready and answers 503 to valid tokens (ADR 0017). At least 5 s (a request
       * timeout, a consumer's relaunch) and at most the access-token lifetime (beyond it, every
       * token alive when the feed was cut has expired anyway).
       */
      REVOCATION_MAX_STALENESS_MS: z.coerce
        .number()
        .int()
        .min(REVOCATION_MAX_STALENESS_MIN_MS)
        .max(ACCESS_TOKEN_TTL_SECONDS * 1000)
        .default(DEFAULT_REVOCATION_MAX_STALENESS_MS),
      /** Requests per second per API key on this instance (sustained), and the burst allowed. */
      RATE_LIMIT_PER_SECOND: z.coerce.number().positive().default(100),
      RATE_LIMIT_BURST: z.coerce.number().int().min(1).default(200),
      /**
       * Bytes of content one list page may hold, for resources whose rows can be large (a definition's
       * `sizeColumn`): the page stops early, with has_more, once its rows reach this (at least one row).
       * 100 ordinary invoices (a few KB each) still fit; a page is also the longest stretch the event
       * loop spends on one list without a break (parse, view, serialize, write), hence not more.
       */
      LIST_PAGE_MAX_BYTES: z.coerce.number().int().min(1).default(512 * 1024),
      /**
       * List requests of one organization running at once on this instance, and waiting behind them
       * (for that organization's lists only); 429 past both. One at a time by default: with two, one
       * organization's large pages kept the event loop busy all the time and another's small lists
       * waited behind them (figures in libs/resource-api/README.md). Paging is sequential anyway.
       */
      LIST_CONCURRENCY_PER_ORGANIZATION: z.coerce.number().int().min(1).default(1),
      LIST_QUEUE_PER_ORGANIZATION: z.coerce.number().int().min(0).default(16),
      ...accessTokenEnvShape,
      /**
       * `kid=base64url-secret[,kid=secret...]` (each at least 32 bytes): the key ring of the credentials
       * resource services ask each other with (the first kid signs, all verify). The same ring on every
       * resource service, and on no other.
       */
      SERVICE_TOKEN_KEYS: z.string().default(DEV_SERVICE_TOKEN_KEYS),
      ...Object.fromEntries(
        (id.references ?? []).map((kind) => [
          ownerUrlVariable(kind),
          z.string().url().default(`http://127.0.0.1:${SERVICES[ownerOfKind(kind)].port}`),
        ]),
      ),
    })
    .superRefine((env, ctx) => {
      checkAccessTokenEnv(env, ctx);
      try {
        const ring = parseKeyRing(env.SERVICE_TOKEN_KEYS);
        // The credentials must not verify as access tokens, nor access tokens as credentials.
        const accessKeys = new Set([...tryKeyRing(env.JWT_KEYS)].map((k) => k.toString('base64url')));
        if ([...ring.keys.values()].some((k) => accessKeys.has(k.toString('base64url')))) {
          ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['SERVICE_TOKEN_KEYS'], message: 'shares a secret with JWT_KEYS; use secrets of its own' });
        }
      } catch (e) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['SERVICE_TOKEN_KEYS'], message: (e as Error).message });
      }
      if (env.NODE_ENV === 'production' && (env.SERVICE_TOKEN_KEYS === DEV_SERVICE_TOKEN_KEYS || isPlaceholderSecret(env.SERVICE_TOKEN_KEYS))) {
        ctx.addIssue({ code: z.ZodIssueCode.custom, path: ['SERVICE_TOKEN_KEYS'], message: 'holds the development key ring or a placeholder; set real keys in production' });
      }
      // An idle consumer completes a fetch about every REVOCATION_FETCH_MAX_WAIT_MS: a bound of only a
      // few fetches would refuse tokens on an ordinary hiccup.
      if (env.REVOCATION_MAX_STALENESS_MS < 5 * env.REVOCATION_FETCH_MAX_WAIT_MS) {
        ctx.addIssue({
          code: z.ZodIssueCode.custom,
          path: ['REVOCATION_MAX_STALENESS_MS'],
          message: `must be at least 5 x REVOCATION_FETCH_MAX_WAIT_MS (${5 * env.REVOCATION_FETCH_MAX_WAIT_MS})`,
        });
      }
      requireRealSecretsInProduction(env, { DATABASE_URL: env.DATABASE_URL, MIGRATION_DATABASE_URL: env.MIGRATION_DATABASE_URL }, ctx);
    });
}

function tryKeyRing(spec: string): Buffer[] {
  try {
    return [...parseKeyRing(spec).keys.values()];
  } catch {
    return [];
  }
}

export type ResourceConfig = z.infer<ReturnType<typeof schemaFor>> & {
  keys: ReadonlyMap<string, Buffer>;
  /** SERVICE_TOKEN_KEYS, parsed. */
  serviceTokenRing: KeyRing;
  /** Base URL of the owner of each referenced kind. */
  owners: Partial<Record<DomainObjectKind, string>>;
};

/** Validates a resource service's environment once at start (throws ConfigError). */
export function loadResourceConfig(id: ResourceServiceIdentity, env: NodeJS.ProcessEnv = process.env): ResourceConfig {
  const parsed = loadConfig(schemaFor(id), env);
  const owners = Object.fromEntries(
    (id.references ?? []).map((kind) => [kind, (parsed as Record<string, unknown>)[ownerUrlVariable(kind)] as string]),
  );
  return { ...parsed, keys: parseKeyRing(parsed.JWT_KEYS, parsed.JWT_SIGNING_KID).keys, serviceTokenRing: parseKeyRing(parsed.SERVICE_TOKEN_KEYS), owners };
}

/** Variables read by a resource service (the `env-spec` command prints this). */
export function resourceEnvSpec(id: ResourceServiceIdentity): EnvVariableSpec[] {
  return describeEnv(schemaFor(id), ['JWT_KEYS', 'SERVICE_TOKEN_KEYS', 'DATABASE_URL', 'MIGRATION_DATABASE_URL']);
}

import { GATEWAY_PORT, SERVICES, ServiceName, serviceUrlVariable } from '@invoicing/contracts';
import { baseEnvSchema, describeEnv, EnvVariableSpec, loadConfig } from '@invoicing/service-kit';
import { z } from 'zod';

const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];

/**
 * An origin only: the gateway forwards the path unchanged, so a path in the upstream URL would be
 * silently ignored by the proxy; refusing it at start is kinder than a puzzling 404 later.
 */
const upstreamUrl = (defaultPort: number) =>
  z
    .string()
    .url()
    .default(`http://127.0.0.1:${defaultPort}`)
    .refine((value) => {
      // zod still runs refinements after `.url()` reported a problem: parse defensively.
      const url = URL.canParse(value) ? new URL(value) : undefined;
      return !!url && (url.protocol === 'http:' || url.protocol === 'https:') && (url.pathname === '/' || url.pathname === '');
    }, 'expected an http(s) origin such as http://auth-service:3001 (no path)');

// Derived from the platform table, so a service added to SERVICES gets its variable without an edit here.
const upstreamShape = Object.fromEntries(
  SERVICE_NAMES.map((name) => [serviceUrlVariable(name), upstreamUrl(SERVICES[name].port)]),
) as Record<string, ReturnType<typeof upstreamUrl>>;

const schema = baseEnvSchema.extend({
  PORT: z.coerce.number().int().min(0).max(65535).default(GATEWAY_PORT),
  /**
   * Longest wait for an upstream's response headers (and between body chunks) before answering 504.
   * Generous: the services answer in milliseconds, and a slow one is better reported than hidden.
   */
  UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600000).default(30000),
  ...upstreamShape,
});

type GatewayEnv = z.infer<typeof schema>;

export interface GatewayConfig {
  NODE_ENV: GatewayEnv['NODE_ENV'];
  HOST: string;
  PORT: number;
  LOG_LEVEL: GatewayEnv['LOG_LEVEL'];
  SHUTDOWN_GRACE_SECONDS: number;
  UPSTREAM_TIMEOUT_MS: number;
  /** Base URL (origin) of each service, from `<SERVICE>_URL`. */
  upstreams: Record<ServiceName, string>;
}

/** Validates the gateway's environment once at start (throws ConfigError naming each bad variable). */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  const parsed = loadConfig(schema, env) as GatewayEnv & Record<string, string>;
  const upstreams = Object.fromEntries(
    SERVICE_NAMES.map((name) => [name, parsed[serviceUrlVariable(name)].replace(/\/$/, '')]),
  ) as Record<ServiceName, string>;
  return {
    NODE_ENV: parsed.NODE_ENV,
    HOST: parsed.HOST,
    PORT: parsed.PORT,
    LOG_LEVEL: parsed.LOG_LEVEL,
    SHUTDOWN_GRACE_SECONDS: parsed.SHUTDOWN_GRACE_SECONDS,
    UPSTREAM_TIMEOUT_MS: parsed.UPSTREAM_TIMEOUT_MS,
    upstreams,
  };
}

/** Variables read by the gateway (the `env-spec` command prints this). It holds no secret. */
export function gatewayEnvSpec(): EnvVariableSpec[] {
  return describeEnv(schema, []);
}

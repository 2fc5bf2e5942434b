import { GATEWAY_PORT, SERVICES, ServiceName, serviceUrlVariable } from '@invoicing/contracts';
import { baseEnvSchema, describeEnv, EnvVariableSpec, loadConfig } from '@invoicing/service-kit';
import { isIP } from 'node:net';
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

/** The metrics port when METRICS_PORT is unset: beside the public one (9080 for 8080); none beside an ephemeral one. */
export function defaultMetricsPort(port: number): number {
  return port === 0 ? 0 : port + 1000;
}

const schema = baseEnvSchema
  .extend({
    PORT: z.coerce.number().int().min(0).max(65535).default(GATEWAY_PORT),
    /**
     * Port of the listener that serves `/metrics` (Prometheus), on HOST; 0: no listener. Never the
     * public port: its callers must not read the tenants' traffic counts or the Node version.
     */
    METRICS_PORT: z.coerce.number().int().min(0).max(65535).optional(),
    /**
     * Longest wait for an upstream's response headers (and between body chunks) before answering 504.
     * Generous: the services answer in milliseconds, and a slow one is better reported than hidden.
     */
    UPSTREAM_TIMEOUT_MS: z.coerce.number().int().min(100).max(600000).default(30000),
    /**
     * Local address the upstream connections are opened from (unset: the system's choice). The
     * services believe X-Forwarded-For from their TRUSTED_PROXIES only; locally that is 127.0.0.2,
     * this address, so a process calling a service on 127.0.0.1 cannot claim another client address.
     */
    UPSTREAM_SOURCE_ADDRESS: z
      .string()
      .refine((value) => isIP(value) !== 0, 'expected an IP address such as 127.0.0.2')
      .optional(),
    ...upstreamShape,
  })
  .superRefine((env, ctx) => {
    const metricsPort = env.METRICS_PORT ?? defaultMetricsPort(env.PORT);
    if (metricsPort > 65535) {
      ctx.addIssue({ code: 'custom', path: ['METRICS_PORT'], message: 'PORT + 1000 is no port: set METRICS_PORT (0 for none)' });
    } else if (metricsPort !== 0 && metricsPort === env.PORT) {
      ctx.addIssue({ code: 'custom', path: ['METRICS_PORT'], message: 'must differ from PORT: metrics are never served on the public port' });
    }
  });

type GatewayEnv = z.infer<typeof schema>;

export interface GatewayConfig {
  NODE_ENV: GatewayEnv['NODE_ENV'];
  HOST: string;
  PORT: number;
  LOG_LEVEL: GatewayEnv['LOG_LEVEL'];
  SHUTDOWN_GRACE_SECONDS: number;
  /** Port of the metrics listener; 0: none. */
  METRICS_PORT: number;
  UPSTREAM_TIMEOUT_MS: number;
  /** Local address of the upstream connections; undefined: the system's choice. */
  UPSTREAM_SOURCE_ADDRESS?: string;
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
    METRICS_PORT: parsed.METRICS_PORT ?? defaultMetricsPort(parsed.PORT),
    LOG_LEVEL: parsed.LOG_LEVEL,
    SHUTDOWN_GRACE_SECONDS: parsed.SHUTDOWN_GRACE_SECONDS,
    UPSTREAM_TIMEOUT_MS: parsed.UPSTREAM_TIMEOUT_MS,
    UPSTREAM_SOURCE_ADDRESS: parsed.UPSTREAM_SOURCE_ADDRESS,
    upstreams,
  };
}

/** Variables read by the gateway (the `env-spec` command prints this). It holds no secret. */
export function gatewayEnvSpec(): EnvVariableSpec[] {
  return describeEnv(schema, []);
}

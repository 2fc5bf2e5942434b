import { RESOURCE_MANIFEST, RESOURCES, SERVICES, ServiceName, serviceOfResource, serviceUrlVariable } from '@invoicing/contracts';
import { execFileSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';

export const ROOT = resolve(__dirname, '../../..');

/** One variable a service reads, as its `env-spec` command prints it. */
export interface EnvVariable {
  name: string;
  required: boolean;
  secret: boolean;
}

/**
 * The services of the platform table that exist in this checkout. Others are being written: the
 * deploy material covers a service from the moment its app lands (and these tests then demand it).
 */
export function landedServices(): ServiceName[] {
  return (Object.keys(SERVICES) as ServiceName[]).filter((name) => existsSync(join(ROOT, 'apps', name, 'project.json')));
}

export function mainOf(app: string): string {
  return join(ROOT, 'dist/apps', app, 'apps', app, 'src/main.js');
}

const specCache = new Map<string, EnvVariable[]>();

/** The variables an app reads, from its built `main.js env-spec` (the project's test target builds it). */
export function envSpecOf(app: string): EnvVariable[] {
  const cached = specCache.get(app);
  if (cached) return cached;
  const main = mainOf(app);
  if (!existsSync(main)) throw new Error(`${main} is missing: build it first (npx nx run ${app}:build)`);
  const spec = JSON.parse(execFileSync(process.execPath, [main, 'env-spec'], { cwd: ROOT, encoding: 'utf8', env: {} })) as EnvVariable[];
  specCache.set(app, spec);
  return spec;
}

/** Runs another command of a built app with exactly the given environment and parses its JSON output. */
export function runJsonCommand<T>(app: string, command: string, env: Record<string, string>): T {
  return JSON.parse(execFileSync(process.execPath, [mainOf(app), command], { cwd: ROOT, encoding: 'utf8', env })) as T;
}

/** The variable that points a service at another service of the table, e.g. `CLIENT_SERVICE_URL`. */
export const peerVariable = serviceUrlVariable;

/**
 * What a service talks to, derived from the variables it reads: the infrastructure of contract
 * section 1, and the other services it calls directly (reference checks) through `<SERVICE>_URL`.
 */
export function dependenciesOf(spec: readonly EnvVariable[]): {
  postgres: boolean;
  migrations: boolean;
  redis: boolean;
  kafka: boolean;
  peers: ServiceName[];
} {
  const names = new Set(spec.map((v) => v.name));
  return {
    postgres: names.has('DATABASE_URL'),
    migrations: names.has('MIGRATION_DATABASE_URL'),
    redis: names.has('REDIS_URL'),
    kafka: names.has('KAFKA_BROKERS'),
    peers: (Object.keys(SERVICES) as ServiceName[]).filter((name) => names.has(peerVariable(name))),
  };
}

/**
 * Variables that locate something over the network. Their development defaults point at loopback,
 * which means nothing inside a container, so compose and Kubernetes must set every one of them.
 */
export function connectionVariables(spec: readonly EnvVariable[]): string[] {
  return spec.map((v) => v.name).filter((n) => /(_URL|_BROKERS)$/.test(n));
}

/** Port of each kind of infrastructure, as the NetworkPolicies open them. */
export const INFRA_PORTS = { postgres: 5432, redis: 6379, kafka: 9092 } as const;

/** Role stem and schema of the services with a database that serve no resource (their apps name them too). */
const OWN_DATABASES: Partial<Record<ServiceName, { stem: string; schema: string }>> = {
  'auth-service': { stem: 'auth', schema: 'auth' },
  'webhook-service': { stem: 'webhook', schema: 'webhooks' },
};

/**
 * The database of a service, as bootstrap.sql's `services` list names it (role stem, schema): a
 * resource service's kind and plural, the others' their own; none for the page.
 */
export function databaseOf(service: ServiceName): { stem: string; schema: string } | undefined {
  const resource = RESOURCES.find((r) => serviceOfResource(r) === service);
  return resource ? { stem: RESOURCE_MANIFEST[resource].kind, schema: resource } : OWN_DATABASES[service];
}

/** Ports a service sends to on the internet: the webhook service's deliveries (HTTPS, and HTTP), none for the others. */
export function internetPortsOf(service: ServiceName): number[] {
  return SERVICES[service].kind === 'webhook' ? [80, 443] : [];
}

/**
 * Where a pod sending to the internet must never reach: the private (RFC 1918, RFC 4193), shared
 * (RFC 6598), link-local (cloud metadata services) and loopback ranges, where the cluster's pods,
 * Services, nodes and data stores live. The `except` lists of its NetworkPolicy's ipBlocks.
 */
export const NON_PUBLIC_RANGES = {
  '0.0.0.0/0': ['10.0.0.0/8', '172.16.0.0/12', '192.168.0.0/16', '169.254.0.0/16', '100.64.0.0/10', '127.0.0.0/8'],
  '::/0': ['fc00::/7', 'fe80::/10', '::1/128'],
} as const;

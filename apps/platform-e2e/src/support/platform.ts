import { SERVICES, ServiceName as PlatformService, serviceUrlVariable } from '@invoicing/contracts';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { ALL_SERVICES } from './ports';
import { kafka, runCommand, ServiceName, ServiceProcess, startService } from './processes';

const run = promisify(execFile);

/**
 * Where the end-to-end specs find the platform.
 *
 * - By default each spec starts the built services as processes on its own ports (processes.ts),
 *   after the migrations, against the machine's Postgres, Redis and Kafka (tools/infra).
 * - With `E2E_BASE_URL`, the platform is a stack that already runs (docker compose, podman kube play,
 *   a dev cluster): nothing is started or migrated, every request goes to that base URL (the
 *   gateway), as an integration would send it. What a spec needs beyond HTTP comes from variables:
 *     E2E_AUTH_CLI       the auth service's command line, to create keys (required), e.g.
 *                        `podman exec invoicing_auth-service_1 node dist/main.js`
 *     E2E_KAFKA_BROKERS  a broker address the tests can reach, to read the revocation topic
 *                        (default 127.0.0.1:9092)
 *     E2E_KAFKA_CTL      a command taking `stop` or `start` that stops or starts the stack's broker
 *                        (optional: without it the Kafka outage test is skipped)
 *   Tests that start processes of their own (a second service instance) run in the local mode only.
 *   tools/compose/up.sh prints these variables for the compose stack.
 */
export interface Stack {
  external: boolean;
  /** The running stack's base URL, when external. */
  baseUrl?: string;
  authCli: string[];
  kafkaBrokers: string;
  kafkaCtl?: string[];
}

function words(value: string | undefined): string[] {
  return (value ?? '').split(/\s+/).filter((w) => w !== '');
}

export const STACK: Stack = (() => {
  const baseUrl = process.env.E2E_BASE_URL?.trim().replace(/\/+$/, '') || undefined;
  const authCli = words(process.env.E2E_AUTH_CLI);
  if (baseUrl && authCli.length === 0) throw new Error('E2E_BASE_URL is set: E2E_AUTH_CLI must give the auth service command line (see support/platform.ts)');
  const kafkaCtl = words(process.env.E2E_KAFKA_CTL);
  return {
    external: baseUrl !== undefined,
    baseUrl,
    authCli,
    kafkaBrokers: process.env.E2E_KAFKA_BROKERS?.trim() || '127.0.0.1:9092',
    kafkaCtl: baseUrl ? (kafkaCtl.length > 0 ? kafkaCtl : undefined) : undefined,
  };
})();

/** The `<SERVICE>_URL` variables pointing at loopback ports (the gateway has none: nothing calls it). */
export function loopbackUrls(ports: Partial<Record<ServiceName, number>>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(ports)
      .filter(([name]) => name !== 'gateway')
      .map(([name, port]) => [serviceUrlVariable(name as PlatformService), `http://127.0.0.1:${port}`]),
  );
}

export interface Platform {
  /** The gateway: the platform's one base URL. */
  readonly baseUrl: string;
  /** Where a service answers: its own port when started here, the gateway for a running stack. */
  url(service: ServiceName): string;
  stop(): Promise<void>;
}

/** The services whose `migrate` command creates their schema: every one but the settings page. */
const WITH_MIGRATIONS: readonly ServiceName[] = ALL_SERVICES.filter((s) => SERVICES[s].kind !== 'web');

/**
 * The platform for one spec: the services of `ports` (or only those in `start`) as processes, each
 * given every `<SERVICE>_URL` of `ports` and `env`; or the running stack when E2E_BASE_URL is set.
 */
export async function startPlatform(options: {
  label: string;
  ports: Partial<Record<ServiceName, number>> & { gateway: number };
  start?: ServiceName[];
  env?: Record<string, string>;
}): Promise<Platform> {
  if (STACK.baseUrl) {
    const baseUrl = STACK.baseUrl;
    const ready = await fetch(`${baseUrl}/health/ready`).catch((error: Error) => error);
    if (ready instanceof Error || ready.status !== 200) {
      throw new Error(`E2E_BASE_URL=${baseUrl}: the gateway is not ready (${ready instanceof Error ? ready.message : `status ${ready.status}`})`);
    }
    return { baseUrl, url: () => baseUrl, stop: async () => undefined };
  }
  const names = options.start ?? (Object.keys(options.ports) as ServiceName[]);
  await kafka('start');
  for (const name of names) if (name !== 'gateway' && WITH_MIGRATIONS.includes(name)) await runCommand(name, ['migrate']);
  const env = { ...loopbackUrls(options.ports), ...options.env };
  const processes: ServiceProcess[] = [];
  const stop = () => Promise.all(processes.map((p) => p.stop())).then(() => undefined);
  try {
    // One by one, so that a process that cannot start (nginx missing) stops those started before it:
    // left running, they would answer the next spec's requests on the same ports.
    for (const name of names) processes.push(startService(name, options.ports[name] as number, `${name}-${options.label}`, env));
    await Promise.all(processes.map((p) => p.waitReady(90000)));
  } catch (error) {
    await stop();
    throw error;
  }
  const byName = new Map(names.map((name, i) => [name, processes[i]]));
  return {
    baseUrl: `http://127.0.0.1:${options.ports.gateway}`,
    url: (service) => {
      const process = byName.get(service);
      if (!process) throw new Error(`${service} is not started by this spec`);
      return process.baseUrl;
    },
    stop,
  };
}

export interface CreatedKey {
  id: string;
  organization_id: string;
  client_id: string;
  client_secret: string;
}

/** A new organization with one API key, made by the auth service's `create-key` command. */
export async function createKey(organizationName: string, name: string, scopes: string): Promise<CreatedKey> {
  const args = ['create-key', '--organization-name', organizationName, '--name', name, '--scopes', scopes];
  if (!STACK.external) return JSON.parse(await runCommand('auth-service', args)) as CreatedKey;
  const [command, ...prefix] = STACK.authCli;
  const { stdout } = await run(command, [...prefix, ...args], { timeout: 60000 });
  return JSON.parse(stdout) as CreatedKey;
}

/** Stops or starts the platform's Kafka broker (tools/infra here, E2E_KAFKA_CTL for a running stack). */
export async function kafkaBroker(action: 'stop' | 'start'): Promise<void> {
  if (!STACK.external) return kafka(action);
  if (!STACK.kafkaCtl) throw new Error('E2E_KAFKA_CTL is not set');
  const [command, ...prefix] = STACK.kafkaCtl;
  await run(command, [...prefix, action], { timeout: 180000 });
}

/**
 * `it`, or `it.skip` when the stack cannot do what the test needs; the reason is printed once, so a
 * skipped test is visible in the run's output as well as in Jest's count.
 */
export function itWhen(possible: boolean, reason: string): jest.It {
  if (possible) return it;
  console.log(`e2e: skipped against ${STACK.baseUrl}: ${reason}`);
  return it.skip;
}

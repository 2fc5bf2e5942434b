import { SERVICES, ServiceName as PlatformService, serviceUrlVariable } from '@invoicing/contracts';
import { spawnNginx } from '@invoicing/gateway';
import { ChildProcess, execFile, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { createWriteStream, mkdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { promisify } from 'node:util';
import { ALL_SERVICES } from './ports';

export const ROOT = resolve(__dirname, '../../../..');
const LOGS = join(ROOT, 'tmp', 'e2e-logs');
const run = promisify(execFile);

/** The platform's processes: its apps (SERVICES), and the gateway (nginx with the rendered configuration). */
export type ServiceName = PlatformService | 'gateway';
const MAINS = Object.fromEntries(ALL_SERVICES.map((app) => [app, join(ROOT, `dist/apps/${app}/apps/${app}/src/main.js`)])) as Record<
  Exclude<ServiceName, 'gateway'>,
  string
>;

/**
 * Shared by every process of one test run: its own Redis namespace, the quiet log level, and the
 * local stack's proxy rule: the gateway connects from 127.0.0.2, the only address whose
 * X-Forwarded-For the services believe (as tools/stack/start.sh sets them).
 */
export const RUN_ENV = {
  NODE_ENV: 'test',
  LOG_LEVEL: 'warn',
  UPSTREAM_SOURCE_ADDRESS: '127.0.0.2',
  TRUSTED_PROXIES: '127.0.0.2',
  REDIS_KEY_PREFIX: `e2e:${randomUUID().slice(0, 8)}:`,
};

export class ServiceProcess {
  private exited = false;

  constructor(
    readonly name: string,
    readonly baseUrl: string,
    private readonly child: ChildProcess,
  ) {
    child.once('exit', () => {
      this.exited = true;
    });
  }

  /** False once the process has exited (a trial's diagnostics say so). */
  get running(): boolean {
    return !this.exited;
  }

  /** Polls /health/ready until 200. */
  async waitReady(timeoutMs = 60000): Promise<number> {
    const started = Date.now();
    for (;;) {
      if (this.exited) throw new Error(`${this.name} exited before it was ready (see tmp/e2e-logs)`);
      try {
        const r = await fetch(`${this.baseUrl}/health/ready`);
        if (r.status === 200) return Date.now() - started;
      } catch {
        // not listening yet
      }
      if (Date.now() - started > timeoutMs) throw new Error(`${this.name} not ready after ${timeoutMs} ms`);
      await sleep(50);
    }
  }

  /** The process id (for its memory in /proc). */
  get pid(): number {
    return this.child.pid ?? 0;
  }

  /** `kill -9`: no drain, no shutdown hooks; resolves once the process is gone. */
  async kill(): Promise<void> {
    if (this.exited) return;
    const done = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGKILL');
    await done;
  }

  async stop(): Promise<void> {
    if (this.exited) return;
    const done = new Promise((r) => this.child.once('exit', r));
    this.child.kill('SIGTERM');
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([done, new Promise((r) => (timer = setTimeout(r, 15000)))]);
    clearTimeout(timer);
    if (!this.exited) this.child.kill('SIGKILL');
  }
}

/**
 * Starts a built service (`node dist/.../main.js serve`) on a port, logging to tmp/e2e-logs. The
 * gateway is Debian's nginx with the configuration libs/gateway renders, its upstreams taken from the
 * `<SERVICE>_URL` variables of `env` (a service without one: a closed port, answered 503), connecting
 * from UPSTREAM_SOURCE_ADDRESS as the local stack's does.
 */
export function startService(service: ServiceName, port: number, label: string = service, env: Record<string, string> = {}): ServiceProcess {
  mkdirSync(LOGS, { recursive: true });
  const log = createWriteStream(join(LOGS, `${label}.log`), { flags: 'a' });
  if (service === 'gateway') {
    const upstreams = Object.fromEntries(
      (Object.keys(SERVICES) as PlatformService[]).map((name) => [name, env[serviceUrlVariable(name)] ? new URL(env[serviceUrlVariable(name)]).host : '127.0.0.1:1']),
    ) as Record<PlatformService, string>;
    const child = spawnNginx(join(ROOT, 'tmp', 'e2e-gateway', label), {
      upstreams,
      listen: `127.0.0.1:${port}`,
      proxyBind: RUN_ENV.UPSTREAM_SOURCE_ADDRESS,
      // Every request sampled: the tracing spec asserts the spans of the requests it sends.
      traceSamplePercent: 100,
      accessLog: join(LOGS, `${label}.access.log`),
    });
    child.stdout?.pipe(log);
    child.stderr?.pipe(log);
    return new ServiceProcess(label, `http://127.0.0.1:${port}`, child);
  }
  const child = spawn(process.execPath, [MAINS[service], 'serve'], {
    cwd: ROOT,
    env: { ...process.env, ...RUN_ENV, PORT: String(port), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  child.stdout?.pipe(log);
  child.stderr?.pipe(log);
  return new ServiceProcess(label, `http://127.0.0.1:${port}`, child);
}

/** Runs a one-shot command of a built service (`migrate`, `create-key ...`) and returns stdout. */
export async function runCommand(service: Exclude<ServiceName, 'gateway'>, args: string[]): Promise<string> {
  const { stdout } = await run(process.execPath, [MAINS[service], ...args], {
    cwd: ROOT,
    env: { ...process.env, ...RUN_ENV },
  });
  return stdout;
}

/** `tools/infra/kafka.sh stop|start`: the real broker goes down and comes back with its data. */
export async function kafka(action: 'stop' | 'start'): Promise<void> {
  await run('bash', [join(ROOT, 'tools/infra/kafka.sh'), action], { cwd: ROOT, timeout: 120000 });
}

export function sleep(ms: number): Promise<void> {
  return new Promise((r) => setTimeout(r, ms));
}

import { ChildProcess, spawn } from 'node:child_process';
import { createWriteStream, mkdirSync } from 'node:fs';
import { dirname } from 'node:path';

export interface Started {
  child: ChildProcess;
  /** The JSON after `READY ` on the child's stdout, for scripts that print one. */
  info: Record<string, unknown>;
  stop(): Promise<void>;
}

const running = new Set<ChildProcess>();

/**
 * Runs a benchmark's main: exit 0 when it ends, or print the failure, stop what it started and exit 1.
 */
export function runBench(main: () => Promise<void>): void {
  main().then(
    () => process.exit(0),
    async (e: unknown) => {
      process.stderr.write(`bench: ${e instanceof Error ? e.message : String(e)}\n`);
      await stopAll();
      process.exit(1);
    },
  );
}

/** Stops whatever the benchmark started, also when it fails half-way. */
export async function stopAll(): Promise<void> {
  await Promise.all([...running].map((c) => terminate(c)));
}

function terminate(child: ChildProcess): Promise<void> {
  running.delete(child);
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
    child.once('exit', () => {
      clearTimeout(kill);
      resolve();
    });
    child.kill('SIGTERM');
  });
}

/**
 * Starts a process and waits until it is ready: a `READY {json}` line on stdout, or (with
 * `readyUrl`) an HTTP 200 from that URL. Output goes to `logFile`.
 */
export async function startProcess(
  command: string,
  args: string[],
  options: { env?: Record<string, string>; logFile: string; readyUrl?: string; timeoutMs?: number },
): Promise<Started> {
  mkdirSync(dirname(options.logFile), { recursive: true });
  const log = createWriteStream(options.logFile, { flags: 'a' });
  const child = spawn(command, args, { env: { ...process.env, ...options.env }, stdio: ['ignore', 'pipe', 'pipe'] });
  running.add(child);
  child.stderr!.pipe(log);
  const timeoutMs = options.timeoutMs ?? 120_000;
  const info = await new Promise<Record<string, unknown>>((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`${command} ${args.join(' ')} was not ready within ${timeoutMs} ms (log: ${options.logFile})`)), timeoutMs);
    const done = (value: Record<string, unknown>) => {
      clearTimeout(timer);
      resolve(value);
    };
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`${command} ${args.join(' ')} exited with ${code} before it was ready (log: ${options.logFile})`));
    });
    let buffered = '';
    child.stdout!.on('data', (chunk: Buffer) => {
      log.write(chunk);
      if (options.readyUrl) return;
      buffered += chunk.toString('utf8');
      const line = buffered.split('\n').find((l) => l.startsWith('READY '));
      if (line) done(JSON.parse(line.slice('READY '.length)) as Record<string, unknown>);
    });
    if (options.readyUrl) {
      const url = options.readyUrl;
      const poll = async () => {
        try {
          if ((await fetch(url)).status === 200) return done({});
        } catch {
          // not listening yet
        }
        if (child.exitCode === null) setTimeout(() => void poll(), 250);
      };
      void poll();
    }
  });
  return { child, info, stop: () => terminate(child) };
}

/** Resident memory of a process in MB (Linux), now or (`peak`) its highest so far; null when it is gone. */
export async function rssMb(pid: number, peak = false): Promise<number | null> {
  const { readFile } = await import('node:fs/promises');
  try {
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = Number((peak ? /VmHWM:\s+(\d+)/ : /VmRSS:\s+(\d+)/).exec(status)?.[1]);
    return Number.isFinite(kb) ? kb / 1024 : null;
  } catch {
    return null;
  }
}

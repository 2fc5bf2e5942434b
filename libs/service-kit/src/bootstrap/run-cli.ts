import { ConfigError } from '../config/env';

/** What a command returns: its exit status, or SERVING for `serve`, whose process runs on. */
export const SERVING = Symbol('serving');
export type CliCommand = (args: string[]) => Promise<number | typeof SERVING>;

/**
 * The whole tail of every app's `main.ts`: the first argument names the command (`serve` when there
 * is none), the rest is its arguments. An unknown command exits 2 naming the known ones; a command
 * that throws exits 1 with one line on stderr, prefixed with the service's name (a ConfigError's
 * message alone: it names the variable and the problem, never the value).
 */
export function runCli(service: string, commands: Record<string, CliCommand>, argv: string[] = process.argv.slice(2)): void {
  const [name = 'serve', ...args] = argv;
  const command = Object.hasOwn(commands, name) ? commands[name] : undefined;
  if (!command) {
    process.stderr.write(`unknown command "${name}"; use ${Object.keys(commands).join(', ')}\n`);
    process.exit(2);
    return;
  }
  // Through a promise, so that a command throwing before its first await is reported the same way.
  Promise.resolve(args)
    .then(command)
    .then(
      (status) => {
        if (status !== SERVING) process.exit(status);
      },
      (e: unknown) => {
        const text = e instanceof ConfigError ? e.message : e instanceof Error ? (e.stack ?? e.message) : String(e);
        process.stderr.write(`${service}: ${text}\n`);
        process.exit(1);
      },
    );
}

/** The `env-spec` command: the variables the service reads, as one line of JSON. */
export function printJson(value: unknown): Promise<number> {
  process.stdout.write(`${JSON.stringify(value)}\n`);
  return Promise.resolve(0);
}

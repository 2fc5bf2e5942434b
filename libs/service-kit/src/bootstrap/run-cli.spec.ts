import { ConfigError } from '../config/env';
import { printJson, runCli, SERVING } from './run-cli';

/** runCli ends the process; the spec records what it would have done instead. */
function capture(): { exits: number[]; stderr: string[]; stdout: string[]; restore(): void } {
  const out = { exits: [] as number[], stderr: [] as string[], stdout: [] as string[] };
  const exit = jest.spyOn(process, 'exit').mockImplementation(((code?: number) => {
    out.exits.push(code ?? 0);
    return undefined as never;
  }) as typeof process.exit);
  const err = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => (out.stderr.push(String(chunk)), true));
  const std = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => (out.stdout.push(String(chunk)), true));
  return { ...out, restore: () => [exit, err, std].forEach((s) => s.mockRestore()) };
}
const settle = () => new Promise((r) => setImmediate(r));

describe('runCli', () => {
  it('runs serve when no command is given, and lets the process run on', async () => {
    const io = capture();
    const serve = jest.fn(async (): Promise<typeof SERVING> => SERVING);
    runCli('svc', { serve, other: async () => 0 }, []);
    await settle();
    io.restore();
    expect(serve).toHaveBeenCalledWith([]);
    expect(io.exits).toEqual([]);
  });

  it("passes the command's arguments and exits with its status; env-spec prints one JSON line", async () => {
    const io = capture();
    runCli('svc', { 'env-spec': () => printJson([{ name: 'PORT' }]) }, ['env-spec']);
    const seen: string[][] = [];
    runCli('svc', { 'create-key': async (args) => (seen.push(args), 3) }, ['create-key', '--name', 'x']);
    await settle();
    io.restore();
    expect(io.stdout).toEqual(['[{"name":"PORT"}]\n']);
    expect(seen).toEqual([['--name', 'x']]);
    expect(io.exits).toEqual([0, 3]);
  });

  it('exits 2 on an unknown command, naming the known ones', async () => {
    const io = capture();
    runCli('svc', { serve: async () => SERVING, migrate: async () => 0 }, ['nope']);
    await settle();
    io.restore();
    expect(io.exits).toEqual([2]);
    expect(io.stderr.join('')).toBe('unknown command "nope"; use serve, migrate\n');
  });

  it('exits 1 with one line naming the service, thrown synchronously or not; a ConfigError without its stack', async () => {
    const io = capture();
    runCli('svc', { routes: () => { throw new ConfigError(['PORT: expected a number']); } }, ['routes']);
    runCli('svc', { serve: async () => { throw new Error('boom'); } }, []);
    await settle();
    io.restore();
    expect(io.exits).toEqual([1, 1]);
    expect(io.stderr[0]).toBe('svc: Invalid configuration:\n  - PORT: expected a number\n');
    expect(io.stderr[1]).toMatch(/^svc: Error: boom\n {4}at /);
  });
});

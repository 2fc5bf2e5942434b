import type { AuthConfig } from './config/config';
import { createKeyCommand } from './create-key.command';

/** The arguments are checked before anything connects: these calls need no database. */
const config = {} as AuthConfig;

/** Runs the command with `argv`, its stdout and stderr captured. */
async function run(argv: string[]): Promise<{ status: number; out: string; err: string }> {
  let out = '';
  let err = '';
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true));
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true));
  try {
    return { status: await createKeyCommand(config, argv), out, err };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

describe('create-key', () => {
  it('prints its help on --help and -h, on stdout, and exits 0', async () => {
    for (const flag of ['--help', '-h']) {
      const { status, out, err } = await run([flag]);
      expect(status).toBe(0);
      expect(out).toMatch(/^usage: auth-service create-key --name NAME/);
      expect(out).toContain('--organization-id ID');
      expect(err).toBe('');
    }
  });

  it('names an unknown option and shows the usage, exit 2, without a stack trace', async () => {
    const { status, err } = await run(['--organisation-name', 'Acme']);
    expect(status).toBe(2);
    expect(err).toContain("Unknown option '--organisation-name'");
    expect(err).toContain('usage: auth-service create-key');
    expect(err).not.toMatch(/\n\s+at /);
  });

  it('shows the usage, exit 2, when a required option is missing', async () => {
    const { status, err } = await run(['--name', 'ERP']);
    expect(status).toBe(2);
    expect(err).toMatch(/^usage: auth-service create-key/);
  });
});

import type { AuthConfig } from './config/config';
import { createKeyCommand } from './create-key.command';

/** The arguments are checked before anything connects: these calls need no database. */
const config = {} as AuthConfig;

function captured(): { out: () => string; err: () => string; restore: () => void } {
  let out = '';
  let err = '';
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((chunk) => ((out += String(chunk)), true));
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk) => ((err += String(chunk)), true));
  return { out: () => out, err: () => err, restore: () => (stdout.mockRestore(), stderr.mockRestore()) };
}

describe('create-key', () => {
  it('prints its help on --help and -h, on stdout, and exits 0', async () => {
    for (const flag of ['--help', '-h']) {
      const io = captured();
      try {
        expect(await createKeyCommand(config, [flag])).toBe(0);
        expect(io.out()).toMatch(/^usage: auth-service create-key --name NAME/);
        expect(io.out()).toContain('--organization-id ID');
        expect(io.err()).toBe('');
      } finally {
        io.restore();
      }
    }
  });

  it('names an unknown option and shows the usage, exit 2, without a stack trace', async () => {
    const io = captured();
    try {
      expect(await createKeyCommand(config, ['--organisation-name', 'Acme'])).toBe(2);
      expect(io.err()).toContain("Unknown option '--organisation-name'");
      expect(io.err()).toContain('usage: auth-service create-key');
      expect(io.err()).not.toMatch(/\n\s+at /);
    } finally {
      io.restore();
    }
  });

  it('shows the usage, exit 2, when a required option is missing', async () => {
    const io = captured();
    try {
      expect(await createKeyCommand(config, ['--name', 'ERP'])).toBe(2);
      expect(io.err()).toMatch(/^usage: auth-service create-key/);
    } finally {
      io.restore();
    }
  });
});

import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { buildOpenApiDocument } from './openapi-document';

/** Output of `redocly lint --format=json`. */
interface LintReport {
  totals: { errors: number; warnings: number; ignored: number };
  problems: Array<{ ruleId: string; severity: string; message: string; location: Array<{ pointer: string }> }>;
}

const LIB_ROOT = join(__dirname, '..', '..');
const REDOCLY_BIN = join(dirname(require.resolve('@redocly/cli/package.json')), 'bin', 'cli.js');

describe('OpenAPI document, Redocly lint', () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'openapi-lint-'));
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('passes `redocly lint` (recommended-strict, see libs/contracts/redocly.yaml) with no errors or warnings', () => {
    // The served document's server is the configured issuer (JWT_ISSUER), a public https URL in
    // production; a localhost URL here would only trip no-server-example.com.
    const doc = buildOpenApiDocument({ serverUrl: 'https://api.invoicing.test' });
    writeFileSync(join(dir, 'openapi.json'), JSON.stringify(doc, null, 2));
    // The config and its ignore file sit next to the document, as redocly resolves the ignore file's
    // keys relative to the config's folder.
    copyFileSync(join(LIB_ROOT, 'redocly.yaml'), join(dir, 'redocly.yaml'));
    copyFileSync(join(LIB_ROOT, '.redocly.lint-ignore.yaml'), join(dir, '.redocly.lint-ignore.yaml'));

    // The CLI from node_modules (what `npx redocly` runs), on this Node, without any network lookup.
    const run = spawnSync(process.execPath, [REDOCLY_BIN, 'lint', 'openapi.json', '--config=redocly.yaml', '--format=json'], {
      cwd: dir,
      encoding: 'utf8',
      timeout: 60_000,
      env: { ...process.env, REDOCLY_TELEMETRY: 'off', REDOCLY_SUPPRESS_UPDATE_NOTICE: 'true', REDOCLY_SUPPRESS_NOTIFICATIONS: 'true', NO_COLOR: '1' },
    });
    expect(run.error).toBeUndefined();
    const json = run.stdout.slice(run.stdout.indexOf('{'));
    const report = JSON.parse(json) as LintReport;
    const problems = report.problems.map((p) => `${p.severity} ${p.ruleId} ${p.location[0]?.pointer}: ${p.message}`);
    expect(problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
    // Only the two operations recorded in .redocly.lint-ignore.yaml are exempted.
    expect(report.totals.ignored).toBe(2);
    expect({ status: run.status, stderr: run.status === 0 ? '' : run.stderr }).toEqual({ status: 0, stderr: '' });
  });
});

import { execFileSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { parse } from 'yaml';

/**
 * The proof that a sixth resource is one generator run (`npx nx run nx-plugin:test-generator`): the
 * workspace as it is on disk (tracked and untracked files, not node_modules, dist or caches) is
 * copied to a scratch directory and committed there; the generator writes `receipts`; then the new
 * service and the contracts are typechecked, built and linted (and the service's unit spec run) in
 * the copy, and `git status` there is the list of files the generator touched, printed and compared.
 * KEEP_SCRATCH=1 keeps the copy and prints where it is.
 */
const ROOT = resolve(__dirname, '../../../..');
const NX = join(ROOT, 'node_modules/nx/dist/bin/nx.js');
const ENV = { ...process.env, NX_DAEMON: 'false', NX_NO_CLOUD: 'true', NX_TUI: 'false', NX_INTERACTIVE: 'false', FORCE_COLOR: '0' };

/** What the generator touches for `receipts`, with the migration's timestamp as <ts>. */
const EXPECTED = [
  'apps/receipt-service/README.md',
  'apps/receipt-service/jest.config.js',
  'apps/receipt-service/jest.int.config.js',
  'apps/receipt-service/project.json',
  'apps/receipt-service/src/database/migrations/<ts>-receipts.ts',
  'apps/receipt-service/src/main.ts',
  'apps/receipt-service/src/receipt-service.definition.ts',
  'apps/receipt-service/src/receipts/receipt.entity.ts',
  'apps/receipt-service/src/receipts/receipt.resource.spec.ts',
  'apps/receipt-service/src/receipts/receipt.resource.ts',
  'apps/receipt-service/src/receipts/receipts.int-spec.ts',
  'apps/receipt-service/src/tracing.ts',
  'apps/receipt-service/tsconfig.app.json',
  'apps/receipt-service/tsconfig.json',
  'deploy/compose/gateway.nginx.conf',
  'deploy/k8s/base/kustomization.yaml',
  'deploy/k8s/base/platform/ingress.yaml',
  'deploy/k8s/base/platform/postgres-bootstrap-job.yaml',
  'deploy/k8s/base/platform/postgres/bootstrap.sql',
  'deploy/k8s/base/receipt-service/deployment.yaml',
  'deploy/k8s/base/receipt-service/kustomization.yaml',
  'deploy/k8s/overlays/dev/kustomization.yaml',
  'deploy/k8s/overlays/prod/kustomization.yaml',
  'docker-compose.yml',
  'libs/contracts/src/api/index.ts',
  'libs/contracts/src/api/receipts.schema.ts',
  'libs/contracts/src/manifest.ts',
  'libs/sdk/src/generated/openapi.ts',
  'libs/sdk/src/generated/resource-names.ts',
  'libs/sdk/src/generated/resources.ts',
];

function run(cwd: string, file: string, args: string[], input?: Buffer): string {
  try {
    return execFileSync(file, args, { cwd, env: ENV, input, encoding: 'utf8', maxBuffer: 64 * 1024 * 1024, stdio: [input ? 'pipe' : 'ignore', 'pipe', 'pipe'] });
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; message: string };
    throw new Error(`${file} ${args.join(' ')} failed in ${cwd}:\n${err.stdout ?? ''}\n${err.stderr ?? err.message}`);
  }
}

const timings: string[] = [];
function step<T>(label: string, fn: () => T): T {
  const started = Date.now();
  const result = fn();
  timings.push(`${label}: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  return result;
}

describe('nx g ./tools/nx-plugin:resource-service receipts, in a scratch copy of the workspace', () => {
  let scratch: string;
  let touched: string[];

  beforeAll(() => {
    scratch = mkdtempSync(join(tmpdir(), 'resource-generator-'));
    step('copy the workspace', () => {
      const listed = run(ROOT, 'git', ['ls-files', '-z', '--cached', '--others', '--exclude-standard']).split('\0');
      const present = [...new Set(listed)].filter((f) => f && existsSync(join(ROOT, f)));
      const archive = execFileSync('tar', ['--null', '-T', '-', '-cf', '-'], { cwd: ROOT, input: present.join('\0'), maxBuffer: 1024 * 1024 * 1024 });
      run(scratch, 'tar', ['-xf', '-'], archive);
      symlinkSync(join(ROOT, 'node_modules'), join(scratch, 'node_modules'), 'dir');
    });
    step('commit it (git init)', () => {
      run(scratch, 'git', ['init', '-q']);
      run(scratch, 'git', ['add', '-A']);
      run(scratch, 'git', ['-c', 'user.name=generator-spec', '-c', 'user.email=generator-spec@invalid', '-c', 'commit.gpgsign=false', 'commit', '-qm', 'workspace']);
    });
    step('nx g ./tools/nx-plugin:resource-service receipts', () =>
      process.stdout.write(run(scratch, process.execPath, [NX, 'g', './tools/nx-plugin:resource-service', 'receipts', '--no-interactive'])),
    );
    touched = run(scratch, 'git', ['status', '--porcelain', '--untracked-files=all'])
      .split('\n')
      .filter(Boolean)
      .map((line) => line.slice(3))
      .sort();
  });

  afterAll(() => {
    console.log(`Files the generator touched (${touched?.length}):\n  ${touched?.join('\n  ')}\n\nTimings:\n  ${timings.join('\n  ')}`);
    if (process.env.KEEP_SCRATCH) {
      console.log(`scratch copy kept: ${scratch}`);
    } else if (scratch) {
      rmSync(scratch, { recursive: true, force: true });
    }
  });

  it('touches exactly the manifest, the schemas, the new service and the deployment files that name each service', () => {
    const migration = touched.find((f) => /^apps\/receipt-service\/src\/database\/migrations\/\d{13}-receipts\.ts$/.test(f));
    expect(migration).toBeDefined();
    const ts = /(\d{13})-receipts/.exec(migration as string)?.[1] as string;
    expect(touched).toEqual(EXPECTED.map((f) => f.replace('<ts>', ts)).sort());
  });

  it('writes the manifest entry: next free port, a free id prefix, the schemas imported', () => {
    const manifest = readFileSync(join(scratch, 'libs/contracts/src/manifest.ts'), 'utf8');
    expect(manifest).toMatch(/import \{ CREATE_RECEIPT_SCHEMA, RECEIPT_SCHEMA \} from '\.\/api\/receipts\.schema';/);
    expect(manifest).toMatch(/ {2}receipts: \{\n {4}kind: 'receipt',\n {4}idPrefix: 'rec',\n {4}port: \d{4},\n/);
  });

  it('typechecks, builds and lints the new service and the contracts, and passes the unit specs of the service, the contracts and the SDK', () => {
    const nx = (args: string[]) => run(scratch, process.execPath, [NX, ...args, '--exclude-task-dependencies', '--skip-nx-cache', '--outputStyle=static']);
    const checked = step('typecheck, build, lint (receipt-service, contracts)', () =>
      nx(['run-many', '-t', 'typecheck', 'build', 'lint', '-p', 'receipt-service', 'contracts']),
    );
    expect(checked).toMatch(/Successfully ran targets typecheck, build, lint for 2 projects/);
    expect(existsSync(join(scratch, 'dist/apps/receipt-service/apps/receipt-service/src/main.js'))).toBe(true);
    expect(existsSync(join(scratch, 'dist/libs/contracts/libs/contracts/src/manifest.js'))).toBe(true);
    // The contracts' specs (scopes, OpenAPI, AsyncAPI) and the SDK's (its generated resource table
    // is up to date and typed) see six resources now.
    const tested = step('test (receipt-service, contracts, sdk)', () => nx(['run-many', '-t', 'test', '-p', 'receipt-service', 'contracts', 'sdk']));
    expect(tested).toMatch(/Successfully ran target test for 3 projects/);
  });

  it('deploys it: docker-compose and the rendered Kubernetes overlay hold the service, its migration and its route', () => {
    const compose = parse(readFileSync(join(scratch, 'docker-compose.yml'), 'utf8')) as { services: Record<string, { build?: { args?: Record<string, string> } }> };
    expect(Object.keys(compose.services)).toEqual(expect.arrayContaining(['receipt-service', 'receipt-service-migrate']));
    const rendered = step('kubectl kustomize overlays/dev', () => run(scratch, 'kubectl', ['kustomize', 'deploy/k8s/overlays/dev']));
    for (const name of ['name: receipt-service', 'name: receipt-service-migrate', 'path: /api/v1/receipts', 'name: receipt-service-database']) {
      expect({ name, rendered: rendered.includes(name) }).toEqual({ name, rendered: true });
    }
  });
});

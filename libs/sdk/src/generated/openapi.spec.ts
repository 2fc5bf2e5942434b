import { execFileSync } from 'node:child_process';
import { join } from 'node:path';

const ROOT = join(__dirname, '..', '..', '..', '..');

describe('src/generated (openapi.ts, resources.ts, resource-names.ts)', () => {
  it('is what `npx nx run sdk:generate` writes from the current OpenAPI document and platform manifest (run it when this fails)', () => {
    // A child process: the generator's dependencies are ES modules, which Jest cannot load.
    const run = () =>
      execFileSync(
        join(ROOT, 'node_modules', '.bin', 'tsx'),
        ['--tsconfig', 'libs/sdk/tsconfig.spec.json', 'libs/sdk/scripts/generate-types.ts', '--check'],
        { cwd: ROOT, encoding: 'utf8', stdio: 'pipe' },
      );
    expect(run).not.toThrow();
  }, 60_000);
});

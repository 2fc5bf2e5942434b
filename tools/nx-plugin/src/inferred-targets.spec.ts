import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const { inferTargets } = require('../index.js') as typeof import('../index.js');

describe('inferred targets (tools/nx-plugin/index.js)', () => {
  let root: string;
  const project = (dir: string, files: Record<string, string>) => {
    for (const [file, text] of Object.entries(files)) {
      mkdirSync(join(root, dir, file, '..'), { recursive: true });
      writeFileSync(join(root, dir, file), text);
    }
  };

  beforeEach(() => {
    root = mkdtempSync(join(tmpdir(), 'nx-plugin-'));
  });
  afterEach(() => rmSync(root, { recursive: true, force: true }));

  it('gives a resource service every target its project.json used to copy, from its files alone', () => {
    project('apps/thing-service', {
      'project.json': JSON.stringify({ name: 'thing-service', tags: [] }),
      'tsconfig.json': '{}',
      'tsconfig.app.json': '{}',
      'jest.config.js': '',
      'jest.int.config.js': '',
      'src/main.ts': '',
      'src/database/migrations/1-things.ts': '',
    });
    const { sourceRoot, targets } = inferTargets('apps/thing-service', root);
    expect(sourceRoot).toBe('apps/thing-service/src');
    expect(targets).toEqual({
      build: {
        executor: 'nx:run-commands',
        outputs: ['{workspaceRoot}/dist/apps/thing-service'],
        options: {
          commands: [
            'rm -rf dist/apps/thing-service',
            'tsc -p apps/thing-service/tsconfig.app.json --outDir dist/apps/thing-service',
            'tsc-alias -p apps/thing-service/tsconfig.app.json --outDir dist/apps/thing-service',
          ],
          parallel: false,
        },
      },
      serve: { executor: 'nx:run-commands', dependsOn: ['build'], continuous: true, options: { command: 'node dist/apps/thing-service/apps/thing-service/src/main.js serve' } },
      migrate: { executor: 'nx:run-commands', dependsOn: ['build'], options: { command: 'node dist/apps/thing-service/apps/thing-service/src/main.js migrate' } },
      typecheck: { executor: 'nx:run-commands', options: { command: 'tsc -p apps/thing-service/tsconfig.json --noEmit' } },
      lint: { executor: '@nx/eslint:lint', options: { lintFilePatterns: ['apps/thing-service/src'] } },
      test: { executor: '@nx/jest:jest', outputs: ['{workspaceRoot}/coverage/apps/thing-service'], options: { jestConfig: 'apps/thing-service/jest.config.js' } },
      'test-int': { executor: '@nx/jest:jest', options: { jestConfig: 'apps/thing-service/jest.int.config.js', runInBand: true } },
    });
  });

  it('gives a project with jest.validator.config.js a test-validator target, in band', () => {
    project('apps/doc-service', { 'project.json': '{}', 'tsconfig.json': '{}', 'jest.config.js': '', 'jest.validator.config.js': '', 'src/main.ts': '' });
    const { targets } = inferTargets('apps/doc-service', root);
    expect(targets['test-validator']).toEqual({ executor: '@nx/jest:jest', options: { jestConfig: 'apps/doc-service/jest.validator.config.js', runInBand: true } });
    expect(Object.keys(targets).sort()).toEqual(['lint', 'test', 'test-validator', 'typecheck']);
  });

  it('builds a library with its own tsconfig.lib.json, typechecks its spec config, and has no serve or migrate', () => {
    project('libs/kit', { 'project.json': '{}', 'tsconfig.json': '{}', 'tsconfig.lib.json': '{}', 'tsconfig.spec.json': '{}', 'src/index.ts': '' });
    const { targets } = inferTargets('libs/kit', root);
    expect(Object.keys(targets).sort()).toEqual(['build', 'lint', 'typecheck']);
    expect(targets.build.options).toEqual({ commands: ['tsc -p libs/kit/tsconfig.lib.json', 'tsc-alias -p libs/kit/tsconfig.lib.json'], parallel: false });
    expect(targets.typecheck.options).toEqual({ command: 'tsc -p libs/kit/tsconfig.spec.json --noEmit' });
  });

  it('leaves a target the project.json declares entirely to it (no merge), and infers the others', () => {
    project('apps/web', {
      'project.json': JSON.stringify({ sourceRoot: 'apps/web/src', targets: { build: { command: 'make' }, typecheck: { command: 'make check' } } }),
      'tsconfig.json': '{}',
      'tsconfig.app.json': '{}',
      'jest.config.js': '',
      'src/main.ts': '',
    });
    const { sourceRoot, targets } = inferTargets('apps/web', root);
    expect(sourceRoot).toBeUndefined();
    expect(Object.keys(targets).sort()).toEqual(['lint', 'serve', 'test']);
  });
});

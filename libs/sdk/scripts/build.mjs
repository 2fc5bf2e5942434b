/**
 * Builds the publishable package into dist/libs/sdk: one ESM and one CommonJS bundle (esbuild,
 * platform "neutral": an import of a Node built-in or of any package fails the build, so what ships
 * runs in browsers and on Node 18+ alike), type declarations (tsc), package.json and README.md.
 */
import { build } from 'esbuild';
import { execFileSync } from 'node:child_process';
import { copyFileSync, mkdirSync, rmSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const lib = join(dirname(fileURLToPath(import.meta.url)), '..');
const root = join(lib, '..', '..');
const out = join(root, 'dist', 'libs', 'sdk');

rmSync(out, { recursive: true, force: true });
mkdirSync(out, { recursive: true });
for (const [format, file] of [
  ['esm', 'index.mjs'],
  ['cjs', 'index.cjs'],
]) {
  await build({
    entryPoints: [join(lib, 'src', 'index.ts')],
    outfile: join(out, file),
    bundle: true,
    format,
    platform: 'neutral',
    // Node 18 and the browsers of its time: fetch, AbortSignal, async iterators.
    target: ['es2021'],
    sourcemap: true,
    legalComments: 'none',
    logLevel: 'warning',
  });
}
execFileSync(join(root, 'node_modules', '.bin', 'tsc'), ['-p', join(lib, 'tsconfig.lib.json')], { stdio: 'inherit' });
copyFileSync(join(lib, 'package.json'), join(out, 'package.json'));
copyFileSync(join(lib, 'README.md'), join(out, 'README.md'));
console.log(`sdk: built ${out} (index.mjs, index.cjs, types/)`);

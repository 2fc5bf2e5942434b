import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';

/** Every shipped source file: what runs in Node 18+ and in browser bundles. */
function shippedSources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return shippedSources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') ? [path] : [];
  });
}

/** Module specifiers of static imports and re-exports, dynamic imports and require calls. */
function specifiers(source: string): string[] {
  const patterns = [
    /\b(?:import|export)\s+(?:type\s+)?(?:[\w*{}\s,]+?\s+from\s+)?['"]([^'"]+)['"]/g,
    /\bimport\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
    /\brequire\s*\(\s*['"]([^'"]+)['"]\s*\)/g,
  ];
  return patterns.flatMap((pattern) => [...source.matchAll(pattern)].map((match) => match[1]));
}

describe('the shipped sources', () => {
  const root = __dirname;
  const files = shippedSources(root);

  it('are found', () => {
    expect(files.map((f) => relative(root, f))).toEqual(expect.arrayContaining(['index.ts', 'transport.ts', 'generated/openapi.ts', 'generated/resources.ts', 'generated/resource-names.ts']));
  });

  it('import only relative modules: no package, no node: built-in', () => {
    const offending = files.flatMap((file) =>
      specifiers(readFileSync(file, 'utf8'))
        .filter((specifier) => !specifier.startsWith('./') && !specifier.startsWith('../'))
        .map((specifier) => `${relative(root, file)}: ${specifier}`),
    );
    expect(offending).toEqual([]);
  });

  it('use no Node-only global', () => {
    const offending = files.flatMap((file) => {
      const code = readFileSync(file, 'utf8').replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, '');
      return /\b(process|Buffer|__dirname|__filename|setImmediate)\b/.test(code) ? [relative(root, file)] : [];
    });
    expect(offending).toEqual([]);
  });

  it('the scan catches what it is meant to catch', () => {
    expect(specifiers(`import { x } from 'node:fs';\nimport type { Y } from "undici";\nexport * from './a';\nconst z = require('os');\nawait import('../b');`)).toEqual([
      'node:fs',
      'undici',
      './a',
      '../b',
      'os',
    ]);
  });
});

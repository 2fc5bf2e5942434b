const { insertManifestEntry, readManifest, singular } = require('./generator.js') as typeof import('./generator.js');

const MANIFEST = `import { A_SCHEMA, CREATE_A_SCHEMA } from './api/alphas.schema';
import { CREATE_Z_SCHEMA, Z_SCHEMA } from './api/zetas.schema';
import { other } from './other';

export const RESOURCE_MANIFEST = {
  alphas: { kind: 'alpha', idPrefix: 'alp', port: 3002, createSchema: CREATE_A_SCHEMA, objectSchema: A_SCHEMA, filters: {}, references: [] },
  zetas: {
    kind: 'zeta',
    idPrefix: 'zet',
    port: 3003,
    createSchema: CREATE_Z_SCHEMA,
    objectSchema: Z_SCHEMA,
    filters: {},
    references: ['alpha'],
  },
} as const satisfies Record<string, unknown>;
`;

describe('resource-service generator: the manifest, with the TypeScript compiler API', () => {
  it('reads the entries as written', () => {
    expect(readManifest(MANIFEST).map(({ resource, kind, idPrefix, port }) => ({ resource, kind, idPrefix, port }))).toEqual([
      { resource: 'alphas', kind: 'alpha', idPrefix: 'alp', port: 3002 },
      { resource: 'zetas', kind: 'zeta', idPrefix: 'zet', port: 3003 },
    ]);
  });

  it('adds the entry last and the import in order among the api imports', () => {
    const out = insertManifestEntry(MANIFEST, { plural: 'receipts', kind: 'receipt', idPrefix: 'rec', port: 3004, KIND: 'RECEIPT', withSample: false });
    expect(readManifest(out).map((r) => r.resource)).toEqual(['alphas', 'zetas', 'receipts']);
    expect(readManifest(out)[2]).toMatchObject({ kind: 'receipt', idPrefix: 'rec', port: 3004 });
    expect(out.split('\n').slice(0, 3)).toEqual([
      "import { A_SCHEMA, CREATE_A_SCHEMA } from './api/alphas.schema';",
      "import { CREATE_RECEIPT_SCHEMA, RECEIPT_SCHEMA } from './api/receipts.schema';",
      "import { CREATE_Z_SCHEMA, Z_SCHEMA } from './api/zetas.schema';",
    ]);
    expect(out).toContain("    references: ['alpha'],\n  },\n  receipts: {\n    kind: 'receipt',");
    expect(out).toContain('    references: [],\n  },\n} as const satisfies');
    // Every list has the created range (ADR 0041): the entry declares it with the manifest's helpers.
    expect(out).toContain("    filters: { ...range('created', DATE_TIME, 'created_at') },\n    references: [],\n  },\n} as const satisfies");
  });

  it('adds a comma after a last entry that has none', () => {
    const out = insertManifestEntry(MANIFEST.replace("references: ['alpha'],\n  },\n}", "references: ['alpha'],\n  }\n}"), {
      plural: 'receipts',
      kind: 'receipt',
      idPrefix: 'rec',
      port: 3004,
      KIND: 'RECEIPT',
      withSample: true,
    });
    expect(readManifest(out).map((r) => r.resource)).toEqual(['alphas', 'zetas', 'receipts']);
    expect(readManifest(out)[2].fields).toContain('sample');
  });

  it.each([
    ['receipts', 'receipt'],
    ['categories', 'category'],
    ['boxes', 'box'],
  ])('%s → %s', (plural, kind) => expect(singular(plural)).toBe(kind));
});

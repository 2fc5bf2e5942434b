import { buildOpenApiDocument, CodeSample, RESOURCES, SDK_SAMPLE_LABEL } from '@invoicing/contracts';
import { join } from 'node:path';
import * as ts from 'typescript';

/**
 * The `TypeScript (SDK)` samples of the OpenAPI document (x-codeSamples, shown by the API reference)
 * compile against this SDK as written: each one is a module of its own, with top-level await, type
 * checked strictly in a single program that maps `@invoicing/sdk` to src/index.ts.
 */

const ROOT = join(__dirname, '..', '..', '..');
const SDK_ENTRY = join(__dirname, 'index.ts');
/** Where the samples' virtual files live: nothing is written there. */
const VIRTUAL_DIR = join(__dirname, '__docs-samples__');

interface Operation {
  operationId: string;
  tags?: string[];
  'x-codeSamples'?: CodeSample[];
}

interface Sample {
  operationId: string;
  source: string;
}

const doc = buildOpenApiDocument({ serverUrl: 'https://api.invoicing.test' }) as { paths: Record<string, Record<string, Operation>> };
const operations = Object.values(doc.paths).flatMap((byMethod) => Object.entries(byMethod).map(([method, op]) => ({ method, op })));
const sdkSamples: Sample[] = operations.flatMap(({ op }) =>
  (op['x-codeSamples'] ?? []).filter((s) => s.label === SDK_SAMPLE_LABEL).map((s) => ({ operationId: op.operationId, source: s.source })),
);

/** Must not compile: proves that a sample's errors are found and reported (an unknown field of a create body). */
const KNOWN_BAD: Sample = {
  operationId: '(known-bad snippet)',
  source: `import { Invoicing } from '@invoicing/sdk';

const api = new Invoicing({ baseUrl: 'https://api.invoicing.test', clientId: 'id', clientSecret: 'secret' });
await api.invoices.create({ nope: 1 });
`,
};

const normalize = (fileName: string) => fileName.replace(/\\/g, '/');

/** Type checks every sample in one program; answers each error as `operationId:line:column TScode message`. */
function typeCheck(samples: Sample[]): Array<{ operationId: string; diagnostic: string }> {
  const files = new Map(samples.map((sample, i) => [normalize(join(VIRTUAL_DIR, `${i}-${sample.operationId.replace(/\W/g, '_')}.ts`)), sample]));
  const options: ts.CompilerOptions = {
    target: ts.ScriptTarget.ES2022,
    module: ts.ModuleKind.ES2022,
    moduleResolution: ts.ModuleResolutionKind.Bundler,
    // Each sample is a module even before its first import, so its top-level await is valid.
    moduleDetection: ts.ModuleDetectionKind.Force,
    lib: ['lib.es2022.d.ts', 'lib.dom.d.ts'],
    // Node's types only for samples that read the environment (process.env): the SDK itself needs none.
    types: samples.some((s) => /\bprocess\./.test(s.source)) ? ['node'] : [],
    typeRoots: [join(ROOT, 'node_modules', '@types')],
    paths: { '@invoicing/sdk': [SDK_ENTRY] },
    strict: true,
    skipLibCheck: true,
    noEmit: true,
  };
  const host = ts.createCompilerHost(options, true);
  const { getSourceFile, fileExists, readFile } = host;
  host.getSourceFile = (fileName, languageVersion, onError, shouldCreate) => {
    const sample = files.get(normalize(fileName));
    return sample
      ? ts.createSourceFile(fileName, sample.source, languageVersion, true, ts.ScriptKind.TS)
      : getSourceFile.call(host, fileName, languageVersion, onError, shouldCreate);
  };
  host.fileExists = (fileName) => files.has(normalize(fileName)) || fileExists.call(host, fileName);
  host.readFile = (fileName) => files.get(normalize(fileName))?.source ?? readFile.call(host, fileName);

  const program = ts.createProgram({ rootNames: [...files.keys()], options, host });
  const message = (d: ts.Diagnostic) => `TS${d.code} ${ts.flattenDiagnosticMessageText(d.messageText, '\n')}`;
  const errors = [...program.getOptionsDiagnostics(), ...program.getGlobalDiagnostics()].map((d) => ({ operationId: '(program)', diagnostic: message(d) }));
  for (const [fileName, sample] of files) {
    const sourceFile = program.getSourceFile(fileName);
    if (!sourceFile) {
      errors.push({ operationId: sample.operationId, diagnostic: 'not part of the program' });
      continue;
    }
    for (const d of [...program.getSyntacticDiagnostics(sourceFile), ...program.getSemanticDiagnostics(sourceFile)]) {
      const { line, character } = sourceFile.getLineAndCharacterOfPosition(d.start ?? 0);
      const text = sample.source.split('\n')[line]?.trim();
      errors.push({ operationId: sample.operationId, diagnostic: `${line + 1}:${character + 1} ${message(d)}\n    ${text}` });
    }
  }
  return errors;
}

describe('the SDK samples of the OpenAPI document', () => {
  let errors: Array<{ operationId: string; diagnostic: string }>;

  beforeAll(() => {
    // One program for every sample and the known-bad snippet: the SDK and the libs are checked once.
    errors = typeCheck([...sdkSamples, KNOWN_BAD]);
  }, 60_000);

  it('exist for the token and refresh endpoints and the create of every resource', () => {
    const creates = operations.filter(({ method, op }) => method === 'post' && op.tags?.some((t) => (RESOURCES as readonly string[]).includes(t)));
    expect(creates).toHaveLength(RESOURCES.length);
    const withSample = new Set(sdkSamples.map((s) => s.operationId));
    const required = ['createToken', 'refreshToken', ...creates.map(({ op }) => op.operationId)];
    expect(required.filter((id) => !withSample.has(id))).toEqual([]);
  });

  it('compile against the SDK as written (strict, top-level await)', () => {
    const sampleErrors = errors.filter((e) => e.operationId !== KNOWN_BAD.operationId).map((e) => `${e.operationId}:${e.diagnostic}`);
    expect(sampleErrors).toEqual([]);
  });

  it('are checked for real: a create with an unknown field is an error, reported for its snippet', () => {
    const reported = errors.filter((e) => e.operationId === KNOWN_BAD.operationId).map((e) => e.diagnostic);
    expect(reported).toEqual([expect.stringMatching(/^4:\d+ TS2353 Object literal may only specify known properties, and 'nope' does not exist/)]);
  });
});

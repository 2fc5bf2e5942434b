// @ts-check
/**
 * `nx g ./tools/nx-plugin:resource-service <plural>`: a resource of the public API, end to end.
 *
 *   libs/contracts/src/manifest.ts            its RESOURCE_MANIFEST entry (TypeScript compiler API) and schema import
 *   libs/contracts/src/api/<plural>.schema.ts its create and object JSON Schemas (+ the api/index.ts export)
 *   apps/<kind>-service/                      the service, modelled on expense-service: definition, entity,
 *                                             resource, migration, main.ts, tracing.ts, README, specs
 *   deploy/k8s/base/<kind>-service/           its Deployment and the kustomization using the components
 *   deploy/k8s/...                            base resource list, Ingress path, bootstrap Job's Secret pair,
 *                                             bootstrap.sql's services row, overlays' image and dev Secret
 *   docker-compose.yml                        build anchor, migrate and serve services, the gateway's depends_on
 *   deploy/compose/gateway.nginx.conf         rendered again from the manifest (libs/gateway's CLI), after the write
 *   libs/sdk/src/generated/                   the SDK's generated types and resource table (sdk:generate), after the write
 *
 * Everything else about a resource (scopes, ids, events, routes, OpenAPI, Nx targets, lint scopes)
 * derives from the manifest entry and the project's files. The new resource is deliberately plain
 * (description, amount, currency, the `created` range every list has and no other list filter, no
 * reference): edit its schemas, entity, migration and resource afterwards. Plain CommonJS: see
 * ../../index.js.
 */
const { generateFiles, joinPathFragments } = require('@nx/devkit');
const { execFileSync } = require('node:child_process');
const { writeFileSync } = require('node:fs');
const { join } = require('node:path');
const ts = require('typescript');

const MANIFEST = 'libs/contracts/src/manifest.ts';
const API_INDEX = 'libs/contracts/src/api/index.ts';
const IDS = 'libs/contracts/src/ids.ts';
const PLATFORM = 'libs/contracts/src/platform.ts';
/** The ports below it belong to resources; settings-web's is 3010. */
const FIRST_NON_RESOURCE_PORT = 3010;
/** Manifest fields this generator writes; an entry with another field needs the generator taught first. */
const KNOWN_FIELDS = ['kind', 'idPrefix', 'port', 'createSchema', 'objectSchema', 'filters', 'references', 'sample'];
/** Optional manifest fields a new resource goes without (`representations`: a new resource answers JSON only). */
const OPTIONAL_FIELDS = ['representations'];

/**
 * @typedef {{ plural: string; kind?: string; idPrefix?: string; port?: number; skipRender?: boolean }} Schema
 * @typedef {{ resource: string; kind: string; idPrefix: string; port: number; fields: string[] }} ManifestRow
 * @typedef {import('@nx/devkit').Tree} Tree
 */

/** `receipts` → `receipt`, `categories` → `category`, `boxes` → `box`. @param {string} plural */
function singular(plural) {
  if (plural.endsWith('ies')) return `${plural.slice(0, -3)}y`;
  if (/(s|x|z|ch|sh)es$/.test(plural)) return plural.slice(0, -2);
  if (plural.endsWith('s')) return plural.slice(0, -1);
  throw new Error(`cannot tell the singular of "${plural}": pass --kind`);
}

const pascal = (/** @type {string} */ word) => word.charAt(0).toUpperCase() + word.slice(1);

/**
 * The RESOURCE_MANIFEST object literal of manifest.ts.
 * @param {ts.SourceFile} source
 * @returns {ts.ObjectLiteralExpression}
 */
function manifestLiteral(source) {
  /** @type {ts.ObjectLiteralExpression | undefined} */
  let literal;
  source.forEachChild((node) => {
    if (!ts.isVariableStatement(node)) return;
    for (const decl of node.declarationList.declarations) {
      if (!ts.isIdentifier(decl.name) || decl.name.text !== 'RESOURCE_MANIFEST' || !decl.initializer) continue;
      let init = decl.initializer;
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init) || ts.isParenthesizedExpression(init)) init = init.expression;
      if (ts.isObjectLiteralExpression(init)) literal = init;
    }
  });
  if (!literal) throw new Error(`${MANIFEST}: no RESOURCE_MANIFEST object literal`);
  return literal;
}

/** @param {ts.PropertyName} name */
const keyOf = (name) => (ts.isIdentifier(name) || ts.isStringLiteral(name) ? name.text : name.getText());

/**
 * The manifest's entries as written (read with the TypeScript parser: nothing is built yet).
 * @param {string} text
 * @returns {ManifestRow[]}
 */
function readManifest(text) {
  const source = ts.createSourceFile(MANIFEST, text, ts.ScriptTarget.Latest, true);
  return manifestLiteral(source).properties.map((prop) => {
    if (!ts.isPropertyAssignment(prop) || !ts.isObjectLiteralExpression(prop.initializer)) throw new Error(`${MANIFEST}: unexpected entry ${prop.getText()}`);
    /** @type {Record<string, string>} */
    const fields = {};
    for (const p of prop.initializer.properties) {
      if (!ts.isPropertyAssignment(p)) continue;
      fields[keyOf(p.name)] = ts.isStringLiteral(p.initializer) ? p.initializer.text : p.initializer.getText();
    }
    return { resource: keyOf(prop.name), kind: fields.kind, idPrefix: fields.idPrefix, port: Number(fields.port), fields: Object.keys(fields) };
  });
}

/**
 * Inserts the entry after the manifest's last one, and the schemas' import among the api imports.
 * @param {string} text
 * @param {{ plural: string; kind: string; idPrefix: string; port: number; KIND: string; withSample: boolean }} o
 */
function insertManifestEntry(text, o) {
  const source = ts.createSourceFile(MANIFEST, text, ts.ScriptTarget.Latest, true);
  const literal = manifestLiteral(source);
  const last = literal.properties[literal.properties.length - 1];
  if (!last) throw new Error(`${MANIFEST}: RESOURCE_MANIFEST is empty`);
  const sample = o.withSample
    ? `\n    sample: { create: { description: '${pascal(o.kind)} of the month', amount: 12900, currency: 'EUR' }, listQuery: {}, shown: 'description' },`
    : '';
  const entry =
    `  ${o.plural}: {\n    kind: '${o.kind}',\n    idPrefix: '${o.idPrefix}',\n    port: ${o.port},\n` +
    `    createSchema: CREATE_${o.KIND}_SCHEMA,\n    objectSchema: ${o.KIND}_SCHEMA,\n    filters: { ...range('created', DATE_TIME, 'created_at') },\n    references: [],${sample}\n  },`;
  // After the last entry and its trailing comma, if it has one.
  const afterLast = text.slice(last.end, literal.properties.hasTrailingComma ? text.indexOf(',', last.end) + 1 : last.end);
  let at = last.end + afterLast.length;
  let out = `${text.slice(0, at)}${literal.properties.hasTrailingComma ? '' : ','}\n${entry}${text.slice(at)}`;

  // The import, in order among `./api/...` imports.
  const specifier = `./api/${o.plural}.schema`;
  const line = `import { CREATE_${o.KIND}_SCHEMA, ${o.KIND}_SCHEMA } from '${specifier}';\n`;
  const imports = source.statements.filter(ts.isImportDeclaration);
  const apiImports = imports.filter((i) => ts.isStringLiteral(i.moduleSpecifier) && i.moduleSpecifier.text.startsWith('./api/'));
  const next = apiImports.find((i) => /** @type {ts.StringLiteral} */ (i.moduleSpecifier).text > specifier);
  const anchor = next ?? apiImports[apiImports.length - 1] ?? imports[imports.length - 1];
  at = anchor ? (next ? anchor.getStart(source) : anchor.end + 1) : 0;
  out = `${out.slice(0, at)}${line}${out.slice(at)}`;
  return out;
}

/**
 * Inserts `text` before the first occurrence of `marker` in a file, or fails naming both.
 * @param {Tree} tree @param {string} path @param {string} marker @param {string} text
 */
function insertBefore(tree, path, marker, text) {
  const content = tree.read(path, 'utf-8');
  if (content === null) throw new Error(`${path} does not exist`);
  const at = content.indexOf(marker);
  if (at < 0) throw new Error(`${path}: cannot find where to add the service (looked for ${JSON.stringify(marker)})`);
  tree.write(path, content.slice(0, at) + text + content.slice(at));
}

/**
 * Options filled in and checked against the workspace.
 * @param {Tree} tree @param {Schema} schema
 */
function normalize(tree, schema) {
  const plural = schema.plural;
  if (!/^[a-z]+$/.test(plural)) throw new Error(`"${plural}": a resource's name is lowercase letters (it is a URL segment, a Postgres schema and a DNS label)`);
  const kind = schema.kind ?? singular(plural);
  if (!/^[a-z]+$/.test(kind) || kind === plural) throw new Error(`"${kind}": the kind is lowercase letters, and not the plural`);
  const service = `${kind}-service`;
  const manifestText = /** @type {string} */ (tree.read(MANIFEST, 'utf-8'));
  const rows = readManifest(manifestText);
  // The entry declares its `created` range with the manifest's helpers (ADR 0041).
  if (!/import \{[^}]*\bDATE_TIME\b[^}]*\brange\b[^}]*\} from '\.\/api\/list-filter\.schema'/.test(manifestText)) {
    throw new Error(`${MANIFEST} does not import DATE_TIME and range from './api/list-filter.schema', which the new entry's filters use`);
  }
  for (const row of rows) {
    if (row.resource === plural || row.kind === kind) throw new Error(`${MANIFEST} has "${plural}" or the kind "${kind}" already (${row.resource})`);
    const unknown = row.fields.filter((f) => !KNOWN_FIELDS.includes(f) && !OPTIONAL_FIELDS.includes(f));
    if (unknown.length > 0) throw new Error(`${MANIFEST}: ${row.resource} has ${unknown.join(', ')}, which this generator does not write yet (tools/nx-plugin/src/resource-service/generator.js)`);
  }
  if (tree.exists(`apps/${service}`)) throw new Error(`apps/${service} exists already`);
  if (kind === 'auth' || service === 'settings-web') throw new Error(`"${kind}" is taken by a service of the platform`);

  // Prefixes in use: the resources' and the auth service's objects' (ids.ts).
  const ids = tree.read(IDS, 'utf-8') ?? '';
  const authBlock = /AUTH_ID_PREFIXES = \{([^}]*)\}/.exec(ids)?.[1] ?? '';
  const usedPrefixes = new Set([...rows.map((r) => r.idPrefix), ...[...authBlock.matchAll(/'([a-z]{3})'/g)].map((m) => m[1])]);
  let idPrefix = schema.idPrefix;
  if (idPrefix) {
    if (usedPrefixes.has(idPrefix)) throw new Error(`id prefix "${idPrefix}" is taken`);
  } else {
    const consonants = kind.slice(1).replace(/[aeiou]/g, '');
    const candidates = [kind.slice(0, 3)];
    for (let i = 0; i < consonants.length; i++) for (let j = i + 1; j < consonants.length; j++) candidates.push(kind[0] + consonants[i] + consonants[j]);
    idPrefix = candidates.find((c) => c.length === 3 && !usedPrefixes.has(c));
    if (!idPrefix) throw new Error(`no free id prefix from "${kind}": pass --idPrefix`);
  }

  // Ports in use: the resources' and the other services' (platform.ts).
  const usedPorts = new Set([...rows.map((r) => r.port), ...[...(tree.read(PLATFORM, 'utf-8') ?? '').matchAll(/port: (\d+)/g)].map((m) => Number(m[1])), FIRST_NON_RESOURCE_PORT]);
  let port = schema.port;
  if (port !== undefined) {
    if (usedPorts.has(port)) throw new Error(`port ${port} is taken`);
  } else {
    port = Math.max(...rows.map((r) => r.port)) + 1;
    while (usedPorts.has(port)) port++;
  }

  return {
    plural,
    kind,
    service,
    idPrefix,
    port,
    Kind: pascal(kind),
    KIND: kind.toUpperCase(),
    Plural: pascal(plural),
    timestamp: String(Date.now()),
    withSample: rows.some((r) => r.fields.includes('sample')),
    skipRender: !!schema.skipRender,
  };
}

/** @param {Tree} tree @param {Schema} schema */
async function resourceServiceGenerator(tree, schema) {
  const o = normalize(tree, schema);
  const { plural, kind, service, port, KIND } = o;
  const files = joinPathFragments(__dirname, 'files');
  const substitutions = { ...o, tmpl: '' };

  // Contracts: the schemas, their export, the manifest entry.
  generateFiles(tree, joinPathFragments(files, 'contracts'), 'libs/contracts/src/api', substitutions);
  const index = /** @type {string} */ (tree.read(API_INDEX, 'utf-8'));
  tree.write(API_INDEX, `${index.replace(/\n*$/, '\n')}export * from './${plural}.schema';\n`);
  tree.write(MANIFEST, insertManifestEntry(/** @type {string} */ (tree.read(MANIFEST, 'utf-8')), o));

  // The service.
  generateFiles(tree, joinPathFragments(files, 'app'), `apps/${service}`, substitutions);

  // Kubernetes: its directory, and the lists that still name every service.
  generateFiles(tree, joinPathFragments(files, 'deploy'), `deploy/k8s/base/${service}`, substitutions);
  insertBefore(tree, 'deploy/k8s/base/kustomization.yaml', '  - settings-web\n', `  - ${service}\n`);
  insertBefore(
    tree,
    'deploy/k8s/base/platform/ingress.yaml',
    '          - path: /settings\n',
    `          - path: /api/v1/${plural}\n            pathType: Prefix\n            backend:\n              service:\n                name: ${service}\n                port:\n                  number: ${port}\n`,
  );
  const SERVICE = service.replace(/-/g, '_').toUpperCase();
  insertBefore(
    tree,
    'deploy/k8s/base/platform/postgres-bootstrap-job.yaml',
    '            - name: HOME\n',
    ['DATABASE_URL', 'MIGRATION_DATABASE_URL']
      .map((key) => `            - name: ${SERVICE}_${key}\n              valueFrom:\n                secretKeyRef:\n                  name: ${service}-database\n                  key: ${key}\n`)
      .join(''),
  );
  insertBefore(tree, 'deploy/k8s/base/platform/postgres/bootstrap.sql', '\n) AS service(svc, sch) \\gset', `,\n  ('${kind}', '${plural}')`);
  insertBefore(tree, 'deploy/k8s/overlays/dev/kustomization.yaml', '  - name: invoicing/settings-web\n', `  - name: invoicing/${service}\n    newTag: dev\n`);
  insertBefore(
    tree,
    'deploy/k8s/overlays/dev/kustomization.yaml',
    '  - name: postgres-admin\n',
    `  - name: ${service}-database\n    literals:\n` +
      `      - DATABASE_URL=postgres://${kind}_app:${kind}_app_dev@postgres:5432/invoicing\n` +
      `      - MIGRATION_DATABASE_URL=postgres://${kind}_owner:${kind}_owner_dev@postgres:5432/invoicing\n`,
  );
  insertBefore(
    tree,
    'deploy/k8s/overlays/prod/kustomization.yaml',
    '  - name: invoicing/settings-web\n',
    `  - name: invoicing/${service}\n    newName: registry.example.com/invoicing/${service}\n    newTag: "0.1.0"\n`,
  );

  // docker-compose.yml: its build, its migration, the service, and the gateway waiting for it.
  const compose = 'docker-compose.yml';
  insertBefore(tree, compose, '\nservices:\n', `\nx-${service}-build: &${service}-build\n  context: .\n  args:\n    APP: ${service}\n    PORT: "${port}"\n`);
  insertBefore(
    tree,
    compose,
    '  auth-service:\n    <<: *hardening\n',
    `  ${service}-migrate:\n    <<: *hardening\n    image: invoicing/${service}:dev\n    build: *${service}-build\n    command: ["migrate"]\n` +
      `    environment:\n      NODE_ENV: development\n      MIGRATION_DATABASE_URL: postgres://${kind}_owner:${kind}_owner_dev@postgres:5432/invoicing\n` +
      `    depends_on:\n      postgres:\n        condition: service_healthy\n    restart: "no"\n\n`,
  );
  insertBefore(
    tree,
    compose,
    '  settings-web:\n    <<: *hardening\n',
    `  ${service}:\n    <<: *hardening\n    image: invoicing/${service}:dev\n    build: *${service}-build\n    environment:\n      NODE_ENV: development\n` +
      `      DATABASE_URL: postgres://${kind}_app:${kind}_app_dev@postgres:5432/invoicing\n      KAFKA_BROKERS: kafka:9092\n` +
      `      # No service port is published: callers come through the gateway, whose X-Forwarded-For the\n` +
      `      # services believe (any compose network address).\n      TRUSTED_PROXIES: 10.0.0.0/8,172.16.0.0/12,192.168.0.0/16\n` +
      `    healthcheck: *ready-check\n    depends_on:\n      ${service}-migrate:\n        condition: service_completed_successfully\n` +
      `      kafka-topics:\n        condition: service_completed_successfully\n    restart: unless-stopped\n\n`,
  );
  insertBefore(tree, compose, '      settings-web:\n        condition: service_healthy\n', `      ${service}:\n        condition: service_healthy\n`);

  if (o.skipRender) return undefined;
  // After the write, from the manifest now on disk: the compose gateway's configuration, and the
  // SDK's generated sources (both are checked against a fresh render by their tests).
  return () => {
    const root = tree.root;
    const tsx = (/** @type {string} */ tsconfig, /** @type {string[]} */ args) =>
      execFileSync(process.execPath, [require.resolve('tsx/cli', { paths: [root] }), '--tsconfig', tsconfig, ...args], {
        cwd: root,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
      });
    writeFileSync(join(root, 'deploy/compose/gateway.nginx.conf'), tsx('libs/gateway/tsconfig.spec.json', ['libs/gateway/src/cli.ts', 'compose']));
    console.log('UPDATE deploy/compose/gateway.nginx.conf (libs/gateway/src/cli.ts compose)');
    tsx('libs/sdk/tsconfig.spec.json', ['libs/sdk/scripts/generate-types.ts']);
    console.log('UPDATE libs/sdk/src/generated/ (nx run sdk:generate)');
    console.log(`\n${service}: ${KIND}_SERVICE on port ${port}, ids ${o.idPrefix}_..., /api/v1/${plural}.`);
    console.log(`Next: npx nx run-many -t typecheck,build,lint,test -p ${service},contracts,sdk`);
  };
}

module.exports = resourceServiceGenerator;
module.exports.default = resourceServiceGenerator;
module.exports.insertManifestEntry = insertManifestEntry;
module.exports.readManifest = readManifest;
module.exports.singular = singular;

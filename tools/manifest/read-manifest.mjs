import { readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';

/** The manifest's file: the one place a list of the resources may be written. */
export const MANIFEST_FILE = join(dirname(fileURLToPath(import.meta.url)), '../../libs/contracts/src/manifest.ts');

/**
 * The resources of the platform manifest (libs/contracts/src/manifest.ts), read from its source with
 * the TypeScript parser: lint runs before anything is built, and the config must not keep a copy.
 * Returns [{ resource, kind, idPrefix, port }] in the manifest's order.
 */
export function readManifest(file = MANIFEST_FILE) {
  const source = ts.createSourceFile(file, readFileSync(file, 'utf8'), ts.ScriptTarget.Latest, true);
  let literal;
  source.forEachChild((node) => {
    if (!ts.isVariableStatement(node)) return;
    for (const decl of node.declarationList.declarations) {
      if (decl.name.getText(source) !== 'RESOURCE_MANIFEST' || !decl.initializer) continue;
      let init = decl.initializer;
      while (ts.isAsExpression(init) || ts.isSatisfiesExpression(init)) init = init.expression;
      literal = init;
    }
  });
  if (!literal || !ts.isObjectLiteralExpression(literal)) throw new Error(`${file}: RESOURCE_MANIFEST object literal not found`);
  const text = (node) => (ts.isStringLiteral(node) || ts.isNoSubstitutionTemplateLiteral(node) ? node.text : node.getText(source));
  return literal.properties.map((prop) => {
    const fields = Object.fromEntries(
      prop.initializer.properties.filter((p) => ts.isPropertyAssignment(p)).map((p) => [p.name.getText(source), p.initializer]),
    );
    return { resource: text(prop.name), kind: text(fields.kind), idPrefix: text(fields.idPrefix), port: Number(text(fields.port)) };
  });
}

/**
 * For shell scripts, which cannot import TypeScript:
 *   node tools/manifest/read-manifest.mjs resources   # invoices clients ... (one line, spaces)
 *   node tools/manifest/read-manifest.mjs services    # invoice-service client-service ...
 */
if (process.argv[1] === fileURLToPath(import.meta.url)) {
  const what = process.argv[2];
  const rows = readManifest();
  if (what === 'resources') console.log(rows.map((r) => r.resource).join(' '));
  else if (what === 'services') console.log(rows.map((r) => `${r.kind}-service`).join(' '));
  else {
    console.error('usage: node tools/manifest/read-manifest.mjs resources|services');
    process.exitCode = 64;
  }
}

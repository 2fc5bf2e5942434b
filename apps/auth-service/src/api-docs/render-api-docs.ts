/** Renders the OpenAPI document as one self-contained HTML page: no script, no external asset. */

type Json = Record<string, unknown>;

const escape = (value: unknown): string =>
  String(value ?? '').replace(/[&<>"']/g, (c) => ({ '&': '&amp;', '<': '&lt;', '>': '&gt;', '"': '&quot;', "'": '&#39;' })[c]!);

function resolve(doc: Json, schema: Json | undefined): Json {
  const ref = schema?.$ref as string | undefined;
  if (!ref) return schema ?? {};
  const name = ref.split('/').pop()!;
  return ((doc.components as Json).schemas as Json)[name] as Json;
}

function typeOf(schema: Json): string {
  if (schema.$ref) return String(schema.$ref).split('/').pop()!;
  if (schema.const !== undefined) return JSON.stringify(schema.const);
  if (schema.enum) return (schema.enum as unknown[]).map((v) => JSON.stringify(v)).join(' | ');
  const type = Array.isArray(schema.type) ? (schema.type as string[]).join(' | ') : String(schema.type ?? 'any');
  if (type === 'array' && schema.items) return `${typeOf(schema.items as Json)}[]`;
  return schema.format ? `${type} (${String(schema.format)})` : type;
}

function fieldsTable(doc: Json, schema: Json | undefined): string {
  const resolved = resolve(doc, schema);
  // One table per alternative (the token endpoint's two grants), each under its schema name.
  if (Array.isArray(resolved.oneOf)) {
    return (resolved.oneOf as Json[]).map((alt) => `<p><code>${escape(typeOf(alt))}</code></p>${fieldsTable(doc, alt)}`).join('');
  }
  const properties = resolved.properties as Record<string, Json> | undefined;
  if (!properties) return `<p><code>${escape(typeOf(schema ?? {}))}</code></p>`;
  const required = new Set((resolved.required as string[]) ?? []);
  const rows = Object.entries(properties)
    .map(([name, p]) => {
      const limits = ['minimum', 'maximum', 'minLength', 'maxLength', 'minItems', 'maxItems', 'pattern']
        .filter((k) => p[k] !== undefined)
        .map((k) => `${k} ${escape(p[k])}`)
        .join(', ');
      return `<tr><td><code>${escape(name)}</code>${required.has(name) ? ' <strong>required</strong>' : ''}</td><td><code>${escape(typeOf(p))}</code></td><td>${escape(p.description)}${limits ? ` <small>(${limits})</small>` : ''}</td></tr>`;
    })
    .join('');
  return `<table><thead><tr><th>field</th><th>type</th><th>notes</th></tr></thead><tbody>${rows}</tbody></table>`;
}

export function renderApiDocs(doc: Json): string {
  const info = doc.info as Json;
  const sections = Object.entries(doc.paths as Record<string, Record<string, Json>>)
    .flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, op]) => {
        const security = ((op.security as Array<Record<string, string[]>>) ?? [])
          .flatMap((s) => Object.entries(s).map(([scheme, scopes]) => (scopes.length ? `${scheme} (${scopes.join(', ')})` : scheme)))
          .filter(Boolean)
          .join(' or ');
        const params = ((op.parameters as Json[]) ?? [])
          .map((p) => `<tr><td><code>${escape(p.name)}</code></td><td>${escape(p.in)}</td><td><code>${escape(typeOf((p.schema as Json) ?? {}))}</code></td><td>${escape(p.description)}</td></tr>`)
          .join('');
        const body = (op.requestBody as Json | undefined)?.content as Record<string, Json> | undefined;
        const bodySchema = body ? (Object.values(body)[0].schema as Json) : undefined;
        const responses = Object.entries(op.responses as Record<string, Json>)
          .map(([status, r]) => `<li><code>${escape(status)}</code> ${escape(r.description)}</li>`)
          .join('');
        return `<section id="${escape(op.operationId)}">
  <h3><span class="method ${escape(method)}">${escape(method.toUpperCase())}</span> <code>${escape(path)}</code></h3>
  <p>${escape(op.summary)}</p>${op.description ? `<p>${escape(op.description)}</p>` : ''}
  ${security ? `<p><strong>Auth:</strong> ${escape(security)}</p>` : ''}
  ${params ? `<h4>Parameters</h4><table><thead><tr><th>name</th><th>in</th><th>type</th><th>notes</th></tr></thead><tbody>${params}</tbody></table>` : ''}
  ${bodySchema ? `<h4>Request body</h4>${fieldsTable(doc, bodySchema)}` : ''}
  <h4>Responses</h4><ul>${responses}</ul>
</section>`;
      }),
    )
    .join('\n');
  return `<!doctype html>
<html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escape(info.title)}</title>
<style>
body{font:15px/1.5 system-ui,sans-serif;max-width:60rem;margin:0 auto;padding:1rem;color:#1b1f24}
code{font:13px ui-monospace,monospace;background:#f3f4f6;padding:0 .2em;border-radius:3px}
table{border-collapse:collapse;width:100%;margin:.5rem 0}td,th{border:1px solid #d0d7de;padding:.3rem .5rem;text-align:left;vertical-align:top}
section{border-top:1px solid #d0d7de;padding-top:.5rem;margin-top:1.5rem}.method{font-weight:700;padding:0 .4em;border-radius:3px;color:#fff}
.get{background:#0969da}.post{background:#1a7f37}.patch{background:#9a6700}small{color:#57606a}
</style></head>
<body><h1>${escape(info.title)} <small>${escape(info.version)}</small></h1>
<p>${escape(info.description)}</p>
<p>Machine-readable: <a href="/api/v1/openapi.json">/api/v1/openapi.json</a> (OpenAPI 3.1).</p>
${sections}
</body></html>`;
}

import { ASYNCAPI_PATH, escapeHtml, NAV_CSS, pageHead, siteNav } from './docs-site';

/**
 * The events page at /api/v1/docs/events: the AsyncAPI document (/api/v1/asyncapi.json) rendered
 * on the server as plain HTML, since Redoc renders OpenAPI only. Servers, channels (topics),
 * operations and messages, each message with its Kafka key, headers, payload schema and example.
 * No script at all and nothing from another origin: the docs site's CSP (DOCS_CSP) holds, and
 * the inline <style> is what its `style-src 'unsafe-inline'` already admits. Built once at start.
 */

type Json = Record<string, unknown>;
type Schema = Json;

interface Row {
  path: string;
  type: string;
  required: boolean;
  rules: string[];
  description: string;
}

/** Inline markdown of the document's texts: `code`, **strong**; everything escaped first. */
function inline(text: string): string {
  return escapeHtml(text)
    .replace(/`([^`]+)`/g, '<code>$1</code>')
    .replace(/\*\*([^*]+)\*\*/g, '<strong>$1</strong>')
    .replace(/(^|[^*\w])\*([^*\s][^*]*)\*(?!\w)/g, '$1<em>$2</em>');
}

/** Paragraphs (blank-line separated) and `- ` lists. */
function blocks(text: string | undefined): string {
  if (!text) return '';
  return text
    .split(/\n\s*\n/)
    .map((block) => {
      const lines = block.split('\n');
      if (lines.every((l) => /^\s*- /.test(l))) return `<ul>${lines.map((l) => `<li>${inline(l.replace(/^\s*- /, ''))}</li>`).join('')}</ul>`;
      return `<p>${inline(block)}</p>`;
    })
    .join('\n');
}

const code = (text: string) => `<code>${escapeHtml(text)}</code>`;
const json = (value: unknown) => escapeHtml(JSON.stringify(value));

/** What a schema constrains, besides its type. */
function rulesOf(schema: Schema): string[] {
  const rules: string[] = [];
  if ('const' in schema) rules.push(`always <code>${json(schema.const)}</code>`);
  if (Array.isArray(schema.enum)) rules.push(`one of ${schema.enum.map((v) => `<code>${json(v)}</code>`).join(', ')}`);
  if (typeof schema.format === 'string') rules.push(`format ${code(schema.format)}`);
  if (typeof schema.pattern === 'string') rules.push(`pattern ${code(schema.pattern)}`);
  for (const [keyword, label] of [
    ['minLength', 'min length'],
    ['maxLength', 'max length'],
    ['minimum', 'minimum'],
    ['maximum', 'maximum'],
    ['minItems', 'min items'],
    ['maxItems', 'max items'],
  ] as const) {
    if (typeof schema[keyword] === 'number') rules.push(`${label} ${schema[keyword] as number}`);
  }
  if (schema.uniqueItems === true) rules.push('unique items');
  if (schema.additionalProperties === false) rules.push('no other properties');
  return rules;
}

function typeOf(schema: Schema): string {
  if (schema.type === 'array' && schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items)) return `array of ${typeOf(schema.items as Schema)}`;
  if (Array.isArray(schema.type)) return schema.type.join(' | ');
  if (typeof schema.type === 'string') return schema.type;
  if ('const' in schema) return typeof schema.const;
  if (Array.isArray(schema.enum)) return [...new Set(schema.enum.map((v) => (v === null ? 'null' : typeof v)))].join(' | ');
  return 'any';
}

/** One row per property, depth first (`data.session_ids[]` for an array's items). */
function rowsOf(schema: Schema, path = '', required = true, rows: Row[] = []): Row[] {
  if (path) rows.push({ path, type: typeOf(schema), required, rules: rulesOf(schema), description: typeof schema.description === 'string' ? schema.description : '' });
  const properties = schema.properties as Record<string, Schema> | undefined;
  const requiredNames = new Set(Array.isArray(schema.required) ? (schema.required as string[]) : []);
  for (const [name, sub] of Object.entries(properties ?? {})) rowsOf(sub, path ? `${path}.${name}` : name, requiredNames.has(name), rows);
  if (schema.items && typeof schema.items === 'object' && !Array.isArray(schema.items)) {
    const items = schema.items as Schema;
    if (items.properties) rowsOf(items, `${path}[]`, true, rows);
    else if (path && rulesOf(items).length > 0) rows.push({ path: `${path}[]`, type: typeOf(items), required: true, rules: rulesOf(items), description: typeof items.description === 'string' ? items.description : '' });
  }
  return rows;
}

function schemaTable(schema: Schema, caption: string): string {
  const rows = rowsOf(schema);
  const body = rows
    .map(
      (r) =>
        `<tr><td><code>${escapeHtml(r.path)}</code>${r.required ? '' : ' <span class="optional">optional</span>'}</td><td>${escapeHtml(r.type)}</td><td>${[...r.rules, ...(r.description ? [inline(r.description)] : [])].join('<br>')}</td></tr>`,
    )
    .join('\n');
  return `<table class="schema"><caption>${escapeHtml(caption)}</caption><thead><tr><th>Field</th><th>Type</th><th>Rules and meaning</th></tr></thead><tbody>\n${body}\n</tbody></table>`;
}

/** Anchors: the document's ids, kept readable (they are [\w.-] already; anything else is replaced). */
const anchor = (kind: string, id: string) => `${kind}-${id.replace(/[^\w.-]/g, '-')}`;

/** The events page of an AsyncAPI 3.0 document (buildAsyncApiDocument's). */
export function buildEventsPage(doc: Json): string {
  const resolve = <T = Json>(value: unknown): T => {
    const ref = (value as { $ref?: unknown } | null)?.$ref;
    if (typeof ref !== 'string') return value as T;
    const target = ref
      .replace(/^#\//, '')
      .split('/')
      .reduce<unknown>((node, part) => (node as Json | undefined)?.[part.replace(/~1/g, '/').replace(/~0/g, '~')], doc);
    if (target === undefined) throw new Error(`unresolved $ref ${ref} in the AsyncAPI document`);
    return resolve<T>(target);
  };
  const idOfRef = (value: unknown) => String((value as { $ref: string }).$ref).split('/').pop() as string;

  const info = doc.info as { title: string; version: string; description?: string };
  const servers = (doc.servers ?? {}) as Record<string, { host: string; protocol: string; title?: string; description?: string }>;
  const channels = (doc.channels ?? {}) as Record<string, { address: string; title?: string; description?: string; messages?: Json; bindings?: { kafka?: Json } }>;
  const operations = (doc.operations ?? {}) as Record<string, { action: string; channel: unknown; title?: string; summary?: string; description?: string; messages?: unknown[] }>;
  const messages = Object.entries(channels).flatMap(([channelId, channel]) =>
    Object.entries(channel.messages ?? {}).map(([id, ref]) => ({ id, channelId, address: channel.address, message: resolve<Json>(ref) })),
  );
  const title = escapeHtml(info.title);

  const toc = `<nav class="toc" aria-label="Contents">
<p><a href="#servers">Servers</a></p>
<p><a href="#channels">Channels</a></p>
<ul>${Object.entries(channels).map(([id, c]) => `<li><a href="#${anchor('channel', id)}">${code(c.address)}</a></li>`).join('')}</ul>
<p><a href="#operations">Operations</a></p>
<p><a href="#messages">Messages</a></p>
<ul>${messages.map((m) => `<li><a href="#${anchor('message', m.id)}">${code(m.id)}</a></li>`).join('')}</ul>
</nav>`;

  const serverRows = Object.entries(servers)
    .map(([id, s]) => `<tr id="${anchor('server', id)}"><td>${code(id)}</td><td>${code(s.host)}</td><td>${escapeHtml(s.protocol)}</td><td>${s.title ? `<strong>${escapeHtml(s.title)}</strong><br>` : ''}${inline(s.description ?? '')}</td></tr>`)
    .join('\n');

  const channelSections = Object.entries(channels)
    .map(([id, c]) => {
      const kafka = (c.bindings?.kafka ?? {}) as { partitions?: number; replicas?: number; topicConfiguration?: Json };
      const settings = [
        ...(kafka.partitions ? [`<tr><th>partitions</th><td>${kafka.partitions}</td></tr>`] : []),
        ...Object.entries(kafka.topicConfiguration ?? {}).map(([k, v]) => `<tr><th>${escapeHtml(k)}</th><td>${code(Array.isArray(v) ? v.join(',') : String(v))}</td></tr>`),
      ].join('');
      const ops = Object.entries(operations).filter(([, o]) => idOfRef(o.channel) === id);
      return `<section id="${anchor('channel', id)}" class="item">
<h3>${code(c.address)}${c.title ? ` <span class="subtitle">${escapeHtml(c.title)}</span>` : ''}</h3>
${blocks(c.description)}
${settings ? `<table class="settings"><caption>Kafka topic</caption><tbody>${settings}</tbody></table>` : ''}
<p>Operations: ${ops.map(([opId, o]) => `<a href="#${anchor('operation', opId)}">${code(o.action)} ${code(opId)}</a>`).join(', ') || 'none'}</p>
<p>Messages: ${Object.keys(c.messages ?? {}).map((m) => `<a href="#${anchor('message', m)}">${code(m)}</a>`).join(', ')}</p>
</section>`;
    })
    .join('\n');

  const operationSections = Object.entries(operations)
    .map(([id, o]) => {
      const channel = resolve<{ address: string }>(o.channel);
      const channelId = idOfRef(o.channel);
      return `<section id="${anchor('operation', id)}" class="item">
<h3><span class="action">${escapeHtml(o.action)}</span> ${code(id)}${o.summary ? ` <span class="subtitle">${escapeHtml(o.summary)}</span>` : ''}</h3>
${o.title ? `<p>${inline(o.title)}</p>` : ''}
<p>Channel: <a href="#${anchor('channel', channelId)}">${code(channel.address)}</a>. Messages: ${(o.messages ?? []).map((m) => `<a href="#${anchor('message', idOfRef(m))}">${code(idOfRef(m))}</a>`).join(', ')}</p>
${blocks(o.description)}
</section>`;
    })
    .join('\n');

  const messageSections = messages
    .map(({ id, channelId, address, message }) => {
      const payload = resolve<Schema>(message.payload);
      const headers = message.headers ? resolve<Schema>(message.headers) : undefined;
      const key = ((message.bindings as { kafka?: { key?: unknown } } | undefined)?.kafka?.key ?? undefined) as unknown;
      const examples = (message.examples ?? []) as Array<{ name?: string; summary?: string; payload?: unknown; headers?: unknown }>;
      return `<section id="${anchor('message', id)}" class="item">
<h3>${code(String(message.name ?? id))}</h3>
<p>On <a href="#${anchor('channel', channelId)}">${code(address)}</a>${message.contentType ? `, content type ${code(String(message.contentType))}` : ''}.</p>
${typeof message.summary === 'string' ? `<p class="summary">${inline(message.summary)}</p>` : ''}
${blocks(typeof message.description === 'string' ? message.description : undefined)}
${key ? schemaTable({ properties: { key: resolve<Schema>(key) }, required: ['key'] }, 'Kafka message key') : ''}
${headers ? schemaTable(headers, 'Kafka headers') : ''}
${schemaTable(payload, 'Payload (the message value)')}
<details><summary>Payload JSON Schema</summary><pre>${escapeHtml(JSON.stringify(payload, null, 2))}</pre></details>
${examples.map((e) => `<details open><summary>Example${e.summary ? `: ${escapeHtml(e.summary)}` : ''}</summary><pre>${escapeHtml(JSON.stringify(e.payload, null, 2))}</pre></details>`).join('\n')}
</section>`;
    })
    .join('\n');

  return `${pageHead(title, `${EVENTS_CSS}${NAV_CSS}`)}
<body>
${siteNav('events')}
<header>
<h1>${title}</h1>
<p class="meta">AsyncAPI ${escapeHtml(String(doc.asyncapi))}, version ${escapeHtml(info.version)}. The document: <a href="${ASYNCAPI_PATH}">${ASYNCAPI_PATH}</a>.</p>
</header>
<div class="layout">
${toc}
<main>
<section id="overview">
${blocks(info.description)}
</section>
<section id="servers">
<h2>Servers</h2>
<table><thead><tr><th>Server</th><th>Host</th><th>Protocol</th><th>Description</th></tr></thead><tbody>
${serverRows}
</tbody></table>
</section>
<section id="channels">
<h2>Channels</h2>
${channelSections}
</section>
<section id="operations">
<h2>Operations</h2>
${operationSections}
</section>
<section id="messages">
<h2>Messages</h2>
${messageSections}
</section>
</main>
</div>
</body>
</html>
`;
}

/** System fonts only (nothing to fetch), as the reference page. */
const EVENTS_CSS = [
  'body{margin:0;font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,"Noto Sans",sans-serif;color:#1f2933;line-height:1.5}',
  'code,pre{font-family:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace;font-size:.875em}',
  'code{background:#f1f3f5;padding:0 .25em;border-radius:3px}',
  'pre{background:#263238;color:#eceff1;padding:1em;overflow:auto;border-radius:4px}',
  'header{padding:1em 2em;border-bottom:1px solid #dde1e6}',
  'h1{margin:.5em 0 0}',
  '.meta{color:#52606d;margin:.25em 0 0}',
  '.layout{display:flex;align-items:flex-start}',
  '.toc{position:sticky;top:0;max-height:100vh;overflow:auto;flex:0 0 18em;padding:1em 1.5em;border-right:1px solid #dde1e6;font-size:.875em;box-sizing:border-box}',
  '.toc ul{list-style:none;padding-left:.5em;margin:0}',
  '.toc p{margin:.75em 0 .25em;font-weight:600}',
  'main{flex:1;min-width:0;padding:0 2em 4em;max-width:70em}',
  'h2{margin-top:2em;border-bottom:1px solid #dde1e6}',
  '.item{border-top:1px solid #eef0f2;padding-top:.5em;margin-top:1.5em}',
  '.subtitle{font-weight:400;color:#52606d;font-size:.9em}',
  '.action{text-transform:uppercase;font-size:.75em;background:#2f6f4f;color:#fff;padding:.15em .5em;border-radius:3px;vertical-align:middle}',
  'table{border-collapse:collapse;margin:1em 0;width:100%}',
  'caption{text-align:left;font-weight:600;padding:.25em 0}',
  'th,td{border:1px solid #dde1e6;padding:.35em .6em;text-align:left;vertical-align:top}',
  'table.settings{width:auto}',
  '.optional{color:#7b8794;font-size:.8em}',
  'details{margin:.75em 0}',
  'summary{cursor:pointer;font-weight:600}',
  '@media (max-width:60em){.layout{display:block}.toc{position:static;max-height:none;border-right:0}}',
].join('\n');

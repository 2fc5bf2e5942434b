/**
 * Item 7 of docs/resilience.md: a hostile client against every write endpoint, the token, refresh
 * and revoke endpoints and the settings endpoints, through the gateway. Each case must get a 4xx in
 * the format of docs/api.md (sections 4 and 8) (problem+json; RFC 6749 JSON on /api/v1/auth/*), a 422 naming the field when a
 * field was the problem, and no row from a refused request. Runs against RESILIENCE_BASE_URL when
 * set (an already running stack), otherwise starts the built services itself.
 */
import { ALL_SCOPES, MONEY_MAX, parsePublicId } from '@invoicing/contracts';
import { Client } from 'pg';
import { runCommand, ServiceProcess, sleep, startService } from '../support/processes';
import { loopbackUrls } from '../support/platform';
import { API_SERVICES, platformPorts } from '../support/ports';
import { DashboardSession } from './support/dashboard-session';
import { figure } from './support/figures';
import { RawAnswer, send, sendSlowly } from './support/raw-http';

/** The auth service and every resource service from 4621, the gateway on 4629. */
/** The auth service, every resource service and the webhook service from 4621, the gateway on 4629. */
const SERVICES_UNDER_TEST = [...API_SERVICES, 'webhook-service'] as const;
const PORTS = platformPorts({ first: 4621, gateway: 4629, services: SERVICES_UNDER_TEST });
const URLS = loopbackUrls(PORTS);
const BASE = process.env.RESILIENCE_BASE_URL ?? `http://127.0.0.1:${PORTS.gateway}`;
const DATABASE_URL = process.env.RESILIENCE_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/invoicing';
const processes: ServiceProcess[] = [];

type Json = Record<string, unknown>;
type Format = 'problem' | 'oauth';

interface Target {
  name: string;
  path: string;
  format: Format;
  form?: boolean;
  /** A body the endpoint accepts (fresh each call: refresh tokens are single-use). */
  valid(): Promise<Json>;
  headers(): Record<string, string>;
  /** Dotted paths of the string and integer fields to attack. */
  strings: string[];
  numbers: string[];
  /** Dotted paths of the calendar-date (`YYYY-MM-DD`) and date-time fields to attack. */
  dates?: string[];
  dateTimes?: string[];
  /** `schema.table` holding what a 2xx writes, counted per organization. */
  table?: string;
  /** Honours Idempotency-Key (a bad one is a 400); elsewhere the header means nothing. */
  idempotent?: boolean;
  /** Fields whose bad values the endpoint answers with success by its standard (RFC 7009 2.1, 2.2). */
  toleratedFields?: string[];
}

interface Case {
  target: Target;
  name: string;
  /** The field under attack, as the 422 names it (`line_items[0].description`). */
  field?: string;
  /** May the endpoint accept it (e.g. `-0` is 0)? Otherwise it must be refused. */
  mayAccept?: boolean;
  /** The one status that is right (e.g. 413 for a body over the limit). */
  status?: number;
  headers?: Record<string, string>;
  body(): Promise<string | Buffer | undefined>;
}

// --- the caller: a dashboard user, one key with every scope, its tokens ---------------------------
const session = new DashboardSession();
let organizationId = '';
let key = { client_id: '', client_secret: '' };
let accessToken = '';
let clientId = '';
let invoiceId = '';

async function json(method: string, path: string, body: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> {
  return send(BASE, method, path, { 'content-type': 'application/json', ...headers }, JSON.stringify(body));
}
async function exchange(): Promise<{ access_token: string; refresh_token: string }> {
  const r = await json('POST', '/api/v1/auth/token', { grant_type: 'client_credentials', ...key });
  if (r.status !== 200) throw new Error(`exchange: ${r.status} ${r.text}`);
  return r.json as { access_token: string; refresh_token: string };
}
const bearer = () => ({ authorization: `Bearer ${accessToken}` });
const dashboard = () => session.headers();

// --- bodies -------------------------------------------------------------------------------------
function setPath(body: Json, path: string, value: unknown): Json {
  const copy = structuredClone(body);
  const parts = path.split('.');
  let at: Record<string, unknown> = copy;
  for (const p of parts.slice(0, -1)) at = at[p] as Record<string, unknown>;
  at[parts[parts.length - 1]] = value;
  return copy;
}
/** `line_items.0.description` → `line_items[0].description` (the 422's notation). */
const fieldName = (path: string) => path.replace(/\.(\d+)/g, '[$1]');
/** JSON text with one value replaced by raw text (numbers JSON.stringify cannot write). */
function withRawValue(body: Json, path: string, raw: string): string {
  const marker = '__RAW_VALUE_MARKER__';
  return JSON.stringify(setPath(body, path, marker)).replace(`"${marker}"`, raw);
}
function encode(target: Target, body: Json): string {
  if (!target.form) return JSON.stringify(body);
  return new URLSearchParams(Object.entries(body).map(([k, v]) => [k, String(v)])).toString();
}
function contentType(target: Target): Record<string, string> {
  return { 'content-type': target.form ? 'application/x-www-form-urlencoded' : 'application/json' };
}

const STRING_ATTACKS: Array<{ name: string; value: string; mayAccept?: boolean }> = [
  { name: 'U+0000', value: 'a\u0000b' },
  { name: 'U+0001', value: 'a\u0001b' },
  { name: 'U+0008 (backspace)', value: 'a\bb' },
  { name: 'U+001B (escape)', value: 'a\u001b[31mb' },
  { name: 'U+007F (delete)', value: 'a\u007fb' },
  { name: 'lone high surrogate', value: 'a\ud800b' },
  { name: 'lone low surrogate', value: 'a\udc00b' },
  { name: 'reversed surrogate pair', value: 'a\udc00\ud800b' },
  { name: 'only whitespace', value: '   ', mayAccept: true },
  { name: 'tab and newline', value: 'a\tb\nc', mayAccept: true },
  { name: 'emoji and combining marks', value: 'Zoë 🧾 e\u0301', mayAccept: true },
  { name: 'right-to-left override', value: 'a\u202eb', mayAccept: true },
  { name: 'a 900 KiB string', value: 'x'.repeat(900 * 1024) },
  { name: 'an object instead of a string', value: { $ne: null } as unknown as string },
  { name: 'an array instead of a string', value: ['a'] as unknown as string },
];
const NUMBER_ATTACKS: Array<{ name: string; raw: string; mayAccept?: boolean }> = [
  { name: '1e309', raw: '1e309' },
  { name: '-1e309', raw: '-1e309' },
  { name: '2^53+1', raw: '9007199254740993' },
  { name: '2^63', raw: '9223372036854775808' },
  { name: '-2^31-1', raw: '-2147483649' },
  { name: '2^31', raw: '2147483648', mayAccept: true },
  { name: '-0', raw: '-0', mayAccept: true },
  { name: '0.1e1', raw: '0.1e1', mayAccept: true },
  { name: '1.5', raw: '1.5' },
  { name: '1e-400', raw: '1e-400', mayAccept: true },
  { name: 'a numeric string', raw: '"12"' },
  { name: 'NaN as text', raw: 'NaN' },
  { name: 'true', raw: 'true' },
];

/** Dates Postgres or the documents cannot hold, and days that do not exist (docs/api.md section 2). */
const DATE_ATTACKS: Array<{ name: string; value: string; mayAccept?: boolean }> = [
  { name: 'year 0000', value: '0000-01-01' },
  { name: 'year 0001', value: '0001-01-01' },
  { name: 'the day before 1900', value: '1899-12-31' },
  { name: 'a five-digit year', value: '10000-01-01' },
  { name: 'a signed year', value: '+002026-01-01' },
  { name: '29 February of a common year', value: '2023-02-29' },
  { name: 'month 00', value: '2026-00-10' },
  { name: '9999-12-31', value: '9999-12-31', mayAccept: true },
  { name: '1900-01-01', value: '1900-01-01', mayAccept: true },
];
const DATE_TIME_ATTACKS: Array<{ name: string; value: string; mayAccept?: boolean }> = [
  { name: 'year 0000', value: '0000-01-01T00:00:00Z' },
  { name: 'before 1900 (UTC)', value: '1899-12-31T23:59:59Z' },
  { name: 'past 9999 once in UTC', value: '9999-12-31T23:59:59-01:00' },
  { name: 'a five-digit year', value: '10000-01-01T00:00:00Z' },
  { name: 'hour 24', value: '2026-11-26T24:00:00Z' },
  { name: 'a leap second', value: '2026-12-31T23:59:60Z' },
  { name: 'no offset', value: '2026-11-26T10:00:00' },
  { name: 'an offset of +24:00', value: '2026-11-26T10:00:00+24:00' },
  { name: 'a late offset that stays in range', value: '1899-12-31T23:00:00-02:00', mayAccept: true },
];

function deep(depth: number, open: string, close: string, inner = '1'): string {
  return open.repeat(depth) + inner + close.repeat(depth);
}

function casesFor(target: Target): Case[] {
  const cases: Case[] = [];
  const raw = (name: string, body: () => Promise<string | Buffer | undefined>, extra: Partial<Case> = {}) =>
    cases.push({ target, name, body, ...extra });
  for (const path of target.strings) {
    for (const attack of STRING_ATTACKS) {
      raw(`${path}: ${attack.name}`, async () => encode(target, setPath(await target.valid(), path, attack.value)), {
        field: fieldName(path),
        mayAccept: attack.mayAccept || target.toleratedFields?.includes(path),
      });
    }
  }
  for (const path of target.numbers) {
    for (const attack of NUMBER_ATTACKS) {
      raw(`${path}: ${attack.name}`, async () => withRawValue(await target.valid(), path, attack.raw), {
        field: fieldName(path),
        mayAccept: attack.mayAccept,
      });
    }
  }
  for (const [paths, attacks] of [
    [target.dates ?? [], DATE_ATTACKS],
    [target.dateTimes ?? [], DATE_TIME_ATTACKS],
  ] as const) {
    for (const path of paths) {
      for (const attack of attacks) {
        raw(`${path}: ${attack.name}`, async () => encode(target, setPath(await target.valid(), path, attack.value)), {
          field: fieldName(path),
          mayAccept: attack.mayAccept,
        });
      }
    }
  }
  if (target.form) {
    raw('repeated parameter', async () => `${encode(target, await target.valid())}&${target.strings[0]}=x`, {
      mayAccept: target.toleratedFields?.includes(target.strings[0]),
    });
    raw('a 2 MiB form', async () => `${encode(target, await target.valid())}&x=${'x'.repeat(2 * 1024 * 1024)}`, { status: 413 });
    raw('form body sent as JSON content type', async () => encode(target, await target.valid()), { headers: { 'content-type': 'application/json' } });
    // RFC 6749 section 3.2: unrecognized parameters are ignored, so these may succeed.
    raw('invalid percent-encoding in an unknown parameter', async () => `${encode(target, await target.valid())}&x=%zz%`, { mayAccept: true });
    raw('NUL in an unknown parameter name', async () => `${encode(target, await target.valid())}&a%00b=1`, { mayAccept: true });
    raw('10,000 unknown parameters', async () => `${encode(target, await target.valid())}&${Array.from({ length: 10000 }, (_, i) => `p${i}=1`).join('&')}`, {
      mayAccept: true,
    });
    return cases;
  }
  const first = target.strings[0].split('.')[0];
  raw('__proto__ key', async () => JSON.stringify(await target.valid()).replace(/^\{/, '{"__proto__":{"admin":true},'));
  raw('constructor.prototype key', async () =>
    JSON.stringify(await target.valid()).replace(/^\{/, '{"constructor":{"prototype":{"admin":true}},'),
  );
  raw('__proto__ nested in a field', async () => withRawValue(await target.valid(), first, '{"__proto__":{"x":1}}'));
  raw('duplicate key (last one valid)', async () => JSON.stringify(await target.valid()).replace(/^\{/, `{"${first}":"a\\u0000b",`), {
    mayAccept: true,
  });
  raw('duplicate key (last one bad)', async () => JSON.stringify(await target.valid()).replace(/\}$/, `,"${first}":"a\\u0000b"}`));
  raw('10,000-deep arrays in a field', async () => withRawValue(await target.valid(), first, deep(10000, '[', ']')));
  raw('10,000-deep objects as the body', async () => deep(10000, '{"a":', '}'));
  raw('100,000-deep arrays as the body', async () => deep(100000, '[', ']'));
  raw('10,000-deep arrays with an Idempotency-Key', async () => deep(10000, '[', ']'), { headers: { 'idempotency-key': `deep-${Date.now()}` } });
  raw('body is null', async () => 'null');
  raw('body is an array', async () => '[]');
  raw('body is a string', async () => '"x"');
  raw('body is a number', async () => '1e309');
  raw('empty body', async () => '');
  raw('truncated JSON', async () => JSON.stringify(await target.valid()).slice(0, -3));
  raw('trailing garbage', async () => `${JSON.stringify(await target.valid())}x`);
  raw('two JSON documents', async () => `${JSON.stringify(await target.valid())}${JSON.stringify(await target.valid())}`);
  // In an unknown member: resources refuse the member, the token endpoints ignore it (RFC 6749 3.2).
  raw('invalid UTF-8 bytes', async () => Buffer.concat([Buffer.from(JSON.stringify(await target.valid()).slice(0, -1)), Buffer.from(',"x":"\xc3\x28"}', 'latin1')]), {
    mayAccept: target.format === 'oauth',
  });
  raw('UTF-16 body', async () => Buffer.from(JSON.stringify(await target.valid()), 'utf16le'), { headers: { 'content-type': 'application/json; charset=utf-16' } });
  // RFC 8259 section 8.1 lets a parser ignore a byte order mark.
  raw('a BOM first', async () => `\ufeff${JSON.stringify(await target.valid())}`, { mayAccept: true });
  raw('a 2 MiB body', async () => withRawValue(await target.valid(), first, `"${'x'.repeat(2 * 1024 * 1024)}"`), { status: 413 });
  raw('text/plain content type', async () => JSON.stringify(await target.valid()), { headers: { 'content-type': 'text/plain' } });
  raw('form content type', async () => JSON.stringify(await target.valid()), { headers: { 'content-type': 'application/x-www-form-urlencoded' } });
  raw('multipart content type', async () => JSON.stringify(await target.valid()), { headers: { 'content-type': 'multipart/form-data; boundary=x' } });
  raw('no content type', async () => JSON.stringify(await target.valid()), { headers: { 'content-type': '' } });
  // Legal HTTP, however odd: taken as any other request (within Node's 16 KiB header limit).
  raw('500 parameters on the content type', async () => JSON.stringify(await target.valid()), {
    headers: { 'content-type': `application/json; ${'a=b; '.repeat(500)}` },
    mayAccept: true,
  });
  raw('a 12 KiB header', async () => JSON.stringify(await target.valid()), { headers: { 'x-junk': 'j'.repeat(12 * 1024) }, mayAccept: true });
  raw('a 64 KiB header', async () => JSON.stringify(await target.valid()), { headers: { 'x-junk': 'j'.repeat(64 * 1024) } });
  raw('500 headers', async () => JSON.stringify(await target.valid()), {
    headers: Object.fromEntries(Array.from({ length: 500 }, (_, i) => [`x-h${i}`, 'v'])),
    mayAccept: true,
  });
  // Only the resource endpoints take a bearer token; the others ignore the header.
  raw('an 8 KiB Authorization header', async () => JSON.stringify(await target.valid()), {
    headers: { authorization: `Bearer ${'a'.repeat(8192)}` },
    mayAccept: !target.idempotent,
  });
  raw('Idempotency-Key of 300 characters', async () => JSON.stringify(await target.valid()), {
    headers: { 'idempotency-key': 'k'.repeat(300) },
    mayAccept: !target.idempotent,
  });
  raw('Idempotency-Key with non-ASCII bytes', async () => JSON.stringify(await target.valid()), {
    headers: { 'idempotency-key': Buffer.from('kéy', 'utf8').toString('latin1') },
    mayAccept: !target.idempotent,
  });
  return cases;
}

// --- what every answer must be -------------------------------------------------------------------
interface Outcome {
  target: string;
  name: string;
  status: number;
  problem?: string;
}

function checkAnswer(c: Case, answer: RawAnswer): string | null {
  if (answer.status >= 500 || answer.status === 0) return `status ${answer.status}: ${answer.text.slice(0, 300)}`;
  if (c.status !== undefined && answer.status !== c.status) return `status ${answer.status} instead of ${c.status}: ${answer.text.slice(0, 200)}`;
  if (answer.status < 400) return c.mayAccept ? null : `accepted with ${answer.status}: ${answer.text.slice(0, 200)}`;
  const type = String(answer.headers['content-type'] ?? '');
  // Node's parser refuses oversized headers before any route is known: problem+json everywhere.
  if (c.target.format === 'problem' || answer.status === 431) {
    if (!type.startsWith('application/problem+json')) return `refusal ${answer.status} is ${type || 'without a content type'}: ${answer.text.slice(0, 200)}`;
    const body = answer.json ?? {};
    if (body.status !== answer.status || typeof body.detail !== 'string' || typeof body.type !== 'string') return `malformed problem: ${answer.text.slice(0, 200)}`;
    if (answer.status === 422 && c.field) {
      const fields = ((body.errors as Array<{ field: string }> | undefined) ?? []).map((e) => e.field);
      // The field itself, or the array holding it (`scopes` for an unknown `scopes[0]`).
      const named = fields.some((f) => f === c.field || c.field?.startsWith(`${f}[`));
      if (!named) return `422 does not name ${c.field}: ${JSON.stringify(fields)}`;
    }
  } else {
    const body = answer.json ?? {};
    if (!type.startsWith('application/json') || typeof body.error !== 'string') return `refusal ${answer.status} is not an RFC 6749 error: ${answer.text.slice(0, 200)}`;
  }
  // A stack frame (`at fn (/path:1:2)`, `at /path:1:2`), not the words "at most" of a detail.
  if (/\bat [^\s(]+ \(|\bat \/|\b(stack|QueryFailedError|SELECT|INSERT|ECONN|node_modules)/.test(answer.text)) return `leaks internals: ${answer.text.slice(0, 200)}`;
  return null;
}

async function attempt(c: Case): Promise<RawAnswer> {
  const body = await c.body();
  const headers: Record<string, string> = { ...contentType(c.target), ...c.target.headers(), ...c.headers };
  if (headers['content-type'] === '') delete headers['content-type'];
  for (let tries = 0; ; tries++) {
    const answer = await send(BASE, 'POST', c.target.path, headers, body).catch(
      (e: Error): RawAnswer => ({ status: 0, headers: {}, text: `connection: ${e.message}`, json: null }),
    );
    // The per-key rate limit and the credential throttles answer 429 to a fast corpus: wait it out.
    if (answer.status !== 429 || tries > 20) return answer;
    await sleep(Math.min(5000, Number(answer.headers['retry-after'] ?? 1) * 1000));
  }
}

async function countRows(db: Client, tables: string[]): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const table of tables) {
    const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE organization_id = $1`, [organizationId]);
    counts[table] = Number(rows[0].n);
  }
  return counts;
}

beforeAll(async () => {
  if (!process.env.RESILIENCE_BASE_URL) {
    for (const service of SERVICES_UNDER_TEST) {
      await runCommand(service, ['migrate']);
    }
    for (const [name, port] of Object.entries(PORTS)) {
      processes.push(startService(name as keyof typeof PORTS, port, `${name}-hostile`, URLS));
    }
    await Promise.all(processes.map((p) => p.waitReady(90000)));
  }
  // A dashboard user (the settings endpoints), and a key with every scope made through them.
  session.keep(await send(BASE, 'GET', '/api/v1/account/csrf', {}));
  const email = `hostile-${Date.now()}@example.com`;
  const signup = await json('POST', '/api/v1/account/signup', { organization_name: 'Hostile Ltd', email, password: 'correct horse battery' }, dashboard());
  expect(signup.status).toBe(201);
  session.keep(signup);
  session.keep(await send(BASE, 'GET', '/api/v1/account/csrf', dashboard()));
  organizationId = parsePublicId('org', String((signup.json?.organization as Json).id))!;
  const created = await json(
    'POST',
    '/api/v1/settings/api-keys',
    { name: 'hostile', scopes: ALL_SCOPES },
    dashboard(),
  );
  expect(created.status).toBe(201);
  key = { client_id: String(created.json?.client_id), client_secret: String(created.json?.client_secret) };
  accessToken = (await exchange()).access_token;
  const client = await json('POST', '/api/v1/clients', { name: 'Target', currency: 'EUR' }, bearer());
  clientId = String(client.json?.id);
  const invoice = await json('POST', '/api/v1/invoices', { client_id: clientId, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 100 }] }, bearer());
  invoiceId = String(invoice.json?.id);
}, 180000);

afterAll(async () => {
  await Promise.all(processes.map((p) => p.stop()));
  // The endpoints the corpus registered point at an address of the internet: nothing is to be sent
  // there later by a stack on this database.
  if (organizationId) {
    const db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    await db.query(`UPDATE webhooks.endpoints SET deleted_at = now(), status = 'disabled' WHERE organization_id = $1`, [organizationId]).catch(() => undefined);
    await db.query(`UPDATE webhooks.deliveries SET status = 'failed', next_attempt_at = NULL WHERE organization_id = $1 AND status = 'pending'`, [organizationId]).catch(() => undefined);
    await db.end();
  }
});

function targets(): Target[] {
  const resource = (name: string, table: string, valid: () => Json, strings: string[], numbers: string[], dates: Partial<Pick<Target, 'dates' | 'dateTimes'>> = {}): Target => ({
    name: `POST /api/v1/${name}`,
    path: `/api/v1/${name}`,
    format: 'problem',
    valid: async () => valid(),
    headers: bearer,
    strings,
    numbers,
    ...dates,
    table,
    idempotent: true,
  });
  return [
    resource('clients', 'clients.clients', () => ({ name: 'Globex', email: 'ap@globex.example', tax_id: 'DE1', address: { line1: 'Main St 1', city: 'Berlin', country: 'DE' } }), [
      'name',
      'email',
      'tax_id',
      'address.line1',
      'currency',
    ], []),
    resource('products', 'products.products', () => ({ name: 'Widget', description: 'd', unit_price: 1250, currency: 'EUR', tax_rate_bps: 2000 }), [
      'name',
      'description',
      'sku',
    ], ['unit_price', 'tax_rate_bps']),
    resource(
      'invoices',
      'invoices.invoices',
      () => ({ client_id: clientId, currency: 'EUR', notes: 'n', line_items: [{ description: 'Setup', quantity: 1, unit_price: 1000 }] }),
      ['notes', 'client_id', 'line_items.0.description'],
      ['line_items.0.unit_price'],
      { dates: ['issue_date', 'due_date'] },
    ),
    resource('payments', 'payments.payments', () => ({ invoice_id: invoiceId, amount: 1, currency: 'EUR', reference: 'r' }), ['reference', 'invoice_id'], [
      'amount',
    ], { dateTimes: ['paid_at'] }),
    resource('expenses', 'expenses.expenses', () => ({ description: 'Taxi', amount: 2300, currency: 'EUR', incurred_on: '2026-11-20', vendor: 'v' }), [
      'description',
      'vendor',
      'incurred_on',
    ], ['amount'], { dates: ['incurred_on'] }),
    {
      name: 'POST /api/v1/webhook-endpoints',
      path: '/api/v1/webhook-endpoints',
      format: 'problem',
      // A literal public address: nothing to resolve on a machine without a resolver, and private
      // addresses are refused here (WEBHOOK_ALLOW_PRIVATE_URLS is off, the default).
      valid: async () => ({ url: 'https://93.184.215.14/hooks', enabled_events: ['api_key.expiring'], description: 'ERP' }),
      headers: bearer,
      strings: ['url', 'description', 'enabled_events.0'],
      numbers: [],
      table: 'webhooks.endpoints',
    },
    {
      // The same endpoint through the settings page's door: the auth service checks the session and
      // the CSRF pair, bounds the body, and forwards it with a token it mints (ADR 0038). Refusals
      // must come back in the same format; past the 16-endpoint ceiling, accepted bodies get 409.
      name: 'POST /api/v1/settings/webhook-endpoints',
      path: '/api/v1/settings/webhook-endpoints',
      format: 'problem',
      valid: async () => ({ url: 'https://93.184.215.14/settings-hooks', enabled_events: ['invoice.paid'], description: 'ERP' }),
      headers: dashboard,
      strings: ['url', 'description', 'enabled_events.0'],
      numbers: [],
      table: 'webhooks.endpoints',
    },
    {
      name: 'POST /api/v1/settings/api-keys',
      path: '/api/v1/settings/api-keys',
      format: 'problem',
      valid: async () => ({ name: 'k', scopes: ['read:invoices'] }),
      headers: dashboard,
      strings: ['name', 'scopes.0'],
      numbers: [],
      table: 'auth.api_keys',
    },
    {
      name: 'POST /api/v1/account/signup',
      path: '/api/v1/account/signup',
      format: 'problem',
      valid: async () => ({ organization_name: 'Org', email: `s-${Date.now()}-${Math.random()}@example.com`, password: 'correct horse battery' }),
      headers: dashboard,
      strings: ['organization_name', 'email', 'password'],
      numbers: [],
    },
    {
      name: 'POST /api/v1/auth/token (JSON)',
      path: '/api/v1/auth/token',
      format: 'oauth',
      valid: async () => ({ grant_type: 'client_credentials', ...key }),
      headers: () => ({}),
      strings: ['grant_type', 'client_id', 'client_secret', 'scope'],
      numbers: [],
    },
    {
      name: 'POST /api/v1/auth/token (form)',
      path: '/api/v1/auth/token',
      format: 'oauth',
      form: true,
      valid: async () => ({ grant_type: 'client_credentials', ...key }),
      headers: () => ({}),
      strings: ['grant_type', 'client_id', 'client_secret', 'scope'],
      numbers: [],
    },
    {
      name: 'POST /api/v1/auth/refresh',
      path: '/api/v1/auth/refresh',
      format: 'oauth',
      valid: async () => ({ refresh_token: (await exchange()).refresh_token }),
      headers: () => ({}),
      strings: ['refresh_token'],
      numbers: [],
    },
    {
      name: 'POST /api/v1/auth/revoke (form)',
      path: '/api/v1/auth/revoke',
      format: 'oauth',
      form: true,
      valid: async () => ({ token: (await exchange()).refresh_token, token_type_hint: 'refresh_token', ...key }),
      headers: () => ({}),
      strings: ['token', 'token_type_hint', 'client_id'],
      numbers: [],
      // RFC 7009: an invalid token is answered 200 (2.2), an unknown hint is ignored (2.1).
      toleratedFields: ['token', 'token_type_hint'],
    },
  ];
}

describe('hostile input (items 7 and 7b of docs/resilience.md)', () => {
  it('answers every hostile request with a 4xx in the documented format (docs/api.md), naming the field, and writes nothing for a refusal', async () => {
    const db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    const all = targets();
    const tables = all.flatMap((t) => (t.table ? [t.table] : []));
    const before = await countRows(db, tables);
    const accepted: Record<string, number> = Object.fromEntries(tables.map((t) => [t, 0]));
    const outcomes: Outcome[] = [];
    for (const target of all) {
      for (const c of casesFor(target)) {
        const answer = await attempt(c);
        const problem = checkAnswer(c, answer);
        outcomes.push({ target: target.name, name: c.name, status: answer.status, ...(problem ? { problem } : {}) });
        if (answer.status >= 200 && answer.status < 300 && target.table) accepted[target.table] += 1;
      }
    }
    const after = await countRows(db, tables);
    await db.end();

    const statuses: Record<string, number> = {};
    for (const o of outcomes) statuses[o.status] = (statuses[o.status] ?? 0) + 1;
    const serverErrors = outcomes.filter((o) => o.status >= 500 || o.status === 0).length;
    figure('7', 'hostile cases tried', outcomes.length, { statuses });
    figure('7', 'responses with status >= 500 (or no response)', serverErrors);
    const failures = outcomes.filter((o) => o.problem);
    if (failures.length) console.log(failures.map((f) => `${f.target} | ${f.name} | ${f.problem}`).join('\n'));
    expect(failures).toEqual([]);
    // Rows: every accepted request wrote exactly one, every refused one none.
    for (const table of tables) expect({ table, written: after[table] - before[table] }).toEqual({ table, written: accepted[table] });
  }, 600000);

  it('keeps every sum of money within its range: invoice totals, and the payments of one invoice (overflow attempts answered 422, the invoice still readable)', async () => {
    const invoice = await json('POST', '/api/v1/invoices', { client_id: clientId, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 100 }] }, bearer());
    expect(invoice.status).toBe(201);
    const id = String(invoice.json?.id);
    const product = await json('POST', '/api/v1/products', { name: 'Costly', unit_price: MONEY_MAX, currency: 'EUR' }, bearer());
    expect(product.status).toBe(201);
    const attempts: Array<[string, string, Json, string]> = [
      ['two lines of the largest price', '/api/v1/invoices', { client_id: clientId, currency: 'EUR', line_items: [{ description: 'a', quantity: 1, unit_price: MONEY_MAX }, { description: 'b', quantity: 1, unit_price: 1 }] }, 'line_items'],
      ['the largest quantity at the largest price', '/api/v1/invoices', { client_id: clientId, currency: 'EUR', line_items: [{ description: 'a', quantity: '999999999.999', unit_price: MONEY_MAX }] }, 'line_items'],
      ['tax on the largest price', '/api/v1/invoices', { client_id: clientId, currency: 'EUR', line_items: [{ description: 'a', quantity: 1, unit_price: MONEY_MAX, tax_rate_bps: 1 }] }, 'line_items'],
      ["a product's price, twice", '/api/v1/invoices', { client_id: clientId, currency: 'EUR', line_items: [{ quantity: 2, product_id: product.json?.id }] }, 'line_items'],
    ];
    const outcomes: Array<{ name: string; status: number; fields: string[] }> = [];
    for (const [name, path, body, field] of attempts) {
      const r = await json('POST', path, body, bearer());
      outcomes.push({ name, status: r.status, fields: ((r.json?.errors as Array<{ field: string }>) ?? []).map((e) => e.field) });
      expect({ name, status: r.status, named: outcomes[outcomes.length - 1].fields.includes(field) }).toEqual({ name, status: 422, named: true });
    }
    // Payments: overpayment is accepted up to the range; the next one is refused and writes nothing.
    const pay = (amount: number) => json('POST', '/api/v1/payments', { invoice_id: id, amount, currency: 'EUR' }, bearer());
    expect((await pay(MONEY_MAX - 1)).status).toBe(201);
    expect((await pay(1)).status).toBe(201);
    const past = await pay(1);
    const huge = await pay(MONEY_MAX);
    outcomes.push({ name: 'payments past the range', status: past.status, fields: [] }, { name: 'the largest payment once more', status: huge.status, fields: [] });
    expect([past.status, huge.status]).toEqual([422, 422]);
    // Applied within a second, at the bound, and the invoice and its list read as ever.
    let read: RawAnswer | null = null;
    for (let i = 0; i < 50; i++) {
      read = await send(BASE, 'GET', `/api/v1/invoices/${id}`, bearer());
      if (read.json?.amount_paid === MONEY_MAX) break;
      await sleep(100);
    }
    expect(read?.status).toBe(200);
    expect(read?.json).toMatchObject({ amount_paid: MONEY_MAX, amount_due: 0, status: 'paid' });
    expect((await send(BASE, 'GET', '/api/v1/invoices?limit=100', bearer())).status).toBe(200);
    figure('7', 'overflow attempts on summed money refused with 422', outcomes.filter((o) => o.status === 422).length, { tried: outcomes.length });
  }, 60000);

  it('refuses forged settings calls (CSRF pair, DNS rebinding, cross-site fetch metadata) and writes no key', async () => {
    const db = new Client({ connectionString: DATABASE_URL });
    await db.connect();
    const before = await countRows(db, ['auth.api_keys']);
    const body = JSON.stringify({ name: 'forged', scopes: ['read:invoices'] });
    const cookieOnly = dashboard().cookie;
    const forged: Array<[string, Record<string, string>]> = [
      // Any identical cookie and header pair passed the old double-submit check.
      ['matching csrf_token cookie and header', { cookie: `${cookieOnly}; csrf_token=x`, 'x-csrf-token': 'x' }],
      ['matching nonce cookie and header', { cookie: `${cookieOnly}; __Host-csrf_nonce=x`, 'x-csrf-token': 'x' }],
      ['DNS rebinding: Host and Origin both the attacker', { ...dashboard(), host: 'evil.com', origin: 'http://evil.com' }],
      ['no Origin, Sec-Fetch-Site: cross-site', { ...dashboard(), 'sec-fetch-site': 'cross-site' }],
      ['Origin: null', { ...dashboard(), origin: 'null' }],
    ];
    const outcomes = [];
    for (const [name, headers] of forged) {
      const r = await send(BASE, 'POST', '/api/v1/settings/api-keys', { 'content-type': 'application/json', ...headers }, body);
      outcomes.push({ name, status: r.status, type: String(r.headers['content-type']).split(';')[0] });
    }
    const after = await countRows(db, ['auth.api_keys']);
    await db.end();
    figure('7', 'forged settings calls refused', outcomes.filter((o) => o.status === 403).length, { tried: outcomes.length });
    expect(outcomes).toEqual(forged.map(([name]) => ({ name, status: 403, type: 'application/problem+json' })));
    expect(after['auth.api_keys']).toBe(before['auth.api_keys']);
  });

  it('answers the edges at the base URL in problem+json without echoing the input: metrics, bad and long URLs, two Hosts, Connection: close', async () => {
    const long = `/api/v1/invoices/${'a'.repeat(10_000)}`;
    const raw = (lines: string[]) => sendSlowly(BASE, [`${lines.join('\r\n')}\r\n\r\n`], 0, 5000);
    const cases: Array<[string, Promise<RawAnswer>, number]> = [
      ['GET /metrics on the public port', send(BASE, 'GET', '/metrics', {}), 404],
      ['GET /%zz (malformed percent-encoding, refused by the gateway)', raw(['GET /%zz HTTP/1.1', 'Host: x', 'Connection: close']), 400],
      // Well-formed escapes that are not UTF-8 pass the gateway; the service refuses them in its format.
      ['GET /api/v1/invoices/%ff (not UTF-8, refused by the service)', raw(['GET /api/v1/invoices/%ff HTTP/1.1', 'Host: x', 'Connection: close']), 400],
      ['a 10,000-character path', raw([`GET ${long} HTTP/1.1`, 'Host: x', 'Connection: close']), 414],
      ['two Host headers', raw(['GET /api/v1/invoices HTTP/1.1', 'Host: a.example', 'Host: b.example', 'Connection: close']), 400],
    ];
    const outcomes = [];
    for (const [name, answer, status] of cases) {
      const r = await answer;
      outcomes.push({ name, status: r.status, problem: String(r.headers['content-type']).startsWith('application/problem+json'), echoes: /%ff|%zz|aaaaaaaa|b\.example/.test(r.text) });
      expect({ name, status: r.status }).toEqual({ name, status });
    }
    expect(outcomes.filter((o) => !o.problem || o.echoes)).toEqual([]);
    // Connection: close is honoured on a proxied route: the server closes the socket after the answer.
    const startedAt = Date.now();
    const closed = await raw(['GET /api/v1/expenses?limit=1 HTTP/1.1', 'Host: x', `Authorization: Bearer ${accessToken}`, 'Connection: close']);
    expect(closed.status).toBe(200);
    expect(closed.headers.connection).toBe('close');
    expect(Date.now() - startedAt).toBeLessThan(3000);
    figure('7', 'edge requests at the base URL answered in problem+json', outcomes.length);
  });

  it('keeps answering while 50 clients send their bodies one byte at a time, and takes a slow but complete body', async () => {
    const body = JSON.stringify({ description: 'Slow taxi', amount: 100, currency: 'EUR', incurred_on: '2026-11-20' });
    const head = (length: number) =>
      `POST /api/v1/expenses HTTP/1.1\r\nhost: x\r\nauthorization: Bearer ${accessToken}\r\ncontent-type: application/json\r\ncontent-length: ${length}\r\nconnection: close\r\n\r\n`;
    // 50 connections that never finish their body (they stop after 10 bytes)...
    const stalled = Array.from({ length: 50 }, () => sendSlowly(BASE, [head(body.length), ...body.slice(0, 10).split('')], 200, 8000));
    await sleep(500);
    // ...while a normal request is answered at once,
    const startedAt = Date.now();
    const normal = await send(BASE, 'GET', '/api/v1/expenses?limit=1', bearer());
    const normalMs = Date.now() - startedAt;
    expect(normal.status).toBe(200);
    // and a body sent in 20 pieces over ~2 s is taken as a whole.
    const pieces = body.match(/.{1,4}/g) ?? [];
    const slow = await sendSlowly(BASE, [head(body.length), ...pieces], Math.ceil(2000 / pieces.length));
    expect(slow.status).toBe(201);
    const stalledAnswers = await Promise.all(stalled);
    const stalled5xx = stalledAnswers.filter((a) => a.status >= 500).length;
    figure('7', 'slow bodies: latency of a normal request during 50 stalled uploads', `${normalMs} ms`);
    figure('7', 'slow bodies: stalled uploads answered with 5xx', stalled5xx);
    expect(stalled5xx).toBe(0);
  }, 120000);
});

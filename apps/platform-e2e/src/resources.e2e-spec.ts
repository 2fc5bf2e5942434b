import { ALL_SCOPES, Resource, RESOURCES } from '@invoicing/contracts';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { claimsOf, http, HttpResult, TokenPair } from './support/api';
import { createKey, itWhen, Platform, STACK, startPlatform } from './support/platform';
import { platformPorts } from './support/ports';
import { sleep } from './support/processes';
import { DashboardUser } from './support/dashboard';
import { spawnSync } from 'node:child_process';

/** Every service of the platform as a process (the auth service and every resource service from 4121), behind the gateway (4129): one base URL. */
const PORTS = platformPorts({ first: 4121, gateway: 4129 });
let BASE: string;

let platform: Platform;

const newKey = () => createKey('E2E Resources', 'all', ALL_SCOPES.join(','));

async function exchange(key: { client_id: string; client_secret: string }): Promise<TokenPair> {
  const r = await http('POST', `${BASE}/api/v1/auth/token`, { body: { ...key, grant_type: 'client_credentials' } });
  expect(r.status).toBe(200);
  return r.body as unknown as TokenPair;
}

type Parameter = { name: string; in: string; explode?: boolean; schema: Record<string, unknown> };

/**
 * The served OpenAPI document (/api/v1/openapi.json), and checks against it: an answer's body
 * against the schema the document gives for its path, method, status and media type; the query
 * parameters sent against the operation's declared parameters.
 */
async function servedContract() {
  const doc = await http('GET', `${BASE}/api/v1/openapi.json`);
  expect(doc.status).toBe(200);
  // OpenAPI 3.1 schemas are JSON Schema 2020-12; the document is added whole so its internal
  // $refs (#/components/schemas/...) resolve.
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc.body, $id: 'openapi.json' });
  const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  const paths = doc.body.paths as Record<string, Record<string, { parameters?: Parameter[] }>>;
  const checked: string[] = [];
  return {
    checked,
    paths,
    expectDeclared(path: string, method: string, r: HttpResult): void {
      const mediaType = (r.headers.get('content-type') ?? '').split(';')[0];
      const ref = `openapi.json#/${pointer('paths', path, method, 'responses', String(r.status), 'content', mediaType, 'schema')}`;
      const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
      const valid = validate(r.body);
      expect({ call: `${method.toUpperCase()} ${path} ${r.status}`, errors: valid ? null : validate.errors }).toEqual({ call: `${method.toUpperCase()} ${path} ${r.status}`, errors: null });
      checked.push(`${method} ${path} ${r.status}`);
    },
    /** Each parameter of `query` is declared for the operation, and its value is valid by the declared schema (a list read as `style: form, explode: false` says: split at the commas). */
    expectParameters(path: string, method: string, query: Record<string, string>): void {
      const declared = paths[path]?.[method]?.parameters ?? [];
      for (const [name, text] of Object.entries(query)) {
        const parameter = declared.find((p) => p.in === 'query' && p.name === name);
        const type = parameter?.schema.type;
        const value = type === 'array' && parameter?.explode === false ? text.split(',') : type === 'integer' ? Number(text) : type === 'boolean' ? ({ true: true, false: false } as Record<string, boolean>)[text] ?? text : text;
        const validate = parameter ? ajv.compile(parameter.schema) : null;
        const valid = validate ? validate(value) : false;
        expect({ call: `${method.toUpperCase()} ${path}`, name, declared: !!parameter, errors: valid ? null : validate?.errors }).toEqual({ call: `${method.toUpperCase()} ${path}`, name, declared: true, errors: null });
      }
    },
  };
}

beforeAll(async () => {
  platform = await startPlatform({ label: 'resources', ports: PORTS });
  BASE = platform.baseUrl;
});

afterAll(async () => {
  await platform?.stop();
});

describe('the five resources behind one base URL', () => {
  it('creates a client, a product, an invoice referencing both at once, and a payment that shows on the invoice within a second', async () => {
    const { access_token: token } = await exchange(await newKey());
    const client = await http('POST', `${BASE}/api/v1/clients`, { token, body: { name: 'Globex', currency: 'EUR' } });
    expect(client.status).toBe(201);
    const product = await http('POST', `${BASE}/api/v1/products`, {
      token,
      body: { name: 'Widget', sku: 'W-1', unit_price: 1250, currency: 'EUR', tax_rate_bps: 2000 },
    });
    expect(product.status).toBe(201);
    // Immediately: the invoice service may not have seen the domain events yet.
    const invoice = await http('POST', `${BASE}/api/v1/invoices`, {
      token,
      body: { client_id: client.body.id, currency: 'EUR', line_items: [{ product_id: product.body.id, quantity: 2 }, { description: 'Setup', quantity: 1, unit_price: 1000 }] },
    });
    expect(invoice.status).toBe(201);
    expect(invoice.body).toMatchObject({ subtotal: 3500, tax_total: 500, total: 4000, status: 'open' });

    const payment = await http('POST', `${BASE}/api/v1/payments`, {
      token,
      body: { invoice_id: invoice.body.id, amount: 4000, currency: 'EUR', method: 'bank_transfer' },
    });
    expect(payment.status).toBe(201);
    // From the payment's created_at (set in its transaction, before its commit: the bound errs
    // long), not from before the request was sent, which would count the create's own time too.
    const createdAt = Date.parse(String(payment.body.created_at));
    let seen: Record<string, unknown> = {};
    let seenAt = Date.now();
    while (Date.now() - createdAt < 5000) {
      seen = (await http('GET', `${BASE}/api/v1/invoices/${invoice.body.id}`, { token })).body;
      seenAt = Date.now();
      if (seen.status === 'paid') break;
      await sleep(10);
    }
    const latency = seenAt - createdAt;
    console.log(`e2e: payment reflected on its invoice ${latency} ms after the payment was created (its created_at)`);
    expect(seen).toMatchObject({ amount_paid: 4000, amount_due: 0, status: 'paid' });
    expect(latency).toBeLessThan(1000);

    const expense = await http('POST', `${BASE}/api/v1/expenses`, {
      token,
      body: { description: 'Taxi', amount: 2300, currency: 'EUR', incurred_on: '2026-11-20' },
    });
    expect(expense.status).toBe(201);
    for (const resource of RESOURCES) {
      const list = await http('GET', `${BASE}/api/v1/${resource}`, { token });
      expect({ resource, status: list.status, count: (list.body.data as unknown[]).length }).toEqual({ resource, status: 200, count: 1 });
    }
  });

  it("keeps organizations apart across services: another organization's objects are absent and cannot be referenced", async () => {
    const a = await exchange(await newKey());
    const b = await exchange(await newKey());
    const client = await http('POST', `${BASE}/api/v1/clients`, { token: a.access_token, body: { name: 'A client' } });
    const invoice = await http('POST', `${BASE}/api/v1/invoices`, {
      token: a.access_token,
      body: { client_id: client.body.id, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 1 }] },
    });
    expect(invoice.status).toBe(201);
    expect((await http('GET', `${BASE}/api/v1/clients/${client.body.id}`, { token: b.access_token })).status).toBe(404);
    expect((await http('GET', `${BASE}/api/v1/invoices/${invoice.body.id}`, { token: b.access_token })).status).toBe(404);
    const foreignClient = await http('POST', `${BASE}/api/v1/invoices`, {
      token: b.access_token,
      body: { client_id: client.body.id, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 1 }] },
    });
    expect(foreignClient.status).toBe(422);
    expect(foreignClient.body.errors).toEqual([expect.objectContaining({ field: 'client_id', code: 'not_found' })]);
    const foreignInvoice = await http('POST', `${BASE}/api/v1/payments`, {
      token: b.access_token,
      body: { invoice_id: invoice.body.id, amount: 1, currency: 'EUR' },
    });
    expect(foreignInvoice.status).toBe(422);
    expect(foreignInvoice.body.errors).toEqual([expect.objectContaining({ field: 'invoice_id', code: 'not_found' })]);
  });

  it('has every resource service refuse the tokens of a key within a second of a refresh-token reuse', async () => {
    const pair = await exchange(await newKey());
    const rotated = await http('POST', `${BASE}/api/v1/auth/refresh`, { body: { refresh_token: pair.refresh_token } });
    expect(rotated.status).toBe(200);
    for (const r of RESOURCES) expect((await http('GET', `${BASE}/api/v1/${r}`, { token: pair.access_token })).status).toBe(200);
    const reusedAt = Date.now();
    expect((await http('POST', `${BASE}/api/v1/auth/refresh`, { body: { refresh_token: pair.refresh_token } })).status).toBe(400);
    const tokens = [pair.access_token, (rotated.body as unknown as TokenPair).access_token];
    for (;;) {
      const statuses = await Promise.all(RESOURCES.flatMap((r) => tokens.map(async (t) => (await http('GET', `${BASE}/api/v1/${r}`, { token: t })).status)));
      if (statuses.every((s) => s === 401)) break;
      if (Date.now() - reusedAt > 5000) throw new Error(`still accepted: ${statuses.join(',')}`);
      await sleep(5);
    }
    const latency = Date.now() - reusedAt;
    console.log(`e2e: all five resource services refused the key's tokens ${latency} ms after the reuse`);
    // Each poll here is ten requests through the gateway to eight processes sharing two cores, so
    // the figure includes the polling itself; the one-second bound per service is asserted on its
    // own in token-lifecycle.e2e-spec.ts.
    expect(latency).toBeLessThan(2000);
    expect(claimsOf(tokens[0]).sid).toBe(claimsOf(tokens[1]).sid);
  });

  it('answers every resource call with a body that the served OpenAPI document declares for it', async () => {
    const { expectDeclared, checked } = await servedContract();

    const { access_token: token } = await exchange(await newKey());
    /** What each create answered, by the resource it was sent to. */
    const created = new Map<Resource, HttpResult>();
    const create = async (resource: Resource, body: Record<string, unknown>) => {
      const r = await http('POST', `${BASE}/api/v1/${resource}`, { token, body });
      created.set(resource, r);
      return r;
    };
    const client = await create('clients', {
      name: 'Initech',
      email: 'ap@initech.example',
      phone: '+44 20 7946 0000',
      tax_id: 'GB123',
      currency: 'GBP',
      address: { line1: '1 Main St', city: 'London', postal_code: 'EC1A 1BB', country: 'GB' },
    });
    const product = await create('products', { name: 'Gadget', sku: `G-${Date.now()}`, unit_price: 990, currency: 'GBP', tax_rate_bps: 2000, description: 'A gadget' });
    const invoice = await create('invoices', {
      client_id: client.body.id,
      currency: 'GBP',
      due_date: '2099-01-31',
      notes: 'Thanks',
      line_items: [{ product_id: product.body.id, quantity: 1.5 }, { description: 'Support', quantity: 1, unit_price: 5000, tax_rate_bps: 0 }],
    });
    await create('payments', { invoice_id: invoice.body.id, amount: 1000, currency: 'GBP', method: 'card', reference: 'r-1' });
    await create('expenses', { description: 'Train', amount: 4500, currency: 'GBP', incurred_on: '2026-11-20', category: 'travel', vendor: 'Rail' });

    for (const resource of RESOURCES) {
      const one = created.get(resource);
      expect({ resource, status: one?.status }).toEqual({ resource, status: 201 });
      if (!one) continue;
      expectDeclared(`/api/v1/${resource}`, 'post', one);
      expectDeclared(`/api/v1/${resource}`, 'get', await http('GET', `${BASE}/api/v1/${resource}?limit=5`, { token }));
      expectDeclared(`/api/v1/${resource}/{id}`, 'get', await http('GET', `${BASE}/api/v1/${resource}/${String(one.body.id)}`, { token }));
      // Errors too: an absent object (404), a bad query parameter (400), a missing token (401), a failed validation (422).
      const prefix = String(one.body.id).split('_')[0];
      expectDeclared(`/api/v1/${resource}/{id}`, 'get', await http('GET', `${BASE}/api/v1/${resource}/${prefix}_${'0'.repeat(32)}`, { token }));
      expectDeclared(`/api/v1/${resource}`, 'get', await http('GET', `${BASE}/api/v1/${resource}?limit=0`, { token }));
      expectDeclared(`/api/v1/${resource}`, 'get', await http('GET', `${BASE}/api/v1/${resource}`));
      expectDeclared(`/api/v1/${resource}`, 'post', await http('POST', `${BASE}/api/v1/${resource}`, { token, body: {} }));
    }
    expect(new Set(checked.map((c) => c.split(' ')[2]))).toEqual(new Set(['200', '201', '400', '401', '404', '422']));
  });

  it('serves the gateway errors and the services errors in one format', async () => {
    const unknown = await http('GET', `${BASE}/api/v1/nothing-here`);
    expect(unknown.status).toBe(404);
    expect(unknown.headers.get('content-type')).toContain('application/problem+json');
    const internal = await http('GET', `${BASE}/internal/v1/objects/cli_${'0'.repeat(32)}`);
    expect(internal.status).toBe(404);
  });

  itWhen(!STACK.external, "a running stack does not publish the services' own ports")("refuses a tenant's token on a service's internal route, even on its own port", async () => {
    // The probe: a key that may only write expenses reads a client through the client service's
    // internal route, where the public route answers 403.
    const writer = await exchange(await newKey());
    const client = await http('POST', `${BASE}/api/v1/clients`, { token: writer.access_token, body: { name: 'Private', email: 'ap@private.example', tax_id: 'DE123' } });
    expect(client.status).toBe(201);
    const narrow = await exchange(await createKey('E2E Resources', 'expenses only', 'write:expenses'));
    expect((await http('GET', `${BASE}/api/v1/clients/${client.body.id}`, { token: narrow.access_token })).status).toBe(403);
    const direct = await http('GET', `${platform.url('client-service')}/internal/v1/objects/${client.body.id}`, { token: narrow.access_token });
    expect(direct.status).toBe(401);
    expect(JSON.stringify(direct.body)).not.toContain('DE123');
    // Even a token with every scope: the route is for the platform's services, not for tenants.
    expect((await http('GET', `${platform.url('client-service')}/internal/v1/objects/${client.body.id}`, { token: writer.access_token })).status).toBe(401);
  });

  it("passes the services' 413 for an oversized body through the gateway, every time", async () => {
    const { access_token: token } = await exchange(await newKey());
    const statuses: Array<number | string | null> = [];
    for (let i = 0; i < 5; i++) {
      const r = await http('POST', `${BASE}/api/v1/clients`, { token, body: { name: 'x'.repeat(2 * 1024 * 1024) } });
      statuses.push(r.status, r.headers.get('content-type'));
    }
    expect(statuses).toEqual(Array(5).fill([413, 'application/problem+json; charset=utf-8']).flat());
  });
});

describe('list filters for sync (ADR 0041), behind the gateway', () => {
  /** The newest first: what every list answers. */
  const newestFirst = (objects: Array<Record<string, unknown>>) => objects.map((o) => String(o.id)).sort().reverse();
  let contract: Awaited<ReturnType<typeof servedContract>>;
  let token: string;
  let stranger: string;
  /** Four invoices, oldest first: [open, paid, partially_paid without a due date, open]. */
  let invoices: Array<Record<string, unknown>>;
  let strangerInvoice: Record<string, unknown>;
  /** The first object this organization created of each resource. */
  const first = new Map<Resource, Record<string, unknown>>();

  /** One page of `resource`, its answer and the parameters sent checked against the served document. */
  async function page(resource: Resource, query: Record<string, string>, as = token): Promise<HttpResult> {
    const r = await http('GET', `${BASE}/api/v1/${resource}?${new URLSearchParams(query).toString()}`, { token: as });
    contract.expectDeclared(`/api/v1/${resource}`, 'get', r);
    if (r.status === 200) contract.expectParameters(`/api/v1/${resource}`, 'get', query);
    return r;
  }

  /** The ids of every page of the list, walked with starting_after while has_more; the same filters on each page. */
  async function ids(resource: Resource, query: Record<string, string>, as = token): Promise<string[]> {
    const seen: string[] = [];
    let after: string | undefined;
    for (let pages = 0; pages < 20; pages++) {
      const r = await page(resource, after ? { ...query, starting_after: after } : query, as);
      expect({ query, status: r.status }).toEqual({ query, status: 200 });
      const data = r.body.data as Array<{ id: string }>;
      seen.push(...data.map((o) => o.id));
      if (!r.body.has_more) return seen;
      after = data[data.length - 1].id;
    }
    throw new Error('more than 20 pages');
  }

  const idsOf = (...objects: Array<Record<string, unknown>>) => newestFirst(objects);

  async function created(resource: Resource, body: Record<string, unknown>, as = token): Promise<Record<string, unknown>> {
    const r = await http('POST', `${BASE}/api/v1/${resource}`, { token: as, body });
    expect({ resource, status: r.status }).toEqual({ resource, status: 201 });
    contract.expectDeclared(`/api/v1/${resource}`, 'post', r);
    if (!first.has(resource) && as === token) first.set(resource, r.body);
    return r.body;
  }

  /** `2026-01-01T00:00:00.123Z` written with another offset: the same instant. */
  function withOffset(at: string, minutes: number): string {
    const local = new Date(Date.parse(at) + minutes * 60_000).toISOString().slice(0, -1);
    const sign = minutes < 0 ? '-' : '+';
    const abs = Math.abs(minutes);
    return `${local}${sign}${String(Math.floor(abs / 60)).padStart(2, '0')}:${String(abs % 60).padStart(2, '0')}`;
  }

  beforeAll(async () => {
    contract = await servedContract();
    token = (await exchange(await newKey())).access_token;
    stranger = (await exchange(await newKey())).access_token;
    const client = await created('clients', { name: 'Sync GmbH', currency: 'EUR' });
    await created('products', { name: 'Hour', unit_price: 1000, currency: 'EUR' });
    await created('expenses', { description: 'Taxi', amount: 2300, currency: 'EUR', incurred_on: '2026-01-05' });
    const invoice = (issue: string, due: string | undefined, as = token, clientId = client.id) =>
      created('invoices', { client_id: clientId, currency: 'EUR', issue_date: issue, ...(due ? { due_date: due } : {}), line_items: [{ description: 'Work', quantity: 1, unit_price: 1000 }] }, as);
    invoices = [];
    invoices.push(await invoice('2026-01-10', '2026-01-20'));
    invoices.push(await invoice('2026-01-15', '2026-02-15'));
    // Another organization's invoice, created between two of ours with the same dates: never listed to us.
    const strangerClient = await created('clients', { name: 'Elsewhere Ltd' }, stranger);
    strangerInvoice = await invoice('2026-01-15', '2026-02-15', stranger, strangerClient.id);
    invoices.push(await invoice('2026-02-01', undefined));
    invoices.push(await invoice('2026-02-10', '2026-03-01'));
    await created('payments', { invoice_id: invoices[1].id, amount: 1000, currency: 'EUR', method: 'card' });
    await created('payments', { invoice_id: invoices[2].id, amount: 400, currency: 'EUR', method: 'card' });
    await created('payments', { invoice_id: strangerInvoice.id, amount: 1000, currency: 'EUR' }, stranger);
    // Payments show on their invoices within a second.
    const settled = Date.now();
    for (;;) {
      const statuses = await Promise.all([invoices[1].id, invoices[2].id].map(async (id) => (await http('GET', `${BASE}/api/v1/invoices/${String(id)}`, { token })).body.status));
      if (statuses[0] === 'paid' && statuses[1] === 'partially_paid') break;
      if (Date.now() - settled > 5000) throw new Error(`payments not applied: ${statuses.join(', ')}`);
      await sleep(20);
    }
    // Distinct creation instants, in creation order: the boundaries below depend on it.
    const instants = invoices.map((i) => Date.parse(String(i.created_at)));
    expect(instants).toEqual([...new Set(instants)].sort((a, b) => a - b));
  });

  it('includes the boundary object with created[gte] and created[lte], excludes it with created[gt] and created[lt], on every list', async () => {
    const [a, b, c, d] = invoices;
    const at = String(b.created_at);
    expect(await ids('invoices', { 'created[gte]': at })).toEqual(idsOf(b, c, d));
    expect(await ids('invoices', { 'created[gt]': at })).toEqual(idsOf(c, d));
    expect(await ids('invoices', { 'created[lte]': at })).toEqual(idsOf(a, b));
    expect(await ids('invoices', { 'created[lt]': at })).toEqual(idsOf(a));
    // The same instant with another offset, and a window of both bounds.
    expect(await ids('invoices', { 'created[gte]': withOffset(at, 60) })).toEqual(idsOf(b, c, d));
    expect(await ids('invoices', { 'created[lt]': withOffset(at, -330) })).toEqual(idsOf(a));
    expect(await ids('invoices', { 'created[gt]': String(a.created_at), 'created[lt]': String(d.created_at) })).toEqual(idsOf(b, c));
    // A bound finer than a millisecond: one microsecond after b's created_at excludes b, one before includes it.
    expect(await ids('invoices', { 'created[gte]': at.replace('Z', '001Z') })).toEqual(idsOf(c, d));
    expect(await ids('invoices', { 'created[lte]': at.replace('Z', '001Z') })).toEqual(idsOf(a, b));
    for (const resource of RESOURCES) {
      const object = first.get(resource);
      expect({ resource, created: object !== undefined }).toEqual({ resource, created: true });
      if (!object) continue;
      const when = String(object.created_at);
      for (const [op, included] of [['gte', true], ['gt', false], ['lte', true], ['lt', false]] as const) {
        const listed = (await ids(resource, { [`created[${op}]`]: when })).includes(String(object.id));
        expect({ resource, op, listed }).toEqual({ resource, op, listed: included });
      }
    }
  });

  it('bounds issue_date and due_date, inclusive with gte and lte, exclusive with gt and lt', async () => {
    const [a, b, c, d] = invoices;
    expect(await ids('invoices', { 'issue_date[gte]': '2026-01-15' })).toEqual(idsOf(b, c, d));
    expect(await ids('invoices', { 'issue_date[gt]': '2026-01-15' })).toEqual(idsOf(c, d));
    expect(await ids('invoices', { 'issue_date[lte]': '2026-02-01' })).toEqual(idsOf(a, b, c));
    expect(await ids('invoices', { 'issue_date[lt]': '2026-02-01' })).toEqual(idsOf(a, b));
    expect(await ids('invoices', { 'issue_date[gte]': '2026-01-11', 'issue_date[lt]': '2026-02-10' })).toEqual(idsOf(b, c));
    // c has no due date: no due_date bound matches it.
    expect(await ids('invoices', { 'due_date[gte]': '2026-02-15' })).toEqual(idsOf(b, d));
    expect(await ids('invoices', { 'due_date[gt]': '2026-02-15' })).toEqual(idsOf(d));
    expect(await ids('invoices', { 'due_date[lte]': '2026-01-20' })).toEqual(idsOf(a));
    expect(await ids('invoices', { 'due_date[lt]': '2026-01-20' })).toEqual([]);
    expect(await ids('invoices', { 'due_date[lte]': '2099-12-31' })).toEqual(idsOf(a, b, d));
  });

  it('takes several statuses comma-separated, and unpaid for amount_due > 0 (or = 0)', async () => {
    const [a, b, c, d] = invoices;
    expect(await ids('invoices', { status: 'open,paid' })).toEqual(idsOf(a, b, d));
    expect(await ids('invoices', { status: 'partially_paid' })).toEqual(idsOf(c));
    expect(await ids('invoices', { status: 'paid,partially_paid,open' })).toEqual(idsOf(a, b, c, d));
    expect(await ids('invoices', { unpaid: 'true' })).toEqual(idsOf(a, c, d));
    expect(await ids('invoices', { unpaid: 'false' })).toEqual(idsOf(b));
    const unpaid = (await page('invoices', { unpaid: 'true' })).body.data as Array<{ amount_due: number }>;
    expect(unpaid.every((i) => i.amount_due > 0)).toBe(true);
  });

  it('ANDs filters together and keeps them across pages of one object each', async () => {
    const [a, , c, d] = invoices;
    expect(await ids('invoices', { unpaid: 'true', limit: '1' })).toEqual(idsOf(a, c, d));
    expect(await ids('invoices', { status: 'open', 'issue_date[gte]': '2026-01-01', 'created[lte]': String(d.created_at), limit: '1' })).toEqual(idsOf(a, d));
    expect(await ids('invoices', { status: 'open,paid', unpaid: 'true', 'due_date[gte]': '2026-02-01' })).toEqual(idsOf(d));
    const firstPage = await page('invoices', { unpaid: 'true', limit: '2' });
    expect({ ids: (firstPage.body.data as Array<{ id: string }>).map((i) => i.id), has_more: firstPage.body.has_more }).toEqual({ ids: idsOf(c, d), has_more: true });
  });

  it("never matches another organization's objects, and lists that organization its own", async () => {
    const everything = { 'created[gte]': String(invoices[0].created_at), status: 'open,partially_paid,paid', 'issue_date[gte]': '2026-01-01' };
    expect(await ids('invoices', everything)).toEqual(idsOf(...invoices));
    expect(await ids('invoices', { ...everything, unpaid: 'false' })).not.toContain(String(strangerInvoice.id));
    expect(await ids('invoices', everything, stranger)).toEqual([String(strangerInvoice.id)]);
    expect(await ids('invoices', { ...everything, 'created[lte]': String(invoices[3].created_at) }, stranger)).toEqual([String(strangerInvoice.id)]);
  });

  it('refuses a malformed or unknown filter with 400 naming the parameter', async () => {
    const refused = async (resource: Resource, query: string, name: string) => {
      const r = await http('GET', `${BASE}/api/v1/${resource}?${query}`, { token });
      contract.expectDeclared(`/api/v1/${resource}`, 'get', r);
      expect({ query, status: r.status, names: String(r.body.detail).includes(name) }).toEqual({ query, status: 400, names: true });
      return r;
    };
    const date = await refused('invoices', 'created%5Bgte%5D=2026-01-01', 'created[gte]');
    expect(date.body.errors).toEqual([expect.objectContaining({ field: 'created[gte]', code: 'invalid_value' })]);
    // An offset's + sent unescaped is a space to the server: refused, and the answer says to write %2B.
    expect(String((await refused('invoices', 'created[lt]=2026-01-01T01:00:00+01:00', 'created[lt]')).body.detail)).toContain('%2B');
    await refused('payments', 'created[gt]=2026-01-01T00:00:00', 'created[gt]');
    await refused('clients', 'created[lte]=2026-02-30T00:00:00Z', 'created[lte]');
    await refused('invoices', 'issue_date[gte]=2026-02-30', 'issue_date[gte]');
    await refused('invoices', 'due_date[lt]=2026-01-01T00:00:00Z', 'due_date[lt]');
    await refused('invoices', 'status=open,closed', 'status');
    await refused('invoices', 'status=open,paid,open,paid', 'status');
    await refused('invoices', 'unpaid=yes', 'unpaid');
    await refused('invoices', 'created[eq]=2026-01-01T00:00:00Z', 'created[eq]');
    await refused('clients', 'issue_date[gte]=2026-01-01', 'issue_date[gte]');
    await refused('invoices', 'created[gte]=2026-01-01T00:00:00Z&created[gte]=2026-01-02T00:00:00Z', 'created[gte]');
  });
});

describe('an invoice as a PDF and as an EN 16931 e-invoice (ADR 0040), behind the gateway', () => {
  /** pdftotext's reading of a PDF (poppler-utils: tools/setup.sh installs it). */
  const textOf = (pdf: Buffer) => {
    const out = spawnSync('pdftotext', ['-layout', '-', '-'], { input: pdf });
    if (out.error) throw out.error;
    return out.stdout.toString('utf8');
  };
  const SELLER = {
    legal_name: 'Nordlicht Software GmbH',
    address: { line1: 'Friedrichstraße 123', city: 'Berlin', postal_code: '10117', country: 'DE' },
    vat_id: 'DE123456789',
    email: 'billing@nordlicht.example',
    iban: 'DE89 3704 0044 0532 0130 00',
    bic: 'COBADEFFXXX',
    payment_terms: 'Payable within 30 days.',
  };

  it('answers the invoice by Accept, with the seller and buyer as they stood at its creation, every answer declared by the served document', async () => {
    const contract = await servedContract();
    const user = await DashboardUser.signUp(BASE, 'E2E Documents');
    expect((await user.call('PATCH', '/api/v1/settings/organization', SELLER)).status).toBe(200);
    const key = await user.createKey({ scopes: ['read:invoices', 'write:invoices', 'read:clients', 'write:clients'] });
    const { access_token: token } = await exchange({ client_id: key.client_id, client_secret: key.client_secret });
    const client = await http('POST', `${BASE}/api/v1/clients`, {
      token,
      body: { name: 'Globex Corporation', tax_id: 'FR40303265045', address: { line1: '1 Rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR' } },
    });
    expect(client.status).toBe(201);
    const newInvoice = async () => {
      const r = await http('POST', `${BASE}/api/v1/invoices`, {
        token,
        body: { client_id: client.body.id, currency: 'EUR', due_date: '2099-01-31', line_items: [{ description: 'Consulting — مرحبا — 你好', quantity: 2, unit_price: 50000, tax_rate_bps: 1900 }] },
      });
      expect(r.status).toBe(201);
      return String(r.body.id);
    };
    const get = async (id: string, accept: string, query = '') => {
      const response = await fetch(`${BASE}/api/v1/invoices/${id}${query}`, { headers: { authorization: `Bearer ${token}`, accept } });
      const bytes = Buffer.from(await response.arrayBuffer());
      const type = (response.headers.get('content-type') ?? '').split(';')[0];
      // A document's media type is one the operation declares; a JSON answer is checked whole.
      if (type === 'application/pdf' || type === 'application/xml') {
        const declared = (contract.paths['/api/v1/invoices/{id}'].get as unknown as { responses: Record<string, { content: Record<string, unknown> }> }).responses[String(response.status)].content;
        expect(Object.keys(declared)).toContain(type);
      } else {
        contract.expectDeclared('/api/v1/invoices/{id}', 'get', { status: response.status, headers: response.headers, body: JSON.parse(bytes.toString('utf8')), text: '' } as unknown as HttpResult);
      }
      return { status: response.status, headers: response.headers, bytes, type };
    };

    // The profile reaches the invoice service through the domain topic: the first invoice made after it has its seller.
    let id = '';
    for (let attempt = 0; attempt < 50; attempt++) {
      id = await newInvoice();
      if ((await get(id, 'application/xml')).status === 200) break;
      await sleep(200);
    }
    const pdf = await get(id, 'application/pdf');
    expect([pdf.status, pdf.type, pdf.headers.get('vary')]).toEqual([200, 'application/pdf', 'Accept']);
    expect(pdf.headers.get('content-disposition')).toMatch(/^inline; filename="INV-\d{6}\.pdf"$/);
    const text = textOf(pdf.bytes);
    for (const shown of ['Nordlicht Software GmbH', 'DE123456789', 'Globex Corporation', 'DE89 3704 0044 0532 0130 00', 'مرحبا']) expect(text).toContain(shown);
    // CJK is not in the embedded font: U+FFFD, as documented.
    expect(text).toContain('\uFFFD');
    const cii = await get(id, 'application/xml');
    expect(cii.bytes.toString('utf8')).toContain('<rsm:CrossIndustryInvoice');
    const ubl = await get(id, 'application/xml', '?syntax=ubl');
    expect(ubl.bytes.toString('utf8')).toContain('urn:oasis:names:specification:ubl:schema:xsd:Invoice-2');

    // The seller renames itself: the invoice already issued keeps the old name, the next one has the new.
    expect((await user.call('PATCH', '/api/v1/settings/organization', { legal_name: 'Nordlicht Holding AG' })).status).toBe(200);
    let later = '';
    for (let attempt = 0; attempt < 50; attempt++) {
      later = await newInvoice();
      if (textOf((await get(later, 'application/pdf')).bytes).includes('Nordlicht Holding AG')) break;
      await sleep(200);
    }
    expect(textOf((await get(later, 'application/pdf')).bytes)).toContain('Nordlicht Holding AG');
    expect(textOf((await get(id, 'application/pdf')).bytes)).not.toContain('Nordlicht Holding AG');

    // JSON as before; 406 and 400 in the contract's format.
    expect((await get(id, 'application/json')).status).toBe(200);
    expect((await get(id, 'text/html')).status).toBe(406);
    expect((await get(id, 'application/xml', '?syntax=x')).status).toBe(400);
  });
});

import { ALL_SCOPES, Resource, RESOURCES } from '@invoicing/contracts';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { claimsOf, http, HttpResult, TokenPair } from './support/api';
import { createKey, itWhen, Platform, STACK, startPlatform } from './support/platform';
import { platformPorts } from './support/ports';
import { sleep } from './support/processes';

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
    const doc = await http('GET', `${BASE}/api/v1/openapi.json`);
    expect(doc.status).toBe(200);
    // OpenAPI 3.1 schemas are JSON Schema 2020-12; the document is added whole so its internal
    // $refs (#/components/schemas/...) resolve, and each response is checked against the schema the
    // document gives for that path, method, status and media type.
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...doc.body, $id: 'openapi.json' });
    const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    const checked: string[] = [];
    const expectDeclared = (path: string, method: string, r: HttpResult) => {
      const mediaType = (r.headers.get('content-type') ?? '').split(';')[0];
      const ref = `openapi.json#/${pointer('paths', path, method, 'responses', String(r.status), 'content', mediaType, 'schema')}`;
      const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
      const valid = validate(r.body);
      expect({ call: `${method.toUpperCase()} ${path} ${r.status}`, errors: valid ? null : validate.errors }).toEqual({ call: `${method.toUpperCase()} ${path} ${r.status}`, errors: null });
      checked.push(`${method} ${path} ${r.status}`);
    };

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

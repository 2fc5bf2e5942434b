import { RESOURCES } from '@invoicing/contracts';
import { InvoicingError } from './errors';
import { json, problem, RecordedRequest } from './testing/fake-api';
import { testClient } from './testing/test-client';
import type { Invoice } from './types';

const INVOICES = '/api/v1/invoices';

function invoice(n: number): Invoice {
  return {
    object: 'invoice',
    id: `inv_${String(n).padStart(32, '0')}`,
    created_at: '2030-01-01T00:00:00.000Z',
    client_id: 'cli_1',
    number: `INV-${n}`,
    currency: 'EUR',
    issue_date: '2030-01-01',
    due_date: null,
    status: 'open',
    line_items: [],
    subtotal: 0,
    tax_total: 0,
    total: 0,
    amount_paid: 0,
    amount_due: 0,
    notes: null,
  };
}

/** Answers newest first from `all`, `sizes[i]` objects on the i-th page, like the services page by id. */
function pagedRoute(all: Invoice[], sizes: number[]) {
  let page = 0;
  return (request: RecordedRequest) => {
    const after = request.query.get('starting_after');
    const start = after === null ? 0 : all.findIndex((i) => i.id === after) + 1;
    const size = sizes[page++] ?? all.length;
    const data = all.slice(start, start + size);
    return json(200, { object: 'list', data, has_more: start + size < all.length });
  };
}

describe('Resource', () => {
  it('creates with POST, the body as JSON and a new UUID v4 Idempotency-Key per call', async () => {
    const { api, server } = testClient();
    server.on('POST', INVOICES, () => json(201, invoice(1), { location: `${INVOICES}/${invoice(1).id}` }));
    const body = { client_id: 'cli_1', currency: 'EUR', line_items: [{ description: 'Work', quantity: '1.5', unit_price: 10_000 }] };

    await expect(api.invoices.create(body)).resolves.toEqual(invoice(1));
    await api.invoices.create(body);

    const [first, second] = server.calls('POST', INVOICES);
    expect(first.body).toEqual(body);
    expect(first.headers['idempotency-key']).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
    expect(second.headers['idempotency-key']).not.toBe(first.headers['idempotency-key']);
  });

  it("sends the caller's own Idempotency-Key", async () => {
    const { api, server } = testClient();
    server.on('POST', '/api/v1/payments', () => json(201, { object: 'payment', id: 'pay_1' }));

    await api.payments.create({ invoice_id: 'inv_1', amount: 500, currency: 'EUR', method: 'card' }, { idempotencyKey: 'bank-tx-981' });

    expect(server.calls('POST', '/api/v1/payments')[0].headers['idempotency-key']).toBe('bank-tx-981');
  });

  it('gets one object by its id, escaped into the path', async () => {
    const { api, server } = testClient();
    server.on('GET', `${INVOICES}/${invoice(7).id}`, () => json(200, invoice(7)));
    server.on('GET', `${INVOICES}/a%2Fb%3Fc`, () => problem(404));

    await expect(api.invoices.get(invoice(7).id)).resolves.toEqual(invoice(7));
    await expect(api.invoices.get('a/b?c')).rejects.toMatchObject({ status: 404 });
    await expect(api.invoices.get('')).rejects.toBeInstanceOf(InvoicingError);
  });

  it('fetches a document with its media type as Accept and answers its bytes; an error is an InvoicingApiError as for JSON', async () => {
    const { api, server } = testClient();
    const pdf = Buffer.from('%PDF-1.3 \xff\x00 binary', 'latin1');
    server.on('GET', `${INVOICES}/${invoice(7).id}`, (request) =>
      request.headers['accept'] === 'application/pdf'
        ? new Response(pdf, { status: 200, headers: { 'content-type': 'application/pdf' } })
        : request.query.get('syntax') === 'ubl'
          ? new Response('<Invoice/>', { status: 200, headers: { 'content-type': 'application/xml' } })
          : problem(422),
    );

    expect(Buffer.from(await api.invoices.document(invoice(7).id, 'application/pdf'))).toEqual(pdf);
    expect(Buffer.from(await api.invoices.pdf(invoice(7).id))).toEqual(pdf);
    expect(Buffer.from(await api.invoices.eInvoice(invoice(7).id, 'ubl')).toString()).toBe('<Invoice/>');
    await expect(api.invoices.eInvoice(invoice(7).id, 'zugferd' as 'ubl')).rejects.toBeInstanceOf(InvoicingError);
    expect(Buffer.from(await api.invoices.document(invoice(7).id, 'application/xml', { syntax: 'ubl' })).toString()).toBe('<Invoice/>');
    await expect(api.invoices.document(invoice(7).id, 'application/xml')).rejects.toMatchObject({ status: 422 });
    await expect(api.invoices.document('..', 'application/pdf')).rejects.toBeInstanceOf(InvoicingError);
    // A resource that does not offer the type answers its JSON: that is no PDF.
    server.on('GET', '/api/v1/clients/cli_1', () => json(200, { object: 'client', id: 'cli_1' }));
    await expect(api.clients.document('cli_1', 'application/pdf')).rejects.toThrow(/answered application\/json.*not the application\/pdf asked for/);
  });

  it.each(['', ' x', 'a\nb', 'ключ', 'x'.repeat(256), 42])('refuses the Idempotency-Key %j at once, sending nothing', async (key) => {
    const { api, server } = testClient();
    server.on('POST', INVOICES, () => json(201, invoice(1)));

    const error = await api.invoices.create({ client_id: 'cli_1', currency: 'EUR', line_items: [] }, { idempotencyKey: key as string }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(InvoicingError);
    expect((error as Error).message).toContain('idempotencyKey must be 1 to 255 visible ASCII characters');
    expect(server.requests).toHaveLength(0);
  });

  it('accepts an Idempotency-Key of 255 visible ASCII characters', async () => {
    const { api, server } = testClient();
    server.on('POST', INVOICES, () => json(201, invoice(1)));
    const key = '!~'.repeat(127) + 'k';

    await api.invoices.create({ client_id: 'cli_1', currency: 'EUR', line_items: [] }, { idempotencyKey: key });

    expect(server.calls('POST', INVOICES)[0].headers['idempotency-key']).toBe(key);
  });

  it.each(['.', '..'])('refuses the id %j, which would reach another endpoint, sending nothing', async (id) => {
    const { api, server } = testClient();
    server.on('GET', '/api/v1', () => json(200, { secret: 'another endpoint' }));

    const error = await api.invoices.get(id).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(InvoicingError);
    expect((error as Error).message).toContain('get needs an id');
    expect(server.requests).toHaveLength(0);
  });

  it('fetches one page with the query given, leaving out undefined values', async () => {
    const { api, server } = testClient();
    server.on('GET', INVOICES, () => json(200, { object: 'list', data: [invoice(1)], has_more: true }));

    const page = await api.invoices.listPage({ limit: 50, starting_after: 'inv_9', status: 'open', client_id: undefined });

    expect(page).toEqual({ object: 'list', data: [invoice(1)], has_more: true });
    expect(Object.fromEntries(server.calls('GET', INVOICES)[0].query)).toEqual({ limit: '50', starting_after: 'inv_9', status: 'open' });
  });

  it('walks every page with starting_after = the last id, while has_more, keeping the filters', async () => {
    const { api, server } = testClient();
    const all = Array.from({ length: 7 }, (_, i) => invoice(100 - i));
    // Pages may hold fewer than `limit` objects (large ones) and still have more after them.
    server.on('GET', INVOICES, pagedRoute(all, [3, 1, 3]));

    const seen: Invoice[] = [];
    for await (const inv of api.invoices.list({ status: 'open', limit: 3 })) seen.push(inv);

    expect(seen).toEqual(all);
    const queries = server.calls('GET', INVOICES).map((r) => Object.fromEntries(r.query));
    expect(queries).toEqual([
      { status: 'open', limit: '3' },
      { status: 'open', limit: '3', starting_after: all[2].id },
      { status: 'open', limit: '3', starting_after: all[3].id },
    ]);
  });

  it('sends the filters as the document names them: bracket operators as they are, a list comma-separated, + of an offset escaped', async () => {
    const { api, server } = testClient();
    const all = Array.from({ length: 3 }, (_, i) => invoice(20 - i));
    server.on('GET', INVOICES, pagedRoute(all, [2, 2]));

    const seen: string[] = [];
    for await (const inv of api.invoices.list({ 'created[gte]': '2030-01-01T01:00:00+01:00', 'due_date[lt]': '2030-02-01', status: ['open', 'partially_paid'], unpaid: true, limit: 2 })) {
      seen.push(inv.id);
    }
    await api.invoices.listPage({ status: 'paid', unpaid: false });

    expect(seen).toEqual(all.map((i) => i.id));
    const calls = server.calls('GET', INVOICES);
    const filters = { 'created[gte]': '2030-01-01T01:00:00+01:00', 'due_date[lt]': '2030-02-01', status: 'open,partially_paid', unpaid: 'true', limit: '2' };
    expect(calls.map((r) => Object.fromEntries(r.query))).toEqual([filters, { ...filters, starting_after: all[1].id }, { status: 'paid', unpaid: 'false' }]);
  });

  it('starts after the starting_after given', async () => {
    const { api, server } = testClient();
    const all = Array.from({ length: 4 }, (_, i) => invoice(10 - i));
    server.on('GET', INVOICES, pagedRoute(all, [2, 2]));

    const seen: string[] = [];
    for await (const inv of api.invoices.list({ starting_after: all[0].id })) seen.push(inv.id);

    expect(seen).toEqual([all[1].id, all[2].id, all[3].id]);
  });

  it('fetches lazily: nothing before the loop, nothing after it breaks', async () => {
    const { api, server } = testClient();
    server.on('GET', INVOICES, pagedRoute(Array.from({ length: 9 }, (_, i) => invoice(50 - i)), [3, 3, 3]));

    const iterable = api.invoices.list();
    expect(server.requests).toHaveLength(0);
    for await (const inv of iterable) {
      if (inv.id === invoice(49).id) break;
    }
    expect(server.calls('GET', INVOICES)).toHaveLength(1);
  });

  it('refuses an empty page that claims has_more (it would loop for ever)', async () => {
    const { api, server } = testClient();
    server.on('GET', INVOICES, () => json(200, { object: 'list', data: [], has_more: true }));

    const loop = async () => {
      for await (const _ of api.invoices.list()) void _;
    };
    await expect(loop()).rejects.toThrow('has_more: true without an object id');
    expect(server.calls('GET', INVOICES)).toHaveLength(1);
  });

  /** Runs `list()` to its end, or until it has yielded `max` objects (a loop that never ends). */
  async function drain(iterable: AsyncIterable<unknown>, max = 50): Promise<{ yielded: number; error?: unknown }> {
    let yielded = 0;
    try {
      for await (const _ of iterable) {
        void _;
        if (++yielded >= max) return { yielded };
      }
      return { yielded };
    } catch (error) {
      return { yielded, error };
    }
  }

  it('refuses a page that continues after a cursor already used (a server ignoring starting_after) instead of looping', async () => {
    const { api, server } = testClient();
    server.on('GET', INVOICES, () => json(200, { object: 'list', data: [invoice(1), invoice(2)], has_more: true }));

    const { yielded, error } = await drain(api.invoices.list());

    expect(error).toBeInstanceOf(InvoicingError);
    expect((error as Error).message).toContain('the same cursor again');
    expect(yielded).toBe(4);
    expect(server.calls('GET', INVOICES)).toHaveLength(2);
  });

  it('counts the starting_after given as a cursor used', async () => {
    const { api, server } = testClient();
    server.on('GET', INVOICES, () => json(200, { object: 'list', data: [invoice(1)], has_more: true }));

    const { yielded, error } = await drain(api.invoices.list({ starting_after: invoice(1).id }));

    expect(error).toBeInstanceOf(InvoicingError);
    expect(yielded).toBe(1);
    expect(server.calls('GET', INVOICES)).toHaveLength(1);
  });

  it.each([
    ['an empty body', ''],
    ['no data', '{"object":"list","has_more":true}'],
    ['data that is not an array', '{"object":"list","data":{"id":"inv_1"},"has_more":false}'],
    ['has_more that is not a boolean', '{"object":"list","data":[{"id":"inv_1"}],"has_more":"false"}'],
  ])('refuses a page with %s with an InvoicingError', async (_name, text) => {
    const { api, server } = testClient();
    server.once('GET', INVOICES, () => new Response(text, { status: 200, headers: { 'content-type': 'application/json' } }));
    server.on('GET', INVOICES, () => json(200, { object: 'list', data: [], has_more: false }));

    const { error } = await drain(api.invoices.list());

    expect(error).toBeInstanceOf(InvoicingError);
    expect((error as Error).message).toContain('answered a page that is not a list');
    expect(server.calls('GET', INVOICES)).toHaveLength(1);
  });

  it.each(RESOURCES)('serves %s under /api/v1/%s', async (name) => {
    const { api, server } = testClient();
    server.on('GET', `/api/v1/${name}`, () => json(200, { object: 'list', data: [], has_more: false }));
    server.on('GET', `/api/v1/${name}/x_1`, () => json(200, { id: 'x_1' }));
    server.on('POST', `/api/v1/${name}`, () => json(201, { id: 'x_1' }));
    const resource = api[name] as unknown as {
      listPage(): Promise<unknown>;
      get(id: string): Promise<unknown>;
      create(body: unknown): Promise<unknown>;
    };

    await resource.listPage();
    await resource.get('x_1');
    await resource.create({});

    expect(server.requests.slice(1).map((r) => `${r.method} ${r.path}`)).toEqual([
      `GET /api/v1/${name}`,
      `GET /api/v1/${name}/x_1`,
      `POST /api/v1/${name}`,
    ]);
  });
});

import { InvoicingApiError, InvoicingConnectionError, InvoicingError } from './errors';
import { BACKOFF_BASE_MS } from './retry';
import { FakeApi, FakeClock, invalidToken, json, networkError, problem, TOKEN } from './testing/fake-api';
import { testClient } from './testing/test-client';

const INVOICES = '/api/v1/invoices';
const ID = 'inv_0190d3c8a2b47c1e9f0a1b2c3d4e5f60';
const PAGE = { object: 'list', data: [], has_more: false };
const INVOICE = { object: 'invoice', id: ID };
const BODY = { client_id: 'cli_1', currency: 'EUR', line_items: [{ description: 'Work', quantity: 1, unit_price: 100 }] };

describe('Transport', () => {
  describe('429 and 503', () => {
    it('waits the delta-seconds of Retry-After, then retries', async () => {
      const { api, server, clock } = testClient();
      server.once('GET', INVOICES, () => problem(429, {}, { 'retry-after': '3' }));
      server.on('GET', INVOICES, () => json(200, PAGE));

      await expect(api.invoices.listPage()).resolves.toEqual(PAGE);

      expect(clock.sleeps).toEqual([3000]);
      expect(server.calls('GET', INVOICES)).toHaveLength(2);
    });

    it('waits until the HTTP-date of Retry-After', async () => {
      const clock = new FakeClock();
      const { api, server } = testClient({}, new FakeApi(), clock);
      server.once('GET', INVOICES, () => problem(503, {}, { 'retry-after': new Date(clock.now() + 7000).toUTCString() }));
      server.on('GET', INVOICES, () => json(200, PAGE));

      await api.invoices.listPage();

      expect(clock.sleeps).toEqual([7000]);
    });

    it('backs off with full jitter from 500 ms without Retry-After, and throws the last error after maxRetries retries', async () => {
      const { api, server, clock } = testClient();
      server.on('GET', INVOICES, () => problem(503, { detail: 'down' }));

      const error = await api.invoices.listPage().catch((e: unknown) => e);

      expect(error).toBeInstanceOf(InvoicingApiError);
      expect(error).toMatchObject({ status: 503, detail: 'down' });
      expect(server.calls('GET', INVOICES)).toHaveLength(4);
      expect(clock.sleeps).toHaveLength(3);
      clock.sleeps.forEach((ms, i) => {
        expect(ms).toBeGreaterThanOrEqual(0);
        expect(ms).toBeLessThan(BACKOFF_BASE_MS * 2 ** i);
      });
    });

    it('honours maxRetries', async () => {
      const { api, server } = testClient({ maxRetries: 1 });
      server.on('GET', INVOICES, () => problem(429, {}, { 'retry-after': '1' }));

      await expect(api.invoices.listPage()).rejects.toMatchObject({ status: 429, retryAfterSeconds: 1 });
      expect(server.calls('GET', INVOICES)).toHaveLength(2);

      const none = testClient({ maxRetries: 0 });
      none.server.on('GET', INVOICES, () => problem(429, {}, { 'retry-after': '1' }));
      await expect(none.api.invoices.listPage()).rejects.toMatchObject({ status: 429 });
      expect(none.server.calls('GET', INVOICES)).toHaveLength(1);
    });

    it('gives up when the next wait would end past maxRetryTimeMs since the first attempt', async () => {
      const { api, server, clock } = testClient({ maxRetries: 10, maxRetryTimeMs: 10_000 });
      server.on('GET', INVOICES, () => problem(429, {}, { 'retry-after': '4' }));

      await expect(api.invoices.listPage()).rejects.toMatchObject({ status: 429 });

      expect(clock.sleeps).toEqual([4000, 4000]);
      expect(server.calls('GET', INVOICES)).toHaveLength(3);
    });

    it('does not start a wait longer than maxRetryTimeMs at all', async () => {
      const { api, server, clock } = testClient();
      server.on('GET', INVOICES, () => problem(503, {}, { 'retry-after': '120' }));

      await expect(api.invoices.listPage()).rejects.toMatchObject({ status: 503, retryAfterSeconds: 120 });
      expect(clock.sleeps).toEqual([]);
      expect(server.calls('GET', INVOICES)).toHaveLength(1);
    });

    it('counts time spent in attempts against maxRetryTimeMs', async () => {
      const { api, server, clock } = testClient({ maxRetryTimeMs: 5000 });
      server.on('GET', INVOICES, () => {
        clock.advance(2000); // a slow answer
        return problem(503, {}, { 'retry-after': '1' });
      });

      await expect(api.invoices.listPage()).rejects.toMatchObject({ status: 503 });
      // 2 s attempt, 1 s wait, 2 s attempt: a further 1 s wait would end at 6 s.
      expect(clock.sleeps).toEqual([1000]);
    });
  });

  describe('lost answers', () => {
    it('retries a GET after a network error', async () => {
      const { api, server } = testClient();
      server.once('GET', `${INVOICES}/${ID}`, () => networkError());
      server.on('GET', `${INVOICES}/${ID}`, () => json(200, INVOICE));

      await expect(api.invoices.get(ID)).resolves.toEqual(INVOICE);
      expect(server.calls('GET', `${INVOICES}/${ID}`)).toHaveLength(2);
    });

    it('retries a create after a network error with the same Idempotency-Key', async () => {
      const { api, server } = testClient();
      server.once('POST', INVOICES, () => networkError(), () => networkError());
      server.on('POST', INVOICES, () => json(201, INVOICE));

      await api.invoices.create(BODY);

      const keys = server.calls('POST', INVOICES).map((r) => r.headers['idempotency-key']);
      expect(keys).toHaveLength(3);
      expect(keys[0]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
      expect(new Set(keys).size).toBe(1);
      expect(server.calls('POST', INVOICES).map((r) => r.body)).toEqual([BODY, BODY, BODY]);
    });

    it('ends an attempt at timeoutMs through its AbortSignal and retries it, with the same Idempotency-Key', async () => {
      const { api, server } = testClient({ timeoutMs: 5 });
      server.once('POST', INVOICES, server.hang());
      server.on('POST', INVOICES, () => json(201, INVOICE));

      await expect(api.invoices.create(BODY, { idempotencyKey: 'order-42' })).resolves.toEqual(INVOICE);

      const calls = server.calls('POST', INVOICES);
      expect(calls.map((r) => r.headers['idempotency-key'])).toEqual(['order-42', 'order-42']);
      expect(calls[0].signal?.aborted).toBe(true);
    });

    it('throws InvoicingConnectionError (timedOut) once retries are spent, with the cause attached', async () => {
      const { api, server } = testClient({ timeoutMs: 5, maxRetries: 1 });
      server.on('GET', INVOICES, server.hang());

      const error = await api.invoices.listPage().catch((e: unknown) => e);

      expect(error).toBeInstanceOf(InvoicingConnectionError);
      expect(error).toMatchObject({ timedOut: true, message: 'GET /api/v1/invoices timed out after 5 ms' });
      expect((error as Error).cause).toBeInstanceOf(DOMException);
      expect(server.calls('GET', INVOICES)).toHaveLength(2);
    });

    it('treats a success whose body is not JSON as a lost answer', async () => {
      const { api, server } = testClient();
      server.once('GET', INVOICES, () => new Response('{"object":"li', { status: 200 }));
      server.on('GET', INVOICES, () => json(200, PAGE));

      await expect(api.invoices.listPage()).resolves.toEqual(PAGE);
      expect(server.calls('GET', INVOICES)).toHaveLength(2);
    });
  });

  describe('409', () => {
    it('retries a create whose Idempotency-Key is still in flight, with the same key', async () => {
      const { api, server, clock } = testClient();
      server.once('POST', INVOICES, () => problem(409, { detail: 'A request with this Idempotency-Key is still in progress; retry shortly.' }));
      server.on('POST', INVOICES, () => json(201, INVOICE));

      await expect(api.invoices.create(BODY)).resolves.toEqual(INVOICE);

      const keys = server.calls('POST', INVOICES).map((r) => r.headers['idempotency-key']);
      expect(keys).toHaveLength(2);
      expect(keys[0]).toBe(keys[1]);
      expect(clock.sleeps).toHaveLength(1);
    });

    it('throws a 409 naming a duplicate field at once', async () => {
      const { api, server } = testClient();
      server.on('POST', '/api/v1/products', () =>
        problem(409, { detail: 'SKU taken.', errors: [{ field: 'sku', code: 'duplicate', message: 'already used' }] }),
      );

      await expect(api.products.create({ name: 'P', unit_price: 1, currency: 'EUR', sku: 'A' })).rejects.toMatchObject({
        status: 409,
        errors: [{ field: 'sku', code: 'duplicate', message: 'already used' }],
      });
      expect(server.calls('POST', '/api/v1/products')).toHaveLength(1);
    });
  });

  describe('other answers', () => {
    it.each([400, 403, 404, 413, 415, 422, 500, 502])('throws %i at once', async (status) => {
      const { api, server } = testClient();
      server.on('POST', INVOICES, () => problem(status));

      await expect(api.invoices.create(BODY)).rejects.toMatchObject({ status });
      expect(server.calls('POST', INVOICES)).toHaveLength(1);
    });

    it('keeps the Idempotency-Key across the retry that follows a 401 and a fresh exchange', async () => {
      const { api, server } = testClient();
      server.once('POST', INVOICES, () => invalidToken());
      server.on('POST', INVOICES, () => json(201, INVOICE));

      await api.invoices.create(BODY);

      const calls = server.calls('POST', INVOICES);
      expect(calls.map((r) => r.headers['authorization'])).toEqual(['Bearer at_1', 'Bearer at_2']);
      expect(calls[0].headers['idempotency-key']).toBe(calls[1].headers['idempotency-key']);
    });

    it('makes an error of a body that is not a problem document (a proxy page)', async () => {
      const { api, server } = testClient();
      server.on('GET', INVOICES, () => new Response('<html>Bad gateway</html>', { status: 502, headers: { 'x-request-id': 'req_proxy' } }));

      const error = (await api.invoices.listPage().catch((e: unknown) => e)) as InvoicingApiError;

      expect(error).toBeInstanceOf(InvoicingApiError);
      expect(error).toMatchObject({ status: 502, type: 'about:blank', title: 'HTTP 502', detail: '', requestId: 'req_proxy', errors: [] });
      expect(error.body).toBe('<html>Bad gateway</html>');
    });
  });

  describe('bodies', () => {
    it('sends the body as it was when the call was made, the same on every attempt, whatever the caller changes afterwards', async () => {
      const { api, server } = testClient();
      server.once('POST', '/api/v1/payments', () => networkError());
      server.on('POST', '/api/v1/payments', () => json(201, { object: 'payment', id: 'pay_1' }));
      const body = { invoice_id: 'inv_1', amount: 100, currency: 'EUR' };

      const created = api.payments.create(body);
      body.amount = 999;
      await created;

      const calls = server.calls('POST', '/api/v1/payments');
      expect(calls.map((r) => r.body)).toEqual([
        { invoice_id: 'inv_1', amount: 100, currency: 'EUR' },
        { invoice_id: 'inv_1', amount: 100, currency: 'EUR' },
      ]);
      expect(calls[0].headers['idempotency-key']).toBe(calls[1].headers['idempotency-key']);
    });

    const circular: Record<string, unknown> = { name: 'loop' };
    circular['self'] = circular;
    it.each([
      ['a BigInt', { name: 'Big', amount: 10n }],
      ['a cycle', circular],
    ])('refuses a body JSON cannot carry (%s) at once: no token, no request, no retry', async (_name, body) => {
      const { api, server, clock } = testClient();

      const error = await api.clients.create(body as never).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(InvoicingError);
      expect(error).not.toBeInstanceOf(InvoicingConnectionError);
      expect((error as Error).message).toMatch(/^POST \/api\/v1\/clients: the body cannot be sent as JSON/);
      expect(server.requests).toHaveLength(0);
      expect(clock.sleeps).toEqual([]);
    });
  });

  describe('requests', () => {
    it('sends the bearer token, JSON headers, a User-Agent, and refuses redirects', async () => {
      const requests: RequestInit[] = [];
      const server = new FakeApi();
      server.on('POST', INVOICES, () => json(201, INVOICE));
      const { api } = testClient({
        fetch: (url, init) => {
          requests.push(init);
          return server.fetch(url, init);
        },
      }, server);

      await api.invoices.create(BODY);

      const [exchange, create] = server.requests;
      expect(exchange.headers['user-agent']).toBe('invoicing-sdk-typescript/1.0.0');
      expect(create.headers).toMatchObject({
        accept: 'application/json',
        'content-type': 'application/json',
        authorization: 'Bearer at_1',
        'user-agent': 'invoicing-sdk-typescript/1.0.0',
      });
      expect(requests.every((init) => init.redirect === 'error')).toBe(true);
    });

    it('sends a custom User-Agent, and none in a browser or a web worker', async () => {
      const custom = testClient({ userAgent: 'acme-sync/2.1' });
      custom.server.on('GET', INVOICES, () => json(200, PAGE));
      await custom.api.invoices.listPage();
      expect(custom.server.requests.map((r) => r.headers['user-agent'])).toEqual(['acme-sync/2.1', 'acme-sync/2.1']);

      const global = globalThis as { window?: unknown; WorkerGlobalScope?: unknown };
      for (const marker of ['window', 'WorkerGlobalScope'] as const) {
        global[marker] = {};
        try {
          const browser = testClient({ userAgent: 'acme-sync/2.1' });
          browser.server.on('GET', INVOICES, () => json(200, PAGE));
          await browser.api.invoices.listPage();
          expect(browser.server.requests.map((r) => r.headers['user-agent'])).toEqual([undefined, undefined]);
        } finally {
          delete global[marker];
        }
      }
    });

    it('joins the base URL without doubling slashes', async () => {
      const server = new FakeApi();
      const { api } = testClient({ baseUrl: `${server.baseUrl}/` }, server);
      server.on('GET', INVOICES, () => json(200, PAGE));
      await api.invoices.listPage();
      expect(server.requests.map((r) => r.path)).toEqual([TOKEN, INVOICES]);
    });
  });
});

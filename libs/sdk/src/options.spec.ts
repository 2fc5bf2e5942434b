import { InvoicingError } from './errors';
import { Invoicing } from './invoicing';
import type { InvoicingOptions } from './options';
import { FakeApi, json } from './testing/fake-api';
import { CLIENT_SECRET, testClient } from './testing/test-client';

const VALID: InvoicingOptions = { baseUrl: 'https://api.test', clientId: 'ak_live_client', clientSecret: CLIENT_SECRET, fetch: async () => json(200, {}) };

describe('options', () => {
  it.each([
    ['baseUrl', { baseUrl: '' }],
    ['clientId', { clientId: undefined }],
    ['clientSecret', { clientSecret: '  ' }],
    ['scope', { scope: '' }],
    ['maxRetries', { maxRetries: -1 }],
    ['maxRetryTimeMs', { maxRetryTimeMs: Number.NaN }],
    ['timeoutMs', { timeoutMs: 0 }],
    ['refreshAheadSeconds', { refreshAheadSeconds: -5 }],
  ])('refuses a bad %s, naming it', (name, change) => {
    const create = () => new Invoicing({ ...VALID, ...change } as InvoicingOptions);
    expect(create).toThrow(InvoicingError);
    expect(create).toThrow(name);
  });

  it.each([
    ['http, not https', 'http://api.example.com'],
    ['http to a host that only starts like a loopback one', 'http://localhost.example.com'],
    ['http to a name that only starts like 127/8', 'http://127.0.0.1.example.com'],
    ['another scheme', 'ftp://api.example.com'],
    ['not a URL', 'api.example.com'],
    ['credentials', 'https://user:sk_live_hidden@api.example.com'],
    ['a query', 'https://api.example.com/?key=sk_live_hidden'],
    ['a fragment', 'https://api.example.com/#sk_live_hidden'],
  ])('refuses a baseUrl with %s, without repeating it', (_name, baseUrl) => {
    const create = () => new Invoicing({ ...VALID, baseUrl });
    expect(create).toThrow(InvoicingError);
    expect(create).toThrow(/^new Invoicing\(options\): baseUrl must be an https URL/);
    try {
      create();
    } catch (e) {
      expect((e as Error).message).not.toContain('hidden');
      expect((e as Error).message).not.toContain('example.com');
    }
  });

  it.each([
    'https://api.example.com',
    'https://api.example.com/prefix/',
    'HTTPS://API.example.com',
    'http://localhost:8080',
    'http://127.0.0.1:8080',
    'http://127.1.2.3',
    'http://[::1]:8080',
  ])('accepts the baseUrl %s', (baseUrl) => {
    expect(() => new Invoicing({ ...VALID, baseUrl })).not.toThrow();
  });

  it('clamps timeoutMs to what a timer can wait (2^31-1 ms): a longer one would end every attempt at once', async () => {
    const server = new FakeApi();
    server.on('GET', '/api/v1/clients', (request) =>
      new Promise<Response>((resolve, reject) => {
        const timer = setTimeout(() => resolve(json(200, { object: 'list', data: [], has_more: false })), 20);
        request.signal?.addEventListener('abort', () => {
          clearTimeout(timer);
          reject(new DOMException('The operation was aborted.', 'AbortError'));
        });
      }),
    );
    const { api } = testClient({ timeoutMs: 3_000_000_000, maxRetries: 0 }, server);

    await expect(api.clients.listPage()).resolves.toMatchObject({ object: 'list' });
  });

  it('clamps maxRetryTimeMs to what a timer can wait: a Retry-After beyond 2^31-1 ms is not waited (a timer would fire at once)', async () => {
    const { api, server } = testClient({ sleep: undefined, maxRetryTimeMs: 1e12 });
    server.once('GET', '/api/v1/expenses', () => json(503, {}, { 'retry-after': '3000000' }));
    server.on('GET', '/api/v1/expenses', () => json(200, { object: 'list', data: [], has_more: false }));

    await expect(api.expenses.listPage()).rejects.toMatchObject({ status: 503, retryAfterSeconds: 3_000_000 });
    expect(server.calls('GET', '/api/v1/expenses')).toHaveLength(1);
  });

  it('never repeats a value in its messages', () => {
    try {
      new Invoicing({ ...VALID, clientId: '', clientSecret: CLIENT_SECRET });
    } catch (e) {
      expect((e as Error).message).not.toContain(CLIENT_SECRET);
    }
    expect.assertions(1);
  });

  it('uses the global fetch, called on globalThis, when none is given', async () => {
    const original = globalThis.fetch;
    const calls: Array<{ url: string; self: unknown }> = [];
    globalThis.fetch = async function (this: unknown, url: RequestInfo | URL) {
      calls.push({ url: String(url), self: this });
      return String(url).endsWith('/auth/token')
        ? json(200, { access_token: 'at_g', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_live_g', scope: 's' })
        : json(200, { object: 'list', data: [], has_more: false });
    };
    try {
      const api = new Invoicing({ baseUrl: 'https://api.test', clientId: 'ak_live_client', clientSecret: CLIENT_SECRET });
      await api.clients.listPage({ limit: 5 });
    } finally {
      globalThis.fetch = original;
    }
    expect(calls.map((c) => c.url)).toEqual(['https://api.test/api/v1/auth/token', 'https://api.test/api/v1/clients?limit=5']);
    expect(calls.every((c) => c.self === globalThis)).toBe(true);
  });

  it('explains what to do in a runtime without fetch', () => {
    const original = globalThis.fetch;
    (globalThis as { fetch?: unknown }).fetch = undefined;
    try {
      expect(() => new Invoicing({ ...VALID, fetch: undefined })).toThrow('pass options.fetch');
    } finally {
      globalThis.fetch = original;
    }
  });

  it('waits with a real timer by default', async () => {
    const { api, server } = testClient({ sleep: undefined });
    server.once('GET', '/api/v1/expenses', () => json(503, {}, { 'retry-after': '0' }));
    server.on('GET', '/api/v1/expenses', () => json(200, { object: 'list', data: [], has_more: false }));
    await expect(api.expenses.listPage()).resolves.toMatchObject({ object: 'list' });
    expect(server.calls('GET', '/api/v1/expenses')).toHaveLength(2);
  });
});

import { InvoicingError } from './errors';
import { Invoicing } from './invoicing';
import type { InvoicingOptions } from './options';
import { json } from './testing/fake-api';
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

import { inspect } from 'node:util';
import { InvoicingApiError, InvoicingConnectionError, InvoicingError, InvoicingOAuthError } from './errors';
import { invalidToken, json, networkError, oauthError, problem, REFRESH, TOKEN } from './testing/fake-api';
import { CLIENT_SECRET, testClient } from './testing/test-client';

const INVOICES = '/api/v1/invoices';

/** Everything an error shows when logged, thrown uncaught or serialised. */
function everythingShown(error: unknown): string {
  return [String(error), (error as Error).stack, inspect(error, { depth: 5, showHidden: true }), JSON.stringify(error)].join('\n');
}

describe('errors', () => {
  it('are instances of their class and of InvoicingError and Error, with literal names', () => {
    const api = new InvoicingApiError({ method: 'GET', path: '/p', status: 404, type: 't', title: 'Not found', detail: 'd', body: null });
    const oauth = new InvoicingOAuthError({ path: TOKEN, status: 401, error: 'invalid_client' });
    const connection = new InvoicingConnectionError('m', { cause: new TypeError('x') });
    const base = new InvoicingError('m');

    for (const [error, type, name] of [
      [api, InvoicingApiError, 'InvoicingApiError'],
      [oauth, InvoicingOAuthError, 'InvoicingOAuthError'],
      [connection, InvoicingConnectionError, 'InvoicingConnectionError'],
      [base, InvoicingError, 'InvoicingError'],
    ] as const) {
      expect(error).toBeInstanceOf(type);
      expect(error).toBeInstanceOf(InvoicingError);
      expect(error).toBeInstanceOf(Error);
      expect(error.name).toBe(name);
      expect(Object.getPrototypeOf(error)).toBe(type.prototype);
    }
    expect(api).not.toBeInstanceOf(InvoicingOAuthError);
    expect(connection.cause).toBeInstanceOf(TypeError);
  });

  it('InvoicingApiError carries the problem fields, the request id and Retry-After', async () => {
    const { api, server } = testClient({ maxRetries: 0 });
    server.once('POST', INVOICES, () =>
      problem(422, { detail: 'The request body has invalid fields.', errors: [{ field: 'line_items[0].quantity', code: 'too_precise', message: 'at most 3 decimals' }] }),
    );
    server.once('GET', INVOICES, () => problem(429, { detail: 'Slow down.' }, { 'retry-after': '30' }));

    const invalid = (await api.invoices.create({ client_id: 'c', currency: 'EUR', line_items: [] }).catch((e: unknown) => e)) as InvoicingApiError;
    const limited = (await api.invoices.listPage().catch((e: unknown) => e)) as InvoicingApiError;

    expect(invalid).toBeInstanceOf(InvoicingApiError);
    expect(invalid).toMatchObject({
      status: 422,
      type: 'https://docs.invoicing.example/problems/422',
      title: 'Title 422',
      detail: 'The request body has invalid fields.',
      requestId: 'req_422',
      errors: [{ field: 'line_items[0].quantity', code: 'too_precise', message: 'at most 3 decimals' }],
      retryAfterSeconds: undefined,
    });
    expect(invalid.body).toMatchObject({ status: 422, request_id: 'req_422' });
    expect(invalid.message).toBe('POST /api/v1/invoices answered 422 Title 422: The request body has invalid fields.');
    expect(limited).toMatchObject({ status: 429, detail: 'Slow down.', retryAfterSeconds: 30, errors: [] });
  });

  it('InvoicingOAuthError carries the RFC 6749 fields', async () => {
    const { api, server } = testClient();
    server.once('POST', TOKEN, () => oauthError(400, 'invalid_scope', { 'x-request-id': 'req_tok' }));

    const error = (await api.invoices.listPage().catch((e: unknown) => e)) as InvoicingOAuthError;

    expect(error).toBeInstanceOf(InvoicingOAuthError);
    expect(error).toMatchObject({ status: 400, error: 'invalid_scope', errorDescription: 'invalid_scope described', requestId: 'req_tok' });
    expect(error.message).toBe('POST /api/v1/auth/token answered 400 invalid_scope: invalid_scope described');
  });

  it('never shows the client secret or a token, whatever fails', async () => {
    const { api, server, clock } = testClient({ maxRetries: 0 });
    server.on('GET', INVOICES, () => json(200, { object: 'list', data: [], has_more: false }));
    await api.invoices.listPage(); // at_1, rt_live_1 are now held
    const errors: unknown[] = [];

    server.once('GET', INVOICES, () => invalidToken(), () => invalidToken());
    errors.push(await api.invoices.listPage().catch((e: unknown) => e)); // 401 after a re-exchange (at_2)
    server.once('GET', INVOICES, () => networkError());
    errors.push(await api.invoices.listPage().catch((e: unknown) => e));
    clock.advance(3600_000);
    server.once('POST', REFRESH, () => oauthError(400, 'invalid_grant'));
    server.once('POST', TOKEN, () => oauthError(401, 'invalid_client'));
    errors.push(await api.invoices.listPage().catch((e: unknown) => e));
    server.once('POST', TOKEN, () => networkError());
    errors.push(await api.invoices.listPage().catch((e: unknown) => e));

    expect(errors.map((e) => (e as Error).name)).toEqual(['InvoicingApiError', 'InvoicingConnectionError', 'InvoicingOAuthError', 'InvoicingConnectionError']);
    for (const error of errors) {
      const shown = everythingShown(error);
      for (const secret of [CLIENT_SECRET, 'at_1', 'at_2', 'rt_live_1', 'rt_live_2']) expect(shown).not.toContain(secret);
    }
  });

  it('the client object does not show its secret or tokens when logged', async () => {
    const { api, server } = testClient();
    server.on('GET', INVOICES, () => json(200, { object: 'list', data: [], has_more: false }));
    await api.invoices.listPage();

    const shown = inspect(api, { depth: 10, showHidden: true }) + JSON.stringify(api);
    for (const secret of [CLIENT_SECRET, 'at_1', 'rt_live_1']) expect(shown).not.toContain(secret);
  });
});

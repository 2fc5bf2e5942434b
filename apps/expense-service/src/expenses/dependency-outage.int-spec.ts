import { call, ResourceTestApp, startResourceTestApp, startTcpProxy, TcpProxy } from '@invoicing/resource-api/testing';
import { EXPENSE_SERVICE } from '../expense-service.definition';

/** Postgres goes away under a running service: 503 problem+json with Retry-After, no internals; then it recovers. */
describe('a resource service when Postgres goes away', () => {
  let app: ResourceTestApp;
  let proxy: TcpProxy;

  beforeAll(async () => {
    proxy = await startTcpProxy(5432);
    app = await startResourceTestApp(EXPENSE_SERVICE, {
      DATABASE_URL: `postgres://expense_app:expense_app_dev@127.0.0.1:${proxy.port}/invoicing`,
    });
  });

  afterAll(async () => {
    await app.close().catch(() => undefined);
    await proxy.close();
  });

  it('answers 503 while Postgres is unreachable and works again when it is back', async () => {
    const token = app.token();
    const body = { description: 'Taxi', amount: 100, currency: 'EUR', incurred_on: '2026-11-20' };
    expect((await call('POST', `${app.baseUrl}/api/v1/expenses`, { token, body })).status).toBe(201);

    proxy.cut();
    const list = await call('GET', `${app.baseUrl}/api/v1/expenses`, { token });
    const create = await call('POST', `${app.baseUrl}/api/v1/expenses`, { token, body });
    for (const r of [list, create]) {
      expect(r.status).toBe(503);
      expect(r.headers.get('content-type')).toContain('application/problem+json');
      expect(r.headers.get('retry-after')).toBe('1');
      expect(r.text).not.toMatch(/ECONNREFUSED|postgres|SELECT|INSERT|stack/i);
    }
    expect((await call('GET', `${app.baseUrl}/health/ready`)).status).toBe(503);

    proxy.restore();
    let recovered = 0;
    for (let i = 0; i < 50 && recovered !== 201; i++) {
      recovered = (await call('POST', `${app.baseUrl}/api/v1/expenses`, { token, body })).status;
      if (recovered !== 201) await new Promise((r) => setTimeout(r, 100));
    }
    expect(recovered).toBe(201);
  });
});

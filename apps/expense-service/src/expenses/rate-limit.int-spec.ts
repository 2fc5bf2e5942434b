import { call, ResourceTestApp, startResourceTestApp } from '@invoicing/resource-api/testing';
import { EXPENSE_SERVICE } from '../expense-service.definition';

describe('rate limiting per API key', () => {
  let app: ResourceTestApp;

  beforeAll(async () => {
    app = await startResourceTestApp(EXPENSE_SERVICE, { RATE_LIMIT_PER_SECOND: '1', RATE_LIMIT_BURST: '5' });
  });

  afterAll(async () => {
    await app.close();
  });

  it('answers 429 with Retry-After past the burst, for that key only', async () => {
    const token = app.token();
    const statuses: number[] = [];
    for (let i = 0; i < 6; i++) statuses.push((await call('GET', `${app.baseUrl}/api/v1/expenses`, { token })).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200, 429]);
    const limited = await call('GET', `${app.baseUrl}/api/v1/expenses`, { token });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited.headers.get('content-type')).toContain('application/problem+json');
    // Another key (app.token() mints a new key id each time) is not affected.
    expect((await call('GET', `${app.baseUrl}/api/v1/expenses`, { token: app.token() })).status).toBe(200);
  });
});

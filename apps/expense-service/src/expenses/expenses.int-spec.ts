import { call, describeResourceContract } from '@invoicing/resource-api/testing';
import { EXPENSE_SERVICE } from '../expense-service.definition';

const suite = describeResourceContract({
  definition: EXPENSE_SERVICE,
  validBody: async (_app, _org, n) => ({ description: `Taxi ${n}`, amount: 2300 + n, currency: 'EUR', category: 'travel', vendor: 'Cab Co', incurred_on: '2026-11-20' }),
  invalid: { body: { amount: 0, currency: 'EUR', incurred_on: '2026-02-30' }, fields: ['description', 'amount', 'incurred_on'] },
});

describe('expenses', () => {
  it('refuses a float amount (money is integer minor units)', async () => {
    const app = suite.app();
    const r = await call('POST', `${app.baseUrl}/api/v1/expenses`, {
      token: app.token(),
      body: { description: 'x', amount: 12.5, currency: 'EUR', incurred_on: '2026-11-20' },
    });
    expect(r.status).toBe(422);
    expect(r.body.errors).toEqual([expect.objectContaining({ field: 'amount', code: 'invalid_type' })]);
  });

  it('refuses, with 422 naming incurred_on, dates Postgres or the documents cannot hold, and takes both ends of the range', async () => {
    const app = suite.app();
    const create = (incurred_on: string) =>
      call('POST', `${app.baseUrl}/api/v1/expenses`, { token: app.token(), body: { description: 'x', amount: 1, currency: 'EUR', incurred_on } });
    for (const date of ['0000-01-01', '0001-01-01', '1899-12-31', '10000-01-01', '2023-02-29']) {
      const r = await create(date);
      expect({ date, status: r.status, errors: r.body.errors }).toEqual({ date, status: 422, errors: [expect.objectContaining({ field: 'incurred_on', code: 'invalid_format' })] });
    }
    for (const date of ['1900-01-01', '9999-12-31', '2024-02-29']) expect({ date, status: (await create(date)).status }).toEqual({ date, status: 201 });
  });
});

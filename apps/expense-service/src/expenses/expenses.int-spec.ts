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
});

import { buildRow, orgScopeOf } from '@invoicing/resource-api';
import { EXPENSE_RESOURCE } from './expense.resource';

describe('expense resource', () => {
  it('keeps the amount in minor units and the date as a calendar date', async () => {
    const entity = await buildRow(EXPENSE_RESOURCE, {
      scope: orgScopeOf({ organizationId: '11111111-1111-7111-8111-111111111111' }),
      input: { description: 'Taxi', amount: 2300, currency: 'EUR', incurred_on: '2026-11-20' },
      id: '01930000-0000-7000-8000-000000000003',
      now: new Date('2026-11-21T10:00:00.000Z'),
    } as never);
    expect(EXPENSE_RESOURCE.view(entity)).toEqual({
      object: 'expense',
      id: 'exp_01930000000070008000000000000003',
      created_at: '2026-11-21T10:00:00.000Z',
      description: 'Taxi',
      amount: 2300,
      currency: 'EUR',
      category: null,
      vendor: null,
      incurred_on: '2026-11-20',
    });
  });
});

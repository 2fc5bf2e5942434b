import { LIST_FILTERS } from '@invoicing/contracts';
import { buildRow, checkListFilters, orgScopeOf } from '@invoicing/resource-api';
import { ProblemException } from '@invoicing/service-kit';
import { PAYMENT_RESOURCE } from './payment.resource';

const invoiceId = `inv_${'2'.repeat(32)}`;
const build = (input: Record<string, unknown>) =>
  buildRow(PAYMENT_RESOURCE, {
    scope: orgScopeOf({ organizationId: '11111111-1111-7111-8111-111111111111' }),
    input,
    id: '01930000-0000-7000-8000-000000000004',
    now: new Date('2026-11-21T10:00:00.000Z'),
    // A fake resolver: the invoice exists and is in EUR.
    references: { require: async () => ({ object: 'invoice', id: invoiceId, currency: 'EUR' }) },
    // The invoice's running total (payments.invoice_payment_totals) has room for the payment.
    tx: { query: async () => [{}] },
  } as never);

describe('payment resource', () => {
  it("requires the invoice's currency", async () => {
    await expect(build({ invoice_id: invoiceId, amount: 100, currency: 'USD' })).rejects.toBeInstanceOf(ProblemException);
    await expect(build({ invoice_id: invoiceId, amount: 100, currency: 'USD' })).rejects.toMatchObject({
      status: 422,
      errors: [{ field: 'currency', code: 'currency_mismatch', message: "must be the invoice's currency, EUR" }],
    });
  });

  it('defaults paid_at to now and method to null', async () => {
    const view = PAYMENT_RESOURCE.view(await build({ invoice_id: invoiceId, amount: 100, currency: 'EUR' }));
    expect(view).toMatchObject({ invoice_id: invoiceId, paid_at: '2026-11-21T10:00:00.000Z', method: null, reference: null });
  });

  it("lists by the manifest's filters: invoice_id and the created range every list has", () => {
    expect(() => checkListFilters('payments', LIST_FILTERS.payments, PAYMENT_RESOURCE.filters ?? {})).not.toThrow();
    expect(Object.keys(PAYMENT_RESOURCE.filters ?? {})).toEqual(['created[gte]', 'created[gt]', 'created[lte]', 'created[lt]', 'invoice_id']);
  });
});

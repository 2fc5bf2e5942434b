import { CreatePaymentRequest, MONEY_MAX, parsePublicId, toPublicId } from '@invoicing/contracts';
import { defineResource } from '@invoicing/resource-api';
import { FieldErrors } from '@invoicing/service-kit';
import { PaymentEntity } from './payment.entity';

/**
 * A payment of an invoice of the organization, in the invoice's currency. Overpayment is accepted,
 * up to the money range: the payments of one invoice may add up to more than its total, never to
 * more than MONEY_MAX (docs/api.md section 7), or the invoice's `amount_paid` could leave the range
 * every reader of it relies on. The invoice service applies the payment when it receives its domain
 * event (within a second).
 */
export const PAYMENT_RESOURCE = defineResource<PaymentEntity, CreatePaymentRequest>('payments', {
  entity: PaymentEntity,
  filters: { invoice_id: { column: 'invoice_id', parse: (v) => parsePublicId('inv', v) } },

  async build({ scope, input, tx, now, references }) {
    const invoice = await references.require('invoice', input.invoice_id, 'invoice_id');
    const errors = new FieldErrors();
    if (invoice.currency !== input.currency) {
      errors.add('currency', 'currency_mismatch', `must be the invoice's currency, ${String(invoice.currency)}`);
    }
    errors.throwIfAny();
    const invoiceId = parsePublicId('inv', invoice.id)!;
    // The invoice's running total, in the create's transaction: its row stays locked until the
    // payment commits or rolls back, so two payments of one invoice cannot both pass the bound.
    const counted: unknown[] = await tx.query(
      `INSERT INTO payments.invoice_payment_totals AS t (organization_id, invoice_id, amount_paid) VALUES ($1, $2, $3)
       ON CONFLICT (organization_id, invoice_id) DO UPDATE SET amount_paid = t.amount_paid + EXCLUDED.amount_paid
       WHERE t.amount_paid + EXCLUDED.amount_paid <= $4
       RETURNING 1`,
      [scope.organizationId, invoiceId, input.amount, MONEY_MAX],
    );
    if (counted.length === 0) {
      errors.add('amount', 'out_of_range', `the payments of this invoice would add up to more than ${MONEY_MAX} minor units`);
      errors.throwIfAny();
    }
    return Object.assign(new PaymentEntity(), {
      invoiceId,
      amount: input.amount,
      currency: input.currency,
      method: input.method ?? null,
      paidAt: input.paid_at ? new Date(input.paid_at) : now,
      reference: input.reference ?? null,
    });
  },

  view: (p) => ({
    object: 'payment',
    id: toPublicId('pay', p.id),
    created_at: p.createdAt.toISOString(),
    invoice_id: toPublicId('inv', p.invoiceId),
    amount: p.amount,
    currency: p.currency,
    method: p.method,
    paid_at: p.paidAt.toISOString(),
    reference: p.reference,
  }),
});

import { CreatePaymentRequest, parsePublicId, toPublicId } from '@invoicing/contracts';
import { defineResource } from '@invoicing/resource-api';
import { FieldErrors } from '@invoicing/service-kit';
import { PaymentEntity } from './payment.entity';

/**
 * A payment of an invoice of the organization, in the invoice's currency. Overpayment is accepted;
 * the invoice service applies the payment when it receives its domain event (within a second).
 */
export const PAYMENT_RESOURCE = defineResource<PaymentEntity, CreatePaymentRequest>('payments', {
  entity: PaymentEntity,
  filters: { invoice_id: { column: 'invoice_id', parse: (v) => parsePublicId('inv', v) } },

  async build({ input, now, references }) {
    const invoice = await references.require('invoice', input.invoice_id, 'invoice_id');
    const errors = new FieldErrors();
    if (invoice.currency !== input.currency) {
      errors.add('currency', 'currency_mismatch', `must be the invoice's currency, ${String(invoice.currency)}`);
    }
    errors.throwIfAny();
    return Object.assign(new PaymentEntity(), {
      invoiceId: parsePublicId('inv', invoice.id)!,
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

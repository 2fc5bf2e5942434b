import { toPublicId } from '@invoicing/contracts';
import { quantityForDisplay } from './invoice-calculation';
import type { InvoiceEntity } from './invoice.entity';

/** The public representation of an invoice (docs/api.md sections 2 and 7). */
export function invoiceView(i: InvoiceEntity) {
  return {
    object: 'invoice' as const,
    id: toPublicId('inv', i.id),
    created_at: i.createdAt.toISOString(),
    client_id: toPublicId('cli', i.clientId),
    number: i.number,
    currency: i.currency,
    issue_date: i.issueDate,
    due_date: i.dueDate,
    status: i.status,
    line_items: i.lineItems.map((l) => ({
      description: l.description,
      quantity: quantityForDisplay(l),
      unit_price: l.unit_price,
      tax_rate_bps: l.tax_rate_bps,
      product_id: l.product_id ? toPublicId('prd', l.product_id) : null,
      amount: l.amount,
      tax: l.tax,
    })),
    subtotal: i.subtotal,
    tax_total: i.taxTotal,
    total: i.total,
    amount_paid: i.amountPaid,
    amount_due: Math.max(i.total - i.amountPaid, 0),
    notes: i.notes,
  };
}

export type InvoiceView = ReturnType<typeof invoiceView>;

import {
  CreateInvoiceRequest,
  DOMAIN_EVENT_TYPES,
  DomainEvent,
  INVOICE_STATUSES,
  MONEY_MAX,
  parsePublicId,
} from '@invoicing/contracts';
import { Logger } from '@nestjs/common';
import { defineResource } from '@invoicing/resource-api';
import { FieldErrors } from '@invoicing/service-kit';
import type { EntityManager } from 'typeorm';
import { calculateInvoice, ProductDefaults } from './invoice-calculation';
import { InvoiceEntity } from './invoice.entity';
import { invoiceView } from './invoice.view';

const logger = new Logger('InvoicePayments');

const DUPLICATE_NUMBER = {
  detail: 'An invoice with this number already exists.',
  error: { field: 'number', code: 'duplicate', message: 'is already used by another invoice' },
};

/**
 * A payment announced by the payment service counts once towards its invoice (the table of applied
 * payments makes a redelivered event a no-op). The payment service keeps an invoice's payments
 * within MONEY_MAX; the sum here saturates at it all the same, because a consumer that threw on an
 * event would stop every later event of its partition, of every organization, behind it.
 */
async function applyPayment(event: DomainEvent, organizationId: string, tx: EntityManager): Promise<void> {
  const payment = event.data.object as unknown as { id: string; invoice_id: string; amount: number };
  const invoice = parsePublicId('inv', payment.invoice_id);
  const paymentId = parsePublicId('pay', payment.id);
  if (!invoice || !paymentId) return;
  const inserted: unknown[] = await tx.query(
    `INSERT INTO invoices.applied_payments (payment_id, invoice_id, organization_id, amount) VALUES ($1, $2, $3, $4)
     ON CONFLICT (payment_id) DO NOTHING RETURNING 1`,
    [paymentId, invoice, organizationId, payment.amount],
  );
  if (inserted.length === 0) return;
  // TypeORM answers an UPDATE with [rows, rowCount] on Postgres.
  const [rows]: [Array<{ past: boolean }>, number] = await tx.query(
    `UPDATE invoices.invoices SET amount_paid = LEAST(amount_paid + $3, $4) WHERE id = $1 AND organization_id = $2
     RETURNING amount_paid = $4 AS past`,
    [invoice, organizationId, payment.amount, MONEY_MAX],
  );
  if (rows[0]?.past) logger.warn({ msg: 'invoice amount_paid at the money range', invoice_id: payment.invoice_id, payment_id: payment.id });
}

export const INVOICE_RESOURCE = defineResource<InvoiceEntity, CreateInvoiceRequest>('invoices', {
  entity: InvoiceEntity,
  filters: {
    client_id: { column: 'client_id', parse: (v) => parsePublicId('cli', v) },
    status: { column: 'status', parse: (v) => ((INVOICE_STATUSES as readonly string[]).includes(v) ? v : null) },
  },
  // Up to 500 lines of 1,000 characters: a page of invoices stops at LIST_PAGE_MAX_BYTES.
  sizeColumn: 'content_bytes',
  conflicts: { invoices_number_unique: DUPLICATE_NUMBER },
  // Gapless per organization (INV-000001, ...; ADR 0036): numbers callers chose are skipped.
  sequence: { column: 'number', table: 'invoices.invoice_number_counters', prefix: 'INV-', digits: 6 },
  onEvent: { [DOMAIN_EVENT_TYPES.payment]: applyPayment },

  async build({ input, now, references }) {
    const errors = new FieldErrors();
    const issueDate = input.issue_date ?? now.toISOString().slice(0, 10);
    if (input.due_date !== undefined && input.due_date < issueDate) {
      errors.add('due_date', 'before_issue_date', 'must not be before issue_date');
    }
    const client = await references.require('client', input.client_id, 'client_id');
    const products = new Map<string, ProductDefaults>();
    for (const [i, line] of input.line_items.entries()) {
      if (!line.product_id || products.has(line.product_id)) continue;
      const product = await references.require('product', line.product_id, `line_items[${i}].product_id`);
      const usesPrice = line.unit_price === undefined;
      if (usesPrice && product.currency !== input.currency) {
        errors.add(`line_items[${i}].product_id`, 'currency_mismatch', `the product is priced in ${String(product.currency)}, the invoice in ${input.currency}`);
        continue;
      }
      products.set(line.product_id, {
        description: String(product.name),
        unit_price: Number(product.unit_price),
        tax_rate_bps: Number(product.tax_rate_bps),
      });
    }
    const totals = calculateInvoice(input.line_items, errors, products);
    errors.throwIfAny();

    const entity = new InvoiceEntity();
    Object.assign(entity, {
      clientId: parsePublicId('cli', client.id)!,
      // Absent: the next of the organization's sequence, taken when the row is inserted (`sequence`).
      number: input.number ?? null,
      currency: input.currency,
      issueDate,
      dueDate: input.due_date ?? null,
      notes: input.notes ?? null,
      lineItems: totals.lines.map((l) => ({ ...l, product_id: l.product_id ? parsePublicId('prd', l.product_id) : null })),
      subtotal: totals.subtotal,
      taxTotal: totals.taxTotal,
      total: totals.total,
      amountPaid: 0,
    });
    return entity;
  },

  view: invoiceView,
});

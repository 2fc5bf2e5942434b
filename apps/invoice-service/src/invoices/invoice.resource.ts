import {
  CreateInvoiceRequest,
  DOMAIN_EVENT_TYPES,
  DOMAIN_TOPIC,
  DomainEvent,
  INVOICE_BALANCE_CHANGED_TYPE,
  INVOICE_STATUSES,
  MONEY_MAX,
  parsePublicId,
  toPublicId,
} from '@invoicing/contracts';
import { enqueueEvents } from '@invoicing/event-bus';
import { uuidv7 } from 'uuidv7';
import { Logger } from '@nestjs/common';
import { anyOf, booleanChoice, dateRange, defineResource } from '@invoicing/resource-api';
import { FieldErrors } from '@invoicing/service-kit';
import { EntityManager, In } from 'typeorm';
import { calculateInvoice, ProductDefaults } from './invoice-calculation';
import { InvoiceEntity } from './invoice.entity';
import { invoiceView } from './invoice.view';
import { INVOICE_RENDERERS, keepOrganizationProfiles } from './document/invoice-representations';

const logger = new Logger('InvoicePayments');

const DUPLICATE_NUMBER = {
  detail: 'An invoice with this number already exists.',
  error: { field: 'number', code: 'duplicate', message: 'is already used by another invoice' },
};

/**
 * The payments of a batch of events, applied to their invoices (docs/api.md section 7: within a
 * second). A payment counts once (the table of applied payments makes a redelivered event a no-op);
 * the new ones of the batch are summed per invoice and each invoice is updated once, its row locked
 * in the order of invoice ids, so that the batches of two instances never deadlock. The payment
 * service keeps an invoice's payments within MONEY_MAX; the sum here saturates at it all the same,
 * because a consumer that threw on an event would stop every later event of its partition, of every
 * organization, behind it.
 */
async function applyPayments(events: ReadonlyArray<{ event: DomainEvent; organizationId: string }>, tx: EntityManager): Promise<void> {
  const payments = events.flatMap(({ event, organizationId }) => {
    const payment = event.data.object as unknown as { id: string; invoice_id: string; amount: number };
    const invoice = parsePublicId('inv', payment.invoice_id);
    const id = parsePublicId('pay', payment.id);
    return invoice && id ? [{ id, invoice, organizationId, amount: payment.amount }] : [];
  });
  if (payments.length === 0) return;
  const applied: Array<{ invoice_id: string; organization_id: string; amount: string }> = await tx.query(
    `INSERT INTO invoices.applied_payments (payment_id, invoice_id, organization_id, amount)
     SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::bigint[])
     ON CONFLICT (payment_id) DO NOTHING RETURNING invoice_id, organization_id, amount`,
    [payments.map((p) => p.id), payments.map((p) => p.invoice), payments.map((p) => p.organizationId), payments.map((p) => p.amount)],
  );
  if (applied.length === 0) return;
  const sums = new Map<string, { invoice: string; organizationId: string; amount: bigint }>();
  for (const row of applied) {
    const key = `${row.invoice_id}/${row.organization_id}`;
    const sum = sums.get(key) ?? { invoice: row.invoice_id, organizationId: row.organization_id, amount: 0n };
    sum.amount += BigInt(row.amount);
    sums.set(key, sum);
  }
  const targets = [...sums.values()].sort((a, b) => (a.invoice < b.invoice ? -1 : a.invoice > b.invoice ? 1 : 0));
  // Locked in id order before the update, whose own order follows its plan; read as they were.
  const before: Array<{ id: string; amount_paid: string; status: string }> = await tx.query(
    `SELECT id, amount_paid, status FROM invoices.invoices WHERE id = ANY($1::uuid[]) ORDER BY id FOR UPDATE`,
    [targets.map((t) => t.invoice)],
  );
  // TypeORM answers an UPDATE with [rows, rowCount] on Postgres.
  const [saturated]: [Array<{ id: string }>, number] = await tx.query(
    `UPDATE invoices.invoices i SET amount_paid = LEAST(i.amount_paid + d.amount, $4)
       FROM unnest($1::uuid[], $2::uuid[], $3::bigint[]) AS d(id, organization_id, amount)
      WHERE i.id = d.id AND i.organization_id = d.organization_id
     RETURNING i.id, i.amount_paid = $4 AS past`,
    [targets.map((t) => t.invoice), targets.map((t) => t.organizationId), targets.map((t) => String(t.amount)), MONEY_MAX],
  );
  for (const row of saturated as Array<{ id: string; past?: boolean }>) {
    if (row.past) logger.warn({ msg: 'invoice amount_paid at the money range', invoice_id: row.id });
  }
  await announceBalanceChanges(tx, before);
}

/**
 * Each invoice whose balance the batch changed, announced in the same transaction (the outbox): the
 * invoice as the API now returns it and its amount_paid and status before. The webhook service makes
 * `invoice.paid` and `invoice.partially_paid` of it; other services' read models keep the latest.
 */
async function announceBalanceChanges(tx: EntityManager, before: Array<{ id: string; amount_paid: string; status: string }>): Promise<void> {
  const previous = new Map(before.map((b) => [b.id, { amount_paid: Number(b.amount_paid), status: b.status }]));
  const invoices = await tx.getRepository(InvoiceEntity).findBy({ id: In([...previous.keys()]) });
  const time = new Date().toISOString();
  const events = invoices
    .filter((i) => previous.get(i.id)!.amount_paid !== i.amountPaid)
    .map((i) => {
      const view = invoiceView(i);
      return {
        id: uuidv7(),
        key: view.id,
        payload: {
          specversion: '1.0',
          id: uuidv7(),
          source: '/invoicing/invoice-service',
          type: INVOICE_BALANCE_CHANGED_TYPE,
          subject: view.id,
          time,
          datacontenttype: 'application/json',
          data: { organization_id: toPublicId('org', i.organizationId), object: view, previous: previous.get(i.id)! },
        },
      };
    });
  if (events.length > 0) await enqueueEvents(tx, 'invoices', DOMAIN_TOPIC, events);
}

export const INVOICE_RESOURCE = defineResource<InvoiceEntity, CreateInvoiceRequest>('invoices', {
  entity: InvoiceEntity,
  filters: {
    client_id: { column: 'client_id', parse: (v) => parsePublicId('cli', v), expected: 'a client id (cli_...)' },
    status: anyOf('status', INVOICE_STATUSES),
    // amount_due as the view computes it, max(total - amount_paid, 0): positive, or zero. The same
    // expression as the partial index invoices_org_unpaid_idx, so that the planner can use it.
    unpaid: booleanChoice('total - amount_paid > 0', 'total - amount_paid <= 0'),
    ...dateRange('issue_date', 'issue_date'),
    // An invoice without a due date matches no due_date bound (NULL compares to nothing).
    ...dateRange('due_date', 'due_date'),
  },
  // Up to 500 lines of 1,000 characters: a page of invoices stops at LIST_PAGE_MAX_BYTES.
  sizeColumn: 'content_bytes',
  conflicts: { invoices_number_unique: DUPLICATE_NUMBER },
  // Gapless per organization (INV-000001, ...; ADR 0036): numbers callers chose are skipped.
  sequence: { column: 'number', table: 'invoices.invoice_number_counters', prefix: 'INV-', digits: 6 },
  onEvents: { [DOMAIN_EVENT_TYPES.payment]: applyPayments },
  // The seller of the invoices created from now on (document/invoice-representations.ts).
  onOrganizationProfiles: keepOrganizationProfiles,
  // GET /api/v1/invoices/{id} with Accept: application/pdf or application/xml.
  representations: INVOICE_RENDERERS,
  documentName: (invoice) => invoice.number,

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

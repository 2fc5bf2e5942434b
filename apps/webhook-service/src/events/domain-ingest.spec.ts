import { DOMAIN_EVENT_TYPES, DomainEvent, INVOICE_BALANCE_CHANGED_TYPE } from '@invoicing/contracts';
import { webhookTypeOf } from './domain-ingest';

const event = (type: string, status: string, previous?: string) =>
  ({ type, data: { organization_id: 'org_x', object: { object: 'invoice', id: 'inv_x', created_at: '', status }, ...(previous ? { previous: { amount_paid: 0, status: previous } } : {}) } }) as unknown as DomainEvent;

describe('webhookTypeOf', () => {
  it('names a creation <kind>.created', () => {
    expect(webhookTypeOf(event(DOMAIN_EVENT_TYPES.client, 'x'))).toBe('client.created');
    expect(webhookTypeOf(event(DOMAIN_EVENT_TYPES.invoice, 'open'))).toBe('invoice.created');
  });

  it('names a balance change invoice.paid when the invoice became paid, invoice.partially_paid otherwise', () => {
    expect(webhookTypeOf(event(INVOICE_BALANCE_CHANGED_TYPE, 'paid', 'open'))).toBe('invoice.paid');
    expect(webhookTypeOf(event(INVOICE_BALANCE_CHANGED_TYPE, 'paid', 'partially_paid'))).toBe('invoice.paid');
    expect(webhookTypeOf(event(INVOICE_BALANCE_CHANGED_TYPE, 'partially_paid', 'open'))).toBe('invoice.partially_paid');
    // Paid already and paid more (an overpayment): the balance moved, it did not become paid.
    expect(webhookTypeOf(event(INVOICE_BALANCE_CHANGED_TYPE, 'paid', 'paid'))).toBe('invoice.partially_paid');
  });

  it('knows no other type', () => {
    expect(webhookTypeOf(event('invoicing.invoices.invoice_voided.v1', 'x'))).toBeNull();
  });
});

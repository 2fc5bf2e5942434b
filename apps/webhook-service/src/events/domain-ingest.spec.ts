import { buildAsyncApiDocument, DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, DomainEvent, INVOICE_BALANCE_CHANGED_TYPE, ORGANIZATION_PROFILE_CHANGED_V1 } from '@invoicing/contracts';
import type { BatchedMessage } from '@invoicing/event-bus';
import { DomainIngest, ingestBatch, NewWebhookEvent, retentionCutoff, webhookTypeOf } from './domain-ingest';

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

describe('ingestBatch', () => {
  const event: NewWebhookEvent = { sourceId: 's1', organizationId: '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596870', type: 'client.created', scope: 'clients', createdAt: '2026-11-27T00:00:00.000Z', object: {} };
  const worker = () => ({ kick: jest.fn() });

  it('stores a batch in one statement and wakes the worker only when deliveries were queued', async () => {
    const db = { query: jest.fn().mockResolvedValue([{ deliveries: '2' }]) };
    const w = worker();
    await ingestBatch(db, w, [], [event, { ...event, sourceId: 's2' }]);
    expect(db.query).toHaveBeenCalledTimes(1);
    expect(w.kick).toHaveBeenCalledTimes(1);
    const none = { query: jest.fn().mockResolvedValue([{ deliveries: '0' }]) };
    await ingestBatch(none, w, [], [event]);
    expect(w.kick).toHaveBeenCalledTimes(1);
  });

  it('asks nothing of Postgres for a batch with no events, and fails the batch (delivered again) when the statement fails', async () => {
    const idle = { query: jest.fn() };
    await ingestBatch(idle, worker(), [], []);
    expect(idle.query).not.toHaveBeenCalled();
    const w = worker();
    await expect(ingestBatch({ query: jest.fn().mockRejectedValue(new Error('connection refused')) }, w, [], [event])).rejects.toThrow('connection refused');
    expect(w.kick).not.toHaveBeenCalled();
  });

  it('keeps 30 days of events', () => {
    expect(retentionCutoff(Date.parse('2026-11-27T00:00:00Z'))).toBe(Date.parse('2026-10-28T00:00:00Z'));
  });
});

describe('DomainIngest.toEvents', () => {
  /** The AsyncAPI document's example of a type: a valid event of it, as published. */
  const example = (type: string) => {
    const messages = (buildAsyncApiDocument() as { components: { messages: Record<string, { examples: Array<{ payload: Record<string, unknown> }> }> } }).components.messages;
    return messages[type].examples[0].payload;
  };
  const message = (value: unknown, offset: string) => ({ topic: DOMAIN_TOPIC, partition: 0, offset, key: null, value: Buffer.from(JSON.stringify(value)), timestamp: 0 }) as unknown as BatchedMessage;
  const now = new Date().toISOString();

  it('makes a webhook event of an object\'s event and skips an organization\'s profile change quietly: it is no webhook event', () => {
    const ingest = Object.create(DomainIngest.prototype) as DomainIngest;
    const warn = jest.fn();
    Object.assign(ingest, { logger: { warn } });
    const created = example(DOMAIN_EVENT_TYPES.client) as { data: { object: Record<string, unknown> } };
    const client = { ...created, time: now, data: { ...created.data, object: { ...created.data.object, created_at: now } } };
    const profile = { ...example(ORGANIZATION_PROFILE_CHANGED_V1), time: now };
    const events = ingest.toEvents([message(profile, '1'), message(client, '2'), message({ ...profile, data: {} }, '3')]);
    expect(events.map((e) => e.type)).toEqual(['client.created']);
    // Only the malformed profile change is worth a warning.
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toContain(`${DOMAIN_TOPIC} at offset 3`);
  });
});

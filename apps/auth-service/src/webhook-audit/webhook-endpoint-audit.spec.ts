import { WEBHOOK_ENDPOINT_DISABLED_V1, WEBHOOK_ENDPOINTS_TOPIC, WebhookEndpointDisabledV1 } from '@invoicing/contracts';
import type { IncomingMessage, KafkaEventTransport } from '@invoicing/event-bus';
import type { DataSource, EntityManager } from 'typeorm';
import type { AuditEntry, AuditLog } from '../audit/audit-log';
import { auditIdOfWebhookEvent, WEBHOOK_AUDIT_GROUP_ID, WebhookEndpointAudit, webhookEndpointDisabledEntry } from './webhook-endpoint-audit';

const ORGANIZATION_UUID = '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596870';

const event: WebhookEndpointDisabledV1 = {
  specversion: '1.0',
  id: '0192d5a0-c3b8-8a6e-9f1d-2c3b4a5968a0',
  source: '/invoicing/webhook-service',
  type: WEBHOOK_ENDPOINT_DISABLED_V1,
  subject: 'wep_0192d5a0c3b87a6e9f1d2c3b4a596878',
  time: '2026-11-24T10:00:00.000Z',
  datacontenttype: 'application/json',
  data: {
    organization_id: 'org_0192d5a0c3b87a6e9f1d2c3b4a596870',
    endpoint_id: 'wep_0192d5a0c3b87a6e9f1d2c3b4a596878',
    url: 'https://erp.acme.example/webhooks/invoicing',
    reason: 'failing',
    failing_since: '2026-11-19T09:58:12.345Z',
    disabled_at: '2026-11-24T10:00:00.000Z',
  },
};

const message = (value: unknown, offset = '0'): IncomingMessage =>
  ({ topic: WEBHOOK_ENDPOINTS_TOPIC, partition: 0, offset, key: null, value: Buffer.from(typeof value === 'string' ? value : JSON.stringify(value)), timestamp: '0', headers: {} }) as unknown as IncomingMessage;

/** The consumer over fakes: a transport that records the subscription, a database that knows `organizations`, a log that remembers ids. */
function consumer(organizations: string[] = [ORGANIZATION_UUID]) {
  const subscriptions: unknown[] = [];
  const recorded: AuditEntry[] = [];
  const transport = { subscribe: (spec: unknown) => (subscriptions.push(spec), { running: false }) } as unknown as KafkaEventTransport;
  const tx = { query: async (_sql: string, [id]: string[]) => (organizations.includes(id) ? [{ '?column?': 1 }] : []) } as unknown as EntityManager;
  const db = { transaction: async <T>(work: (m: EntityManager) => Promise<T>) => work(tx) } as unknown as DataSource;
  const audit = {
    record: async (_tx: EntityManager, entry: AuditEntry) => {
      if (recorded.some((r) => r.id === entry.id)) return null;
      recorded.push(entry);
      return {};
    },
  } as unknown as AuditLog;
  return { audit: new WebhookEndpointAudit(db, audit, transport), subscriptions, recorded };
}

describe('webhookEndpointDisabledEntry', () => {
  it('is the record of the disabling: by the system, from no address, at the instant it was disabled, with what its owner needs', () => {
    expect(webhookEndpointDisabledEntry(event, ORGANIZATION_UUID)).toEqual({
      id: auditIdOfWebhookEvent(event.id),
      type: 'webhook_endpoint.disabled',
      organizationId: ORGANIZATION_UUID,
      actor: { kind: 'system', id: null },
      apiKeyId: null,
      clientAddress: null,
      occurredAt: new Date('2026-11-24T10:00:00.000Z'),
      data: { endpoint_id: event.data.endpoint_id, url: event.data.url, failing_since: event.data.failing_since, reason: 'failing' },
    });
  });

  it("takes its id from the event's: the same for the same event, another for another, never the event's own", () => {
    const id = auditIdOfWebhookEvent(event.id);
    expect(id).toMatch(/^evt_[0-9a-f]{32}$/);
    expect(auditIdOfWebhookEvent(event.id)).toBe(id);
    expect(auditIdOfWebhookEvent('0192d5a0-c3b8-8a6e-9f1d-2c3b4a5968a1')).not.toBe(id);
    expect(id).not.toBe(`evt_${event.id.replace(/-/g, '')}`);
  });
});

describe('WebhookEndpointAudit', () => {
  it('subscribes once per service to webhooks.endpoints.v1', () => {
    const { subscriptions } = consumer();
    expect(subscriptions).toEqual([expect.objectContaining({ topic: WEBHOOK_ENDPOINTS_TOPIC, delivery: 'once-per-service', groupId: WEBHOOK_AUDIT_GROUP_ID })]);
  });

  it('records an event once however often it arrives', async () => {
    const { audit, recorded } = consumer();
    await audit.handle(message(event));
    await audit.handle(message(event, '1'));
    expect(recorded.map((r) => r.id)).toEqual([auditIdOfWebhookEvent(event.id)]);
  });

  it('skips, without throwing (which would stop the partition), what can never be recorded, and a type it does not know', async () => {
    const { audit, recorded } = consumer([]);
    jest.spyOn((audit as unknown as { logger: { error(): void } }).logger, 'error').mockImplementation(() => undefined);
    await expect(audit.handle(message(event))).resolves.toBeUndefined(); // an organization it does not know
    await expect(audit.handle(message('{not json'))).resolves.toBeUndefined();
    await expect(audit.handle(message({ ...event, data: { ...event.data, url: '' } }))).resolves.toBeUndefined();
    await expect(audit.handle(message({ ...event, type: 'invoicing.webhooks.webhook_endpoint_deleted.v1' }))).resolves.toBeUndefined();
    expect(recorded).toEqual([]);
  });

  it('throws when the database does (the event is delivered again)', async () => {
    const { audit } = consumer();
    (audit as unknown as { db: DataSource }).db = { transaction: async () => Promise.reject(new Error('connection refused')) } as unknown as DataSource;
    await expect(audit.handle(message(event))).rejects.toThrow('connection refused');
  });
});

import {
  AUDIT_TOPIC,
  newId,
  parsePublicId,
  validateAuditEvent,
  validateWebhookEndpointEvent,
  WEBHOOK_ENDPOINT_DISABLED_V1,
  WEBHOOK_ENDPOINTS_TOPIC,
  WebhookEndpointDisabledV1,
} from '@invoicing/contracts';
import { createKafka, KafkaEventPublisher } from '@invoicing/event-bus';
import { getDataSourceToken } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { verifyAuditCommand } from '../audit/verify-audit.command';
import { AuthTestApp, startAuthTestApp } from '../testing/auth-test-app';
import { BrowserLikeClient } from '../testing/browser-like-client';
import { auditIdOfWebhookEvent } from './webhook-endpoint-audit';

/**
 * `webhooks.endpoints.v1` into the audit log (ADR 0037), against the real Postgres, Redis and Kafka:
 * the auth service's consumer group turns a webhook endpoint's disabling into one
 * `webhook_endpoint.disabled` record of its organization's chain, however often the event arrives,
 * and skips what can never be recorded without holding up what follows it.
 */
let app: AuthTestApp;
let publisher: KafkaEventPublisher;

beforeAll(async () => {
  app = await startAuthTestApp();
  publisher = new KafkaEventPublisher(createKafka({ brokers: app.config.KAFKA_BROKERS, clientId: 'auth-test-webhooks-publisher' }));
});

afterAll(async () => {
  await publisher?.close();
  await app?.close();
});

const db = () => app.service.app.get<DataSource>(getDataSourceToken());

interface Listed {
  id: string;
  seq: number;
  type: string;
  occurred_at: string;
  actor: { kind: string; id: string | null };
  api_key_id: string | null;
  client_address: string | null;
  data: Record<string, unknown>;
}

/** The event as the webhook service writes it to its outbox (its factory is that service's, not importable here). */
function disabledEvent(organizationId: string, endpointId: string, failingSince: string, disabledAt: string): WebhookEndpointDisabledV1 {
  const event: WebhookEndpointDisabledV1 = {
    specversion: '1.0',
    id: randomUUID(),
    source: '/invoicing/webhook-service',
    type: WEBHOOK_ENDPOINT_DISABLED_V1,
    subject: endpointId,
    time: disabledAt,
    datacontenttype: 'application/json',
    data: { organization_id: organizationId, endpoint_id: endpointId, url: 'https://erp.acme.example/webhooks', reason: 'failing', failing_since: failingSince, disabled_at: disabledAt },
  };
  expect(validateWebhookEndpointEvent(event).ok).toBe(true);
  return event;
}

/** Publishes as the webhook service's outbox relay does: the endpoint id as key, the CloudEvent as value. */
async function publish(key: string, values: string[]): Promise<void> {
  await publisher.publish(
    WEBHOOK_ENDPOINTS_TOPIC,
    values.map((value) => ({ key, value, headers: { 'content-type': 'application/cloudevents+json; charset=UTF-8' } })),
  );
}

async function verifyAudit(organizationId: string): Promise<{ code: number; out: string }> {
  const out: string[] = [];
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => (out.push(String(chunk)), true));
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation(() => true);
  try {
    return { code: await verifyAuditCommand(app.config, ['--organization', organizationId]), out: out.join('') };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

it('records one chained webhook_endpoint.disabled per disabling, however often its event arrives, and skips what it cannot record without stopping', async () => {
  const client = new BrowserLikeClient(app.baseUrl);
  await client.csrf();
  const signup = await client.request('POST', '/api/v1/account/signup', {
    organization_name: 'Acme',
    email: `u-${randomUUID().slice(0, 8)}@example.com`,
    password: 'correct horse battery staple',
  });
  expect(signup.status).toBe(201);
  const orgId = String((signup.body.organization as { id: string }).id);
  const endpointId = newId('wep');

  const first = disabledEvent(orgId, endpointId, '2026-11-19T09:58:12.345Z', '2026-11-24T10:00:00.000Z');
  // Re-enabled, failing again: another disabling of the same endpoint, the last message of the partition.
  const second = disabledEvent(orgId, endpointId, '2026-11-25T08:00:00.000Z', '2026-11-30T08:00:01.000Z');
  // Same key, so one partition, in this order: the event twice (a relay retry), an event of an
  // organization this service does not know, a message that is not JSON, a type of the topic it
  // does not handle, then the second disabling. Its record shows that everything before it was read.
  await publish(endpointId, [JSON.stringify(first), JSON.stringify(first)]);
  await publish(endpointId, [
    JSON.stringify(disabledEvent(newId('org'), endpointId, '2026-11-19T09:58:12.345Z', '2026-11-24T10:00:00.000Z')),
    '{not json',
    JSON.stringify({ ...first, id: randomUUID(), type: 'invoicing.webhooks.webhook_endpoint_enabled.v1' }),
    JSON.stringify(second),
  ]);

  let records: Listed[] = [];
  const deadline = Date.now() + 45000;
  while (Date.now() < deadline) {
    const r = await client.request('GET', '/api/v1/settings/audit-events?type=webhook_endpoint.disabled');
    expect(r.status).toBe(200);
    records = r.body.data as unknown as Listed[];
    if (records.some((x) => x.data.failing_since === second.data.failing_since)) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  // Newest first: the second disabling, then the first, recorded once.
  expect(records).toEqual([
    expect.objectContaining({ id: auditIdOfWebhookEvent(second.id), seq: 3 }),
    {
      object: 'audit_event',
      id: auditIdOfWebhookEvent(first.id),
      organization_id: orgId,
      seq: 2,
      type: 'webhook_endpoint.disabled',
      occurred_at: '2026-11-24T10:00:00.000Z',
      actor: { kind: 'system', id: null },
      api_key_id: null,
      client_address: null,
      data: { endpoint_id: endpointId, url: 'https://erp.acme.example/webhooks', failing_since: '2026-11-19T09:58:12.345Z', reason: 'failing' },
      prev_hash: expect.stringMatching(/^[0-9a-f]{64}$/),
      hash: expect.stringMatching(/^[0-9a-f]{64}$/),
    },
  ]);

  // The whole log: sign-up and the two records, one chain, intact.
  const all = await client.request('GET', '/api/v1/settings/audit-events');
  expect((all.body.data as unknown as Listed[]).map((r) => [r.seq, r.type])).toEqual([
    [3, 'webhook_endpoint.disabled'],
    [2, 'webhook_endpoint.disabled'],
    [1, 'account.signed_up'],
  ]);
  const verified = await verifyAudit(orgId);
  expect(verified.code).toBe(0);
  expect(JSON.parse(verified.out)).toMatchObject({ ok: true, count: 3 });
  // Nothing for the organization nobody knows.
  const [{ n }] = await db().query(`SELECT count(*)::int AS n FROM auth.audit_events WHERE id = $1`, [parsePublicId('evt', auditIdOfWebhookEvent(first.id))]);
  expect(n).toBe(1);

  // Like every record, on the audit stream through the outbox.
  const rows: Array<{ payload: unknown }> = await db().query(`SELECT payload FROM auth.outbox WHERE topic = $1 AND message_key = $2 ORDER BY created_at`, [AUDIT_TOPIC, orgId]);
  const streamed = rows.map((r) => validateAuditEvent(r.payload)).map((e) => (e.ok ? e.value.data.type : e.errors.join('; ')));
  expect(streamed).toEqual(['account.signed_up', 'webhook_endpoint.disabled', 'webhook_endpoint.disabled']);

  // Delivered once more, later (a consumer group rebalanced mid-batch): still nothing new.
  await publish(endpointId, [JSON.stringify(first)]);
  const third = disabledEvent(orgId, newId('wep'), '2026-12-01T08:00:00.000Z', '2026-12-06T08:00:00.000Z');
  await publish(endpointId, [JSON.stringify(third)]);
  const end = Date.now() + 20000;
  let count = 0;
  while (Date.now() < end) {
    count = ((await client.request('GET', '/api/v1/settings/audit-events')).body.data as unknown[]).length;
    if (count >= 4) break;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  const final = (await client.request('GET', '/api/v1/settings/audit-events')).body.data as unknown as Listed[];
  expect(final.map((r) => r.id)).toEqual([auditIdOfWebhookEvent(third.id), auditIdOfWebhookEvent(second.id), auditIdOfWebhookEvent(first.id), expect.any(String)]);
}, 90000);

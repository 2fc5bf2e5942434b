import { getDataSourceToken } from '@nestjs/typeorm';
import { parsePublicId, validateWebhookEndpointEvent, WEBHOOK_ENDPOINT_DISABLED_V1, WEBHOOK_ENDPOINTS_TOPIC } from '@invoicing/contracts';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { newOrganization as newTestOrganization, publishClientsCreated, startReceiver, startWebhookTestApp } from '../testing/webhook-test-app';
import { endpointDisabledEventId } from './endpoint-disabled-event';

/**
 * An endpoint disabled for failing and its event (ADR 0037), against the real Postgres and Kafka: the
 * disabling and `webhook_endpoint_disabled.v1` in the outbox commit together (one row however many
 * attempts were in flight), the relay publishes it on webhooks.endpoints.v1, and while the event
 * cannot be written the endpoint is not disabled either. WEBHOOK_DISABLE_AFTER_MS is a second here.
 */
type App = Awaited<ReturnType<typeof startWebhookTestApp>>;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

interface OutboxRow {
  id: string;
  topic: string;
  message_key: string;
  payload: Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
  published_at: Date | null;
}

let app: App;
const receivers: Receiver[] = [];
const organizations: string[] = [];
const db = () => app.service.app.get<DataSource>(getDataSourceToken());
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

beforeAll(async () => {
  app = await startWebhookTestApp({
    WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
    // Attempts every 300 ms for longer than WEBHOOK_DISABLE_AFTER_MS.
    WEBHOOK_RETRY_SCHEDULE: '0,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms,300ms',
    WEBHOOK_DISABLE_AFTER_MS: '1000',
    WEBHOOK_POLL_MS: '50',
    WEBHOOK_ATTEMPT_TIMEOUT_MS: '2000',
  });
}, 60000);

afterAll(async () => {
  const ids = organizations.map((o) => parsePublicId('org', o));
  await db()?.query(`UPDATE webhooks.endpoints SET deleted_at = now(), status = 'disabled' WHERE organization_id = ANY($1)`, [ids]);
  await db()?.query(`UPDATE webhooks.deliveries SET status = 'failed', next_attempt_at = NULL WHERE organization_id = ANY($1) AND status = 'pending'`, [ids]);
  await Promise.all(receivers.map((r) => r.close()));
  await app?.close();
});

async function failingEndpoint(): Promise<{ org: string; endpoint: Record<string, any>; rx: Receiver }> { // eslint-disable-line @typescript-eslint/no-explicit-any
  const org = newTestOrganization();
  organizations.push(org);
  const rx = await startReceiver(() => ({ status: 503 }));
  receivers.push(rx);
  const created = await app.call('POST', '/api/v1/webhook-endpoints', org, { url: rx.url, enabled_events: ['*'] });
  expect(created.status).toBe(201);
  return { org, endpoint: created.body!, rx };
}

const outboxOf = (endpointId: string): Promise<OutboxRow[]> =>
  db().query(`SELECT id, topic, message_key, payload, published_at FROM webhooks.outbox WHERE message_key = $1 ORDER BY created_at`, [endpointId]);

async function until<T>(read: () => Promise<T>, done: (value: T) => boolean, timeoutMs = 15000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (done(value) || Date.now() > deadline) return value;
    await sleep(50);
  }
}

/** The migration role, the tables' owner: grants and revokes the runtime role's privileges. */
async function asOwner(sql: string): Promise<void> {
  const client = new Client({ connectionString: app.config.MIGRATION_DATABASE_URL });
  await client.connect();
  try {
    await client.query(sql);
  } finally {
    await client.end();
  }
}

it('disables an endpoint failing past WEBHOOK_DISABLE_AFTER_MS and writes webhook_endpoint_disabled.v1 to the outbox in the same commit, once, then publishes it', async () => {
  const { org, endpoint, rx } = await failingEndpoint();
  // Three deliveries, attempted side by side: several attempts are in flight when one disables it.
  await publishClientsCreated(app.config.KAFKA_BROKERS, org, 3);
  const disabled = await until(
    async () => (await app.call('GET', `/api/v1/webhook-endpoints/${endpoint.id}`, org)).body!,
    (ep) => ep.status === 'disabled',
  );
  expect(disabled).toMatchObject({ status: 'disabled', disabled_reason: 'failing', failing_since: expect.any(String) });
  expect(Date.now() - Date.parse(disabled.failing_since)).toBeGreaterThanOrEqual(1000);
  // The attempts still in flight record their results; none adds a second event.
  const attempts = rx.received.length;
  await sleep(1000);
  expect(rx.received.length - attempts).toBeLessThanOrEqual(3);

  const rows = await outboxOf(endpoint.id);
  expect(rows).toHaveLength(1);
  const [row] = rows;
  expect(row.topic).toBe(WEBHOOK_ENDPOINTS_TOPIC);
  expect(validateWebhookEndpointEvent(row.payload)).toEqual({ ok: true, value: row.payload });
  expect(row.payload).toMatchObject({
    id: row.id,
    type: WEBHOOK_ENDPOINT_DISABLED_V1,
    subject: endpoint.id,
    source: '/invoicing/webhook-service',
    data: { organization_id: org, endpoint_id: endpoint.id, url: rx.url, reason: 'failing', failing_since: disabled.failing_since },
  });
  expect(row.payload.time).toBe(row.payload.data.disabled_at);
  expect(row.id).toBe(endpointDisabledEventId(parsePublicId('wep', endpoint.id)!, new Date(disabled.failing_since)));

  // One commit: the outbox row was written by the transaction of a failed attempt of this endpoint
  // (now() is the transaction's start, to the microsecond: the attempt row has the row's created_at),
  // and the event's disabled_at is that instant.
  const [same] = await db().query(
    `SELECT count(*)::int AS attempts, bool_and(date_trunc('milliseconds', o.created_at) = (o.payload->'data'->>'disabled_at')::timestamptz) AS timed
       FROM webhooks.outbox o JOIN webhooks.attempts a ON a.created_at = o.created_at AND a.endpoint_id = $2 AND NOT a.succeeded
      WHERE o.id = $1`,
    [row.id, parsePublicId('wep', endpoint.id)],
  );
  expect(same).toEqual({ attempts: 1, timed: true });

  // The relay publishes it (acks=all) and marks it.
  const [published] = await until(() => outboxOf(endpoint.id), ([r]) => r?.published_at !== null);
  expect(published.published_at).toBeInstanceOf(Date);
});

it('does not disable the endpoint while its event cannot be written: the two commit together or not at all', async () => {
  const { org, endpoint } = await failingEndpoint();
  const id = parsePublicId('wep', endpoint.id)!;
  const endpointRow = async () =>
    (await db().query(`SELECT status, failing_since FROM webhooks.endpoints WHERE id = $1`, [id]))[0] as { status: string; failing_since: Date | null };
  await publishClientsCreated(app.config.KAFKA_BROKERS, org, 1);
  // Failing for a while, not yet disabled: then the outbox refuses the runtime role's inserts.
  await until(endpointRow, (ep) => ep.failing_since !== null);
  await asOwner(`REVOKE INSERT ON webhooks.outbox FROM webhook_app`);
  try {
    await sleep(2000);
    // Past WEBHOOK_DISABLE_AFTER_MS, the attempt that would disable it could not commit (its event
    // could not be written): the endpoint is still enabled, and no event exists.
    const ep = await endpointRow();
    expect(Date.now() - ep.failing_since!.getTime()).toBeGreaterThan(1500);
    expect(ep.status).toBe('enabled');
    expect(await outboxOf(endpoint.id)).toEqual([]);
  } finally {
    await asOwner(`GRANT INSERT ON webhooks.outbox TO webhook_app`);
  }
  // The held attempt is made again once its hold expires (30 s and more): expire it now, and keep
  // the delivery due (an instance of another configuration on this database, a local stack, may
  // have scheduled it minutes ahead).
  await db().query(`UPDATE webhooks.deliveries SET locked_until = NULL WHERE endpoint_id = $1 AND status = 'pending'`, [id]);
  const after = await until(async () => {
    await db().query(`UPDATE webhooks.deliveries SET next_attempt_at = now() WHERE endpoint_id = $1 AND status = 'pending' AND locked_until IS NULL AND next_attempt_at > now()`, [id]);
    return endpointRow();
  }, (ep) => ep.status === 'disabled');
  expect(after.status).toBe('disabled');
  const rows = await outboxOf(endpoint.id);
  expect(rows).toHaveLength(1);
  expect(rows[0].payload.data).toMatchObject({ endpoint_id: endpoint.id, failing_since: after.failing_since!.toISOString() });
});

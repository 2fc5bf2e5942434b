import { createPublicKey, verify } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { getDataSourceToken } from '@nestjs/typeorm';
import { INVOICE_BALANCE_CHANGED_TYPE, parsePublicId } from '@invoicing/contracts';
import type { DataSource } from 'typeorm';
import { invoiceObject, newOrganization as newTestOrganization, publishClientsCreated, publishDomainEvents, startReceiver, startWebhookTestApp } from './testing/webhook-test-app';

type App = Awaited<ReturnType<typeof startWebhookTestApp>>;
type Receiver = Awaited<ReturnType<typeof startReceiver>>;

const headersOf = (r: { headers: Record<string, unknown> }) => ({
  'webhook-id': String(r.headers['webhook-id']),
  'webhook-timestamp': String(r.headers['webhook-timestamp']),
  'webhook-signature': String(r.headers['webhook-signature']),
});

describe('webhook delivery (real Postgres and Kafka, a receiver on loopback)', () => {
  let app: App;
  const receivers: Receiver[] = [];
  const receiver = async (...args: Parameters<typeof startReceiver>) => {
    const r = await startReceiver(...args);
    receivers.push(r);
    return r;
  };

  beforeAll(async () => {
    app = await startWebhookTestApp({
      WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
      WEBHOOK_RETRY_SCHEDULE: '0,300ms,300ms',
      WEBHOOK_POLL_MS: '50',
      WEBHOOK_ATTEMPT_TIMEOUT_MS: '2000',
      WEBHOOK_CONCURRENCY_PER_ORGANIZATION: '6',
      WEBHOOK_ACTIONS_PER_MINUTE: '20',
    });
  }, 60000);
  afterAll(async () => {
    // Nothing this suite registered is attempted again later (by the next run, or a stack on this database).
    await app?.service.app.get<DataSource>(getDataSourceToken()).query(`UPDATE webhooks.endpoints SET deleted_at = now(), status = 'disabled' WHERE organization_id = ANY($1)`, [
      organizations.map((o) => parsePublicId('org', o)),
    ]);
    await app?.service.app.get<DataSource>(getDataSourceToken()).query(`UPDATE webhooks.deliveries SET status = 'failed', next_attempt_at = NULL WHERE organization_id = ANY($1) AND status = 'pending'`, [
      organizations.map((o) => parsePublicId('org', o)),
    ]);
    await Promise.all(receivers.map((r) => r.close()));
    await app?.close();
  });
  const organizations: string[] = [];
  const newOrganization = () => {
    const org = newTestOrganization();
    organizations.push(org);
    return org;
  };

  async function endpoint(org: string, url: string, extra: Record<string, unknown> = {}) {
    const created = await app.call('POST', '/api/v1/webhook-endpoints', org, { url, enabled_events: ['*'], ...extra });
    expect(created.status).toBe(201);
    return created.body!;
  }

  it('delivers a created client, signed so that standardwebhooks verifies it, the object as the API returns it', async () => {
    const org = newOrganization();
    const rx = await receiver();
    const ep = await endpoint(org, rx.url, { description: 'accounting sync' });
    expect(ep).toMatchObject({ object: 'webhook_endpoint', url: rx.url, status: 'enabled', signature_scheme: 'v1', description: 'accounting sync' });
    expect(ep.secret).toMatch(/^whsec_[A-Za-z0-9+/]+=*$/);

    const [clientId] = await publishClientsCreated(app.config.KAFKA_BROKERS, org, 1);
    await rx.waitFor((all) => all.length >= 1);
    const delivery = rx.received[0];
    const verified = new Webhook(ep.secret).verify(delivery.body, headersOf(delivery)) as Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
    expect(verified).toMatchObject({ object: 'event', type: 'client.created', data: { object: { object: 'client', id: clientId, name: 'Client 0' } } });
    expect(delivery.headers['webhook-id']).toBe(verified.id);
    expect(delivery.headers['content-type']).toBe('application/json');
    // A tampered body does not verify.
    expect(() => new Webhook(ep.secret).verify(delivery.body.replace('Client 0', 'Client 1'), headersOf(delivery))).toThrow();

    // The event is listed and readable; the endpoint is not another organization's.
    const listed = await app.call('GET', '/api/v1/events?type=client.created', org);
    expect(listed.status).toBe(200);
    expect(listed.body!.data.map((e: { id: string }) => e.id)).toEqual([verified.id]);
    expect((await app.call('GET', `/api/v1/events/${verified.id}`, org)).body).toEqual(verified);
    expect((await app.call('GET', `/api/v1/events/${verified.id}`, newOrganization())).status).toBe(404);
    expect((await app.call('GET', `/api/v1/webhook-endpoints/${ep.id}`, newOrganization())).status).toBe(404);
    // Only a token with read: of the event's resource sees it.
    expect((await app.call('GET', `/api/v1/events/${verified.id}`, org, undefined, ['read:products'])).status).toBe(404);
    expect((await app.call('GET', '/api/v1/events', org, undefined, ['read:products'])).body!.data).toEqual([]);
    expect((await app.call('GET', '/api/v1/events', org, undefined, ['write:clients'])).status).toBe(403);
  });

  it('makes invoice.partially_paid and invoice.paid of an invoice\'s balance changes, each to the endpoints that want it', async () => {
    const org = newOrganization();
    const everything = await receiver();
    const paidOnly = await receiver();
    await endpoint(org, everything.url);
    const paidEndpoint = await endpoint(org, paidOnly.url, { enabled_events: ['invoice.paid'] });
    const partly = invoiceObject(400);
    const paid = { ...invoiceObject(1000), id: partly.id };
    await publishDomainEvents(app.config.KAFKA_BROKERS, [
      { subject: partly.id, type: INVOICE_BALANCE_CHANGED_TYPE, data: { organization_id: org, object: partly, previous: { amount_paid: 0, status: 'open' } } },
      { subject: paid.id, type: INVOICE_BALANCE_CHANGED_TYPE, data: { organization_id: org, object: paid, previous: { amount_paid: 400, status: 'partially_paid' } } },
    ]);
    await everything.waitFor((all) => all.length >= 2);
    await paidOnly.waitFor((all) => all.length >= 1);
    const bodies = everything.received.map((r) => JSON.parse(r.body) as { type: string; data: { object: { amount_paid: number }; previous_attributes: unknown } });
    expect(bodies.map((b) => [b.type, b.data.object.amount_paid, b.data.previous_attributes]).sort()).toEqual([
      ['invoice.paid', 1000, { amount_paid: 400, status: 'partially_paid' }],
      ['invoice.partially_paid', 400, { amount_paid: 0, status: 'open' }],
    ]);
    const only = paidOnly.received[0];
    expect((new Webhook(paidEndpoint.secret).verify(only.body, headersOf(only)) as { type: string }).type).toBe('invoice.paid');
    await new Promise((r) => setTimeout(r, 300));
    expect(paidOnly.received).toHaveLength(1);
    // Readable with read:invoices.
    expect((await app.call('GET', '/api/v1/events?type=invoice.paid', org, undefined, ['read:invoices'])).body!.data).toHaveLength(1);
  });

  it('retries a failing receiver with the same webhook-id, records every attempt, and sends an event once per message', async () => {
    const org = newOrganization();
    const rx = await receiver((_r, n) => ({ status: n <= 2 ? 503 : 204 }));
    const ep = await endpoint(org, rx.url);
    await publishClientsCreated(app.config.KAFKA_BROKERS, org, 1);
    await rx.waitFor((all) => all.length >= 3);
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(1);
    for (const r of rx.received) expect(() => new Webhook(ep.secret).verify(r.body, headersOf(r))).not.toThrow();
    // The schedule is 0, 300 ms, 300 ms: the retries came after their delays, not at once.
    expect(rx.received[1].at - rx.received[0].at).toBeGreaterThanOrEqual(250);

    let attempts: Record<string, any> | null = null; // eslint-disable-line @typescript-eslint/no-explicit-any
    for (let i = 0; i < 40; i++) {
      attempts = (await app.call('GET', `/api/v1/webhook-endpoints/${ep.id}/attempts`, org)).body;
      if (attempts!.data.length === 3) break;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(attempts!.data.map((a: { outcome: string; response_status: number; attempt: number }) => [a.attempt, a.outcome, a.response_status])).toEqual([
      [3, 'succeeded', 204],
      [2, 'failed', 503],
      [1, 'failed', 503],
    ]);
    await new Promise((r) => setTimeout(r, 700));
    expect(rx.received).toHaveLength(3);
  });

  it('gives up after the last attempt; a replay since a time sends the failed deliveries again, resend one event', async () => {
    const org = newOrganization();
    let up = false;
    const rx = await receiver(() => ({ status: up ? 200 : 500 }));
    const ep = await endpoint(org, rx.url);
    const since = new Date(Date.now() - 1000).toISOString();
    await publishClientsCreated(app.config.KAFKA_BROKERS, org, 2);
    await rx.waitFor((all) => all.length >= 6); // 2 events x 3 attempts
    await new Promise((r) => setTimeout(r, 700));
    expect(rx.received).toHaveLength(6);

    up = true;
    const replay = await app.call('POST', `/api/v1/webhook-endpoints/${ep.id}/replay`, org, { since });
    expect(replay).toMatchObject({ status: 202, body: { deliveries_queued: 2 } });
    await rx.waitFor((all) => all.length >= 8);
    const ids = new Set(rx.received.map((r) => r.headers['webhook-id']));
    expect(ids.size).toBe(2);

    const [eventId] = [...ids] as string[];
    const resend = await app.call('POST', `/api/v1/events/${eventId}/resend`, org, {});
    expect(resend).toMatchObject({ status: 202, body: { endpoints: [ep.id] } });
    await rx.waitFor((all) => all.length >= 9);
    expect(rx.received[8].headers['webhook-id']).toBe(eventId);
  });

  it('after a secret roll both secrets sign for the overlap; the new secret verifies and so does the old one', async () => {
    const org = newOrganization();
    const rx = await receiver();
    const ep = await endpoint(org, rx.url);
    const rolled = await app.call('POST', `/api/v1/webhook-endpoints/${ep.id}/roll-secret`, org);
    expect(rolled.status).toBe(200);
    expect(rolled.body!.secret).toMatch(/^whsec_/);
    expect(rolled.body!.secret).not.toBe(ep.secret);
    const test = await app.call('POST', `/api/v1/webhook-endpoints/${ep.id}/test`, org);
    expect(test).toMatchObject({ status: 202, body: { type: 'webhook_endpoint.test' } });
    await rx.waitFor((all) => all.length >= 1);
    const delivery = rx.received[0];
    expect(String(delivery.headers['webhook-signature']).split(' ')).toHaveLength(2);
    expect(() => new Webhook(rolled.body!.secret).verify(delivery.body, headersOf(delivery))).not.toThrow();
    expect(() => new Webhook(ep.secret).verify(delivery.body, headersOf(delivery))).not.toThrow();
  });

  it('signs with ed25519 (v1a) for an endpoint that asks: the receiver verifies with the public key alone', async () => {
    const org = newOrganization();
    const rx = await receiver();
    const ep = await endpoint(org, rx.url, { signature_scheme: 'v1a' });
    expect(ep.secret).toMatch(/^whpk_/);
    await app.call('POST', `/api/v1/webhook-endpoints/${ep.id}/test`, org);
    await rx.waitFor((all) => all.length >= 1);
    const d = rx.received[0];
    const [scheme, sig] = String(d.headers['webhook-signature']).split(',');
    expect(scheme).toBe('v1a');
    const raw = Buffer.from(ep.secret.slice('whpk_'.length), 'base64');
    const key = createPublicKey({ key: Buffer.concat([Buffer.from('302a300506032b6570032100', 'hex'), raw]), format: 'der', type: 'spki' });
    const content = `${d.headers['webhook-id']}.${d.headers['webhook-timestamp']}.${d.body}`;
    expect(verify(null, Buffer.from(content), key, Buffer.from(sig, 'base64'))).toBe(true);
    expect(verify(null, Buffer.from(content + ' '), key, Buffer.from(sig, 'base64'))).toBe(false);
  });

  it('does not follow a redirect, and a slow receiver is cut at the attempt deadline', async () => {
    const org = newOrganization();
    const target = await receiver();
    const redirecting = await receiver(() => ({ status: 307, headers: { location: target.url } }));
    const ep = await endpoint(org, redirecting.url);
    await app.call('POST', `/api/v1/webhook-endpoints/${ep.id}/test`, org);
    await redirecting.waitFor((all) => all.length >= 1);
    let attempts: Record<string, any> | null = null; // eslint-disable-line @typescript-eslint/no-explicit-any
    for (let i = 0; i < 40 && !attempts?.data.length; i++) {
      attempts = (await app.call('GET', `/api/v1/webhook-endpoints/${ep.id}/attempts`, org)).body;
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(attempts!.data[0]).toMatchObject({ outcome: 'failed', response_status: 307, error: 'redirect_not_followed' });
    expect(target.received).toHaveLength(0);

    // WEBHOOK_ATTEMPT_TIMEOUT_MS is 2000 here: a receiver answering in 3 s has failed by then.
    const sleepy = await receiver(() => ({ status: 200, delayMs: 3000 }));
    const slowEp = await endpoint(org, sleepy.url);
    await app.call('POST', `/api/v1/webhook-endpoints/${slowEp.id}/test`, org);
    let timedOut: Record<string, any> | undefined; // eslint-disable-line @typescript-eslint/no-explicit-any
    for (let i = 0; i < 80 && !timedOut; i++) {
      timedOut = (await app.call('GET', `/api/v1/webhook-endpoints/${slowEp.id}/attempts`, org)).body!.data[0];
      await new Promise((r) => setTimeout(r, 50));
    }
    expect(timedOut).toMatchObject({ outcome: 'failed', response_status: null, error: 'timeout' });
    expect(timedOut!.latency_ms).toBeGreaterThanOrEqual(1900);
    expect(timedOut!.latency_ms).toBeLessThan(2900);
  });

  it('one slow endpoint does not hold up another organization\'s deliveries', async () => {
    const slowOrg = newOrganization();
    const fastOrg = newOrganization();
    const slow = await receiver(() => ({ status: 200, delayMs: 1500 }));
    const fast = await receiver();
    await endpoint(slowOrg, slow.url);
    await endpoint(fastOrg, fast.url);
    await publishClientsCreated(app.config.KAFKA_BROKERS, slowOrg, 20);
    await new Promise((r) => setTimeout(r, 300));
    const sent = Date.now();
    await publishClientsCreated(app.config.KAFKA_BROKERS, fastOrg, 1);
    await fast.waitFor((all) => all.length >= 1, 5000);
    // The slow endpoint holds at most WEBHOOK_CONCURRENCY_PER_ENDPOINT attempts at once.
    expect(fast.received[0].at - sent).toBeLessThan(1000);
    expect(slow.received.length).toBeLessThanOrEqual(app.config.WEBHOOK_CONCURRENCY_PER_ENDPOINT);
  });

  it("holds at most WEBHOOK_CONCURRENCY_PER_ORGANIZATION of one organization's attempts at once, whatever its endpoints", async () => {
    const org = newOrganization();
    const slow = await receiver(() => ({ status: 200, delayMs: 600 }));
    for (const path of ['a', 'b', 'c']) await endpoint(org, `${slow.url}/${path}`, { enabled_events: ['client.created'] });
    await publishClientsCreated(app.config.KAFKA_BROKERS, org, 6);
    await slow.waitFor((all) => all.length >= 18, 20000);
    // 3 endpoints x 4 per endpoint would be 12; the organization's bound is 6.
    expect(slow.load.maxInFlight).toBe(6);
  });

  it("pauses a disabled endpoint's pending deliveries (they weigh on no claim), sends them once it is enabled again, and queues nothing for it meanwhile", async () => {
    const org = newOrganization();
    let up = false;
    const rx = await receiver(() => ({ status: up ? 200 : 503 }));
    const ep = await endpoint(org, rx.url);
    const db = app.service.app.get<DataSource>(getDataSourceToken());
    const pending = async () =>
      (await db.query(`SELECT count(*)::int AS n, count(*) FILTER (WHERE next_attempt_at IS NULL)::int AS paused FROM webhooks.deliveries WHERE endpoint_id = $1 AND status = 'pending'`, [
        parsePublicId('wep', ep.id),
      ]))[0] as { n: number; paused: number };
    await publishClientsCreated(app.config.KAFKA_BROKERS, org, 2);
    await rx.waitFor((all) => all.length >= 2);
    expect((await app.call('PATCH', `/api/v1/webhook-endpoints/${ep.id}`, org, { status: 'disabled' })).body).toMatchObject({ status: 'disabled', disabled_reason: 'requested' });
    // Attempts in flight at the moment record their result; then both wait with no next attempt.
    for (let i = 0; i < 40 && (await pending()).paused < 2; i++) await new Promise((r) => setTimeout(r, 50));
    expect(await pending()).toEqual({ n: 2, paused: 2 });
    await publishClientsCreated(app.config.KAFKA_BROKERS, org, 1);
    const attemptsBefore = rx.received.length;
    await new Promise((r) => setTimeout(r, 800));
    expect(rx.received.length).toBe(attemptsBefore);
    up = true;
    expect((await app.call('PATCH', `/api/v1/webhook-endpoints/${ep.id}`, org, { status: 'enabled' })).body).toMatchObject({ status: 'enabled', disabled_reason: null });
    await rx.waitFor((all) => all.filter((r) => r.at > 0).length >= attemptsBefore + 2);
    await new Promise((r) => setTimeout(r, 500));
    // The two paused ones went; the event of the disabled time was never queued for it.
    expect(new Set(rx.received.map((r) => r.headers['webhook-id'])).size).toBe(2);
    expect(await pending()).toEqual({ n: 0, paused: 0 });
  });

  it('leaves a delivery deleted while its attempt was in flight deleted, and limits tests to WEBHOOK_ACTIONS_PER_MINUTE', async () => {
    const org = newOrganization();
    const rx = await receiver(() => ({ status: 200, delayMs: 700 }));
    const ep = await endpoint(org, rx.url);
    await app.call('POST', `/api/v1/webhook-endpoints/${ep.id}/test`, org);
    await rx.waitFor((all) => all.length >= 1);
    expect((await app.call('DELETE', `/api/v1/webhook-endpoints/${ep.id}`, org)).status).toBe(200);
    await new Promise((r) => setTimeout(r, 1200));
    const db = app.service.app.get<DataSource>(getDataSourceToken());
    const rows = await db.query(`SELECT status FROM webhooks.deliveries WHERE endpoint_id = $1`, [parsePublicId('wep', ep.id)]);
    expect(rows).toEqual([{ status: 'failed' }]);

    const other = await endpoint(org, `${rx.url}/other`);
    const answers = [];
    for (let i = 0; i < 22; i++) answers.push((await app.call('POST', `/api/v1/webhook-endpoints/${other.id}/test`, org)).status);
    // One test above already counted in this minute: 19 more pass, then 429.
    expect(answers.filter((s) => s === 202).length).toBe(19);
    expect(answers.slice(19)).toEqual([429, 429, 429]);
  });

  it('refuses bad input with problem+json and changes nothing; caps endpoints per organization', async () => {
    const org = newOrganization();
    const bad = await app.call('POST', '/api/v1/webhook-endpoints', org, { url: 'ftp://example.com/x', enabled_events: ['client.created'] });
    expect(bad.status).toBe(422);
    expect(bad.body!.errors[0]).toMatchObject({ field: 'url' });
    expect((await app.call('POST', '/api/v1/webhook-endpoints', org, { url: 'https://example.com/x', enabled_events: ['client.deleted'] })).status).toBe(422);
    expect((await app.call('POST', '/api/v1/webhook-endpoints', org, { url: 'https://user:pw@example.com/x', enabled_events: ['*'] })).status).toBe(422);
    expect((await app.call('GET', '/api/v1/webhook-endpoints', org)).body!.data).toEqual([]);
    expect((await app.call('POST', '/api/v1/webhook-endpoints', org, { url: 'https://example.com/x', enabled_events: ['*'] }, ['read:webhook_endpoints'])).status).toBe(403);

    const made = await Promise.all(Array.from({ length: 20 }, (_, i) => app.call('POST', '/api/v1/webhook-endpoints', org, { url: `http://127.0.0.1:9/${i}`, enabled_events: ['*'] })));
    expect(made.filter((m) => m.status === 201)).toHaveLength(16);
    expect(made.filter((m) => m.status === 409)).toHaveLength(4);
    const page = await app.call('GET', '/api/v1/webhook-endpoints?limit=10', org);
    expect(page.body!.data).toHaveLength(10);
    expect(page.body!.has_more).toBe(true);
    expect(page.body!.data[0].secret).toBeUndefined();
    const deleted = await app.call('DELETE', `/api/v1/webhook-endpoints/${page.body!.data[0].id}`, org);
    expect(deleted).toMatchObject({ status: 200, body: { deleted: true } });
    expect((await app.call('POST', '/api/v1/webhook-endpoints', org, { url: 'http://127.0.0.1:9/again', enabled_events: ['*'] })).status).toBe(201);
  });
});

describe('webhook endpoints: no server-side request forgery (private URLs not allowed, the default)', () => {
  const newOrganization = newTestOrganization;
  let app: App;
  beforeAll(async () => {
    app = await startWebhookTestApp({ WEBHOOK_ALLOW_PRIVATE_URLS: 'false' });
  }, 60000);
  afterAll(() => app?.close());

  it.each([
    'https://127.0.0.1/hook',
    'https://10.0.0.1/hook',
    'https://169.254.169.254/latest/meta-data',
    'https://[::1]/hook',
    'https://[::ffff:127.0.0.1]/hook',
    'https://localhost/hook',
    'http://example.com/hook',
  ])('refuses %s with 422', async (url) => {
    const answer = await app.call('POST', '/api/v1/webhook-endpoints', newOrganization(), { url, enabled_events: ['*'] });
    expect(answer.status).toBe(422);
    expect(answer.body).toMatchObject({ status: 422, errors: [{ field: 'url' }] });
  });
});

/**
 * Item 17 of docs/resilience.md: webhook delivery under faults. The auth service and the webhook
 * service as processes, the real Postgres and Kafka; domain events published on the topic as the
 * resource services' relays publish them; receivers this spec runs. The webhook service is killed
 * with -9 mid-load and a receiver goes down for a while: every event must arrive (0 lost), any
 * duplicate with the same webhook-id; every delivery verified by the `standardwebhooks` package. Then
 * one organization's endpoint answers in 10 s while another's events flow: the other's delivery
 * latency is compared with its idle figure.
 */
import { ALL_SCOPES, DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, newId } from '@invoicing/contracts';
import { createKafka, KafkaEventPublisher } from '@invoicing/event-bus';
import { Webhook } from 'standardwebhooks';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { claimsOf, http, TokenPair } from '../support/api';
import { createKey } from '../support/platform';
import { kafka, runCommand, ServiceProcess, sleep, startService } from '../support/processes';
import { figure } from './support/figures';

const AUTH_PORT = 4501;
const WEBHOOK_PORT = 4502;
const WEBHOOK_ENV = {
  WEBHOOK_ALLOW_PRIVATE_URLS: 'true',
  WEBHOOK_RETRY_SCHEDULE: '0,500ms,1s,1s,2s,2s,5s,5s',
  WEBHOOK_POLL_MS: '100',
  WEBHOOK_ATTEMPT_TIMEOUT_MS: '12000',
};
const processes: ServiceProcess[] = [];
let webhookService: ServiceProcess;
let publisher: KafkaEventPublisher;

interface Delivery {
  id: string;
  objectId: string;
  at: number;
  verified: boolean;
}

/** A receiver: answers `status()` after `delayMs()`; records each delivery, verified with `secret`. */
async function receiver(options: { status?: () => number; delayMs?: () => number } = {}) {
  const deliveries: Delivery[] = [];
  let secret = '';
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = Buffer.concat(chunks).toString('utf8');
      const status = options.status?.() ?? 200;
      setTimeout(() => {
        let verified = false;
        let objectId = '';
        try {
          const event = new Webhook(secret).verify(body, req.headers as Record<string, string>) as { data: { object: { id: string } } };
          verified = true;
          objectId = event.data.object.id;
        } catch {
          // counted as unverified
        }
        // Only what was acknowledged counts as delivered.
        if (status < 300) deliveries.push({ id: String(req.headers['webhook-id']), objectId, at: Date.now(), verified });
        res.writeHead(status);
        res.end();
      }, options.delayMs?.() ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`,
    deliveries,
    setSecret: (s: string) => (secret = s),
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

/** An organization with a key of every scope, and an endpoint of it on `url` (its secret). */
async function organizationWithEndpoint(name: string, url: string): Promise<{ organization: string; secret: string }> {
  const key = await createKey(name, 'webhooks', ALL_SCOPES.join(','));
  const pair = await http('POST', `http://127.0.0.1:${AUTH_PORT}/api/v1/auth/token`, { body: { grant_type: 'client_credentials', client_id: key.client_id, client_secret: key.client_secret } });
  const token = (pair.body as unknown as TokenPair).access_token;
  const endpoint = await http('POST', `http://127.0.0.1:${WEBHOOK_PORT}/api/v1/webhook-endpoints`, { token, body: { url, enabled_events: ['client.created'] } });
  if (endpoint.status !== 201) throw new Error(`endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);
  return { organization: String(claimsOf(token).org_id), secret: String(endpoint.body.secret) };
}

/** `count` client_created events of `organization` on the domain topic; returns object id → publish time. */
async function publishClients(organization: string, count: number, sent: Map<string, number>): Promise<void> {
  const messages = Array.from({ length: count }, () => {
    const id = newId('cli');
    const time = new Date().toISOString();
    sent.set(id, Date.now());
    return {
      key: id,
      value: JSON.stringify({
        specversion: '1.0', id: newId('evt'), source: '/invoicing/client-service', type: DOMAIN_EVENT_TYPES.client, subject: id, time, datacontenttype: 'application/json',
        data: { organization_id: organization, object: { object: 'client', id, created_at: time, name: 'Resilience', email: null, phone: null, tax_id: null, address: null, currency: null } },
      }),
    };
  });
  await publisher.publish(DOMAIN_TOPIC, messages);
}

async function until(what: string, check: () => boolean, timeoutMs: number): Promise<number> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(50);
  }
  return Date.now() - started;
}

const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
};

beforeAll(async () => {
  await kafka('start');
  await runCommand('auth-service', ['migrate']);
  await runCommand('webhook-service', ['migrate']);
  processes.push(startService('auth-service', AUTH_PORT, 'auth-service-webhooks'));
  webhookService = startService('webhook-service', WEBHOOK_PORT, 'webhook-service-webhooks', WEBHOOK_ENV);
  processes.push(webhookService);
  await Promise.all(processes.map((p) => p.waitReady(90000)));
  publisher = new KafkaEventPublisher(createKafka({ brokers: ['127.0.0.1:9092'], clientId: 'resilience-webhooks' }));
}, 180000);

afterAll(async () => {
  await publisher?.close();
  await Promise.all(processes.map((p) => p.stop()));
});

describe('webhook delivery under faults (item 17 of docs/resilience.md)', () => {
  it('item 17: kill -9 of the webhook service mid-load and a receiver down for 3 s: every event delivered and verified, duplicates with the same webhook-id', async () => {
    let down = false;
    const rx = await receiver({ status: () => (down ? 503 : 200) });
    try {
      const { organization, secret } = await organizationWithEndpoint('Webhook Faults', rx.url);
      rx.setSecret(secret);
      const sent = new Map<string, number>();
      // 2,000 events over about 10 s, in bursts of 50 every 250 ms.
      const load = (async () => {
        for (let i = 0; i < 40; i++) {
          await publishClients(organization, 50, sent);
          await sleep(250);
        }
      })();
      await sleep(2500);
      await webhookService.kill();
      await sleep(1000);
      webhookService = startService('webhook-service', WEBHOOK_PORT, 'webhook-service-webhooks-restarted', WEBHOOK_ENV);
      processes.push(webhookService);
      await webhookService.waitReady(60000);
      await sleep(1000);
      down = true;
      await sleep(3000);
      down = false;
      await load;
      const tookMs = await until('every event delivered', () => new Set(rx.deliveries.map((d) => d.objectId)).size >= sent.size, 120000);
      const delivered = new Set(rx.deliveries.map((d) => d.objectId));
      const lost = [...sent.keys()].filter((id) => !delivered.has(id)).length;
      const byEvent = new Map<string, Set<string>>();
      for (const d of rx.deliveries) byEvent.set(d.objectId, (byEvent.get(d.objectId) ?? new Set()).add(d.id));
      const duplicates = rx.deliveries.length - delivered.size;
      const unverified = rx.deliveries.filter((d) => !d.verified).length;
      figure('17', 'kill -9 of the webhook service and a receiver down 3 s: events, delivered, lost, duplicates, unverified', `${sent.size}, ${delivered.size}, ${lost}, ${duplicates}, ${unverified}`, {
        drained_ms_after_load: tookMs,
      });
      expect(lost).toBe(0);
      expect(unverified).toBe(0);
      // A duplicate is the same event sent again: one webhook-id per event, whatever the attempts.
      expect([...byEvent.values()].every((ids) => ids.size === 1)).toBe(true);
    } finally {
      await rx.close();
    }
  }, 240000);

  it('item 17: an endpoint answering in 10 s holds up no other organization: its p99 delivery latency beside its idle figure', async () => {
    const fast = await receiver();
    const slow = await receiver({ delayMs: () => 10_000 });
    try {
      const a = await organizationWithEndpoint('Webhook Slow', slow.url);
      const b = await organizationWithEndpoint('Webhook Neighbour', fast.url);
      slow.setSecret(a.secret);
      fast.setSecret(b.secret);
      const latencies = async (count: number): Promise<number[]> => {
        const sent = new Map<string, number>();
        const before = fast.deliveries.length;
        for (let i = 0; i < count; i++) {
          await publishClients(b.organization, 1, sent);
          await sleep(50);
        }
        await until('the neighbour delivered', () => fast.deliveries.length - before >= count, 60000);
        return fast.deliveries.slice(before).map((d) => d.at - (sent.get(d.objectId) ?? d.at));
      };
      const idle = await latencies(40);
      // The slow endpoint's backlog: 200 events it takes 10 s each to acknowledge.
      const backlog = new Map<string, number>();
      await publishClients(a.organization, 200, backlog);
      await sleep(500);
      const loaded = await latencies(40);
      const ratio = percentile(loaded, 99) / Math.max(1, percentile(idle, 99));
      figure('17', "a neighbour's delivery latency, idle and beside an endpoint answering in 10 s (p50/p99 ms)", `${percentile(idle, 50)}/${percentile(idle, 99)} vs ${percentile(loaded, 50)}/${percentile(loaded, 99)}`, {
        p99_ratio: Number(ratio.toFixed(2)),
        slow_endpoint_acknowledged: slow.deliveries.length,
      });
      // The slow endpoint holds at most 4 attempts at once (WEBHOOK_CONCURRENCY_PER_ENDPOINT).
      expect(percentile(loaded, 99)).toBeLessThan(Math.max(3 * percentile(idle, 99), 1000));
    } finally {
      await Promise.all([fast.close(), slow.close()]);
    }
  }, 180000);
});

import { ALL_SCOPES, DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, newId } from '@invoicing/contracts';
import { createKafka, KafkaEventPublisher } from '@invoicing/event-bus';
import { createServer, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { call, exchange, serviceUrl, SettingsAccount } from './platform';
import type { Report } from './report';

/**
 * Webhook delivery (docs/api.md section 15) on the stack of tools/stack/start.sh, whose webhook
 * service may deliver to loopback (WEBHOOK_ALLOW_PRIVATE_URLS=true there):
 * - latency: clients created through the API at a steady rate; for each, from its `created_at` (set
 *   in the create's transaction, so before its commit: the figure errs long) to the moment the first
 *   attempt reaches a receiver in this process (answering 200 at once);
 * - throughput: `count` client_created events put on the domain topic at once (as the relays would),
 *   and the time until the receiver has them all: deliveries per second of the stack's instances.
 */
export async function measureWebhooks(report: Report, options: { rate: number; seconds: number; count: number }, step: (s: string) => void): Promise<void> {
  const arrivals = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const at = Date.now();
      const event = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { data: { object: { id: string } } };
      if (!arrivals.has(event.data.object.id)) arrivals.set(event.data.object.id, at);
      res.writeHead(200);
      res.end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/bench`;
  try {
    const account = await SettingsAccount.signUp();
    const { access_token: token } = await exchange(await account.createKey([...ALL_SCOPES]));
    const endpoint = await call(`${serviceUrl('webhook-service')}/api/v1/webhook-endpoints`, {
      method: 'POST',
      headers: { authorization: `Bearer ${token}` },
      body: { url, enabled_events: ['client.created'] },
    });
    if (endpoint.status !== 201) throw new Error(`webhook endpoint: ${endpoint.status} ${JSON.stringify(endpoint.body)}`);

    step(`webhooks: ${options.rate} creates a second for ${options.seconds} s, each timed to its first delivery`);
    const created = new Map<string, number>();
    const started = Date.now();
    const creates: Array<Promise<void>> = [];
    for (let i = 0; i < options.rate * options.seconds; i++) {
      const due = started + (i * 1000) / options.rate;
      if (due > Date.now()) await new Promise((r) => setTimeout(r, due - Date.now()));
      creates.push(
        call(`${serviceUrl('client-service')}/api/v1/clients`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: { name: `Webhook bench ${i}` } }).then((r) => {
          if (r.status === 201) created.set(String(r.body.id), Date.parse(String(r.body.created_at)));
        }),
      );
    }
    await Promise.all(creates);
    await until(() => [...created.keys()].every((id) => arrivals.has(id)), 60000);
    report.lag('webhooks: create (its created_at) to the first delivery attempt received', [...created].map(([id, at]) => arrivals.get(id)! - at));

    step(`webhooks: ${options.count} events on the topic at once, until all are delivered`);
    const organization = String(JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()).org_id);
    const publisher = new KafkaEventPublisher(createKafka({ brokers: (process.env.KAFKA_BROKERS ?? '127.0.0.1:9092').split(','), clientId: 'bench-webhooks' }));
    const ids: string[] = [];
    const messages = Array.from({ length: options.count }, () => {
      const id = newId('cli');
      ids.push(id);
      const time = new Date().toISOString();
      return {
        key: id,
        value: JSON.stringify({
          specversion: '1.0', id: newId('evt'), source: '/invoicing/bench', type: DOMAIN_EVENT_TYPES.client, subject: id, time, datacontenttype: 'application/json',
          data: { organization_id: organization, object: { object: 'client', id, created_at: time, name: 'Bench', email: null, phone: null, tax_id: null, address: null, currency: null } },
        }),
      };
    });
    const t0 = Date.now();
    try {
      for (let i = 0; i < messages.length; i += 500) await publisher.publish(DOMAIN_TOPIC, messages.slice(i, i + 500));
    } finally {
      await publisher.close();
    }
    await until(() => ids.every((id) => arrivals.has(id)), 300000);
    const seconds = (Date.now() - t0) / 1000;
    report.note(`webhooks: ${options.count} events delivered in ${seconds.toFixed(1)} s: ${Math.round(options.count / seconds)} deliveries/s (one endpoint, a receiver answering at once, the stack's webhook service instances)`);
    step(`webhooks: ${Math.round(options.count / seconds)} deliveries/s`);
  } finally {
    server.closeAllConnections();
    server.close();
  }
}

async function until(check: () => boolean, timeoutMs: number): Promise<void> {
  const started = Date.now();
  while (!check()) {
    if (Date.now() - started > timeoutMs) throw new Error(`webhooks: not delivered within ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

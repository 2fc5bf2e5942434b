import { RevocationFeed } from '@invoicing/auth-guard';
import { ALL_SCOPES, DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, newId } from '@invoicing/contracts';
import { createKafka, KafkaEventPublisher } from '@invoicing/event-bus';
import { postgresOptions, runMigrations, ServiceApp } from '@invoicing/service-kit';
import { createSigner } from 'fast-jwt';
import { createServer, IncomingHttpHeaders, Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { createWebhookApp, MIGRATIONS, SCHEMA, startWebhookApp } from '../app';
import { loadWebhookConfig, WebhookConfig } from '../config';

/** The webhook service on an ephemeral port against the real Postgres and Kafka, migrated and ready. */
export async function startWebhookTestApp(env: Record<string, string> = {}) {
  const config = loadWebhookConfig({ ...process.env, NODE_ENV: 'test', PORT: '0', LOG_LEVEL: 'warn', ...env });
  await runMigrations(
    postgresOptions({ url: config.MIGRATION_DATABASE_URL, schema: SCHEMA, entities: [], migrations: MIGRATIONS, applicationName: 'webhook-test-migrate', poolSize: 1 }),
  );
  const service: ServiceApp = await createWebhookApp(config);
  await startWebhookApp(service, config);
  const feed = service.app.get(RevocationFeed);
  const deadline = Date.now() + 30000;
  while (!feed.ready && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
  const port = (service.fastify.server.address() as AddressInfo).port;
  const [kid, key] = [...config.keys][0];
  const sign = createSigner({ key, algorithm: 'HS256', kid, header: { alg: 'HS256', typ: 'at+jwt' } });
  const baseUrl = `http://127.0.0.1:${port}`;
  return {
    service,
    config: config as WebhookConfig,
    baseUrl,
    token({ organizationPublicId, scopes = ALL_SCOPES }: { organizationPublicId: string; scopes?: readonly string[] }) {
      const iat = Math.floor(Date.now() / 1000);
      return sign({
        iss: config.JWT_ISSUER,
        aud: config.JWT_AUDIENCE,
        sub: newId('key'),
        client_id: 'ak_live_testtesttesttesttesttest',
        org_id: organizationPublicId,
        scope: scopes.join(' '),
        sid: newId('ses'),
        jti: newId('evt'),
        iat,
        exp: iat + 3600,
      });
    },
    /** A request with a token of the organization (all scopes unless given). */
    async call(method: string, path: string, organizationPublicId: string, body?: unknown, scopes?: readonly string[]) {
      const response = await fetch(`${baseUrl}${path}`, {
        method,
        headers: { authorization: `Bearer ${this.token({ organizationPublicId, scopes })}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
      const text = await response.text();
      return { status: response.status, body: text ? (JSON.parse(text) as Record<string, any>) : null }; // eslint-disable-line @typescript-eslint/no-explicit-any
    },
    async close() {
      service.state.shuttingDown = true;
      await service.app.close();
    },
  };
}

/** Publishes domain events (CloudEvents envelopes) as the services' outbox relays would. */
export async function publishDomainEvents(brokers: string[], events: Array<{ subject: string; type: string; data: unknown }>): Promise<void> {
  const publisher = new KafkaEventPublisher(createKafka({ brokers, clientId: 'webhook-test-publisher' }));
  try {
    await publisher.publish(
      DOMAIN_TOPIC,
      events.map((e) => ({
        key: e.subject,
        value: JSON.stringify({ specversion: '1.0', id: newId('evt'), source: '/invoicing/test', type: e.type, subject: e.subject, time: new Date().toISOString(), datacontenttype: 'application/json', data: e.data }),
      })),
    );
  } finally {
    await publisher.close();
  }
}

/** An invoice as the API returns it, paid `amountPaid` of 1,000. */
export function invoiceObject(amountPaid: number) {
  return {
    object: 'invoice', id: newId('inv'), created_at: new Date().toISOString(), client_id: newId('cli'), number: 'INV-000001', currency: 'EUR',
    issue_date: '2026-11-26', due_date: null, status: amountPaid >= 1000 ? 'paid' : amountPaid > 0 ? 'partially_paid' : 'open',
    line_items: [{ description: 'Work', quantity: 1, unit_price: 1000, tax_rate_bps: 0, product_id: null, amount: 1000, tax: 0 }],
    subtotal: 1000, tax_total: 0, total: 1000, amount_paid: amountPaid, amount_due: Math.max(1000 - amountPaid, 0), notes: null,
  };
}

/** Publishes `client_created` domain events as the client service's outbox relay would. */
export async function publishClientsCreated(brokers: string[], organizationPublicId: string, count: number): Promise<string[]> {
  const publisher = new KafkaEventPublisher(createKafka({ brokers, clientId: 'webhook-test-publisher' }));
  const ids: string[] = [];
  const messages = Array.from({ length: count }, (_, i) => {
    const id = newId('cli');
    ids.push(id);
    const event = {
      specversion: '1.0',
      id: newId('evt'),
      source: 'client-service',
      type: DOMAIN_EVENT_TYPES.client,
      subject: id,
      time: new Date().toISOString(),
      datacontenttype: 'application/json',
      data: {
        organization_id: organizationPublicId,
        object: { object: 'client', id, created_at: new Date().toISOString(), name: `Client ${i}`, email: null, phone: null, tax_id: null, address: null, currency: 'EUR' },
      },
    };
    return { key: id, value: JSON.stringify(event) };
  });
  try {
    await publisher.publish(DOMAIN_TOPIC, messages);
  } finally {
    await publisher.close();
  }
  return ids;
}

export interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  at: number;
}

/** A receiver: records every request; `respond` decides each answer (status, optional delay). */
export async function startReceiver(respond: (r: Received, count: number) => { status: number; delayMs?: number; headers?: Record<string, string> } = () => ({ status: 200 })) {
  const received: Received[] = [];
  const load = { inFlight: 0, maxInFlight: 0 };
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    load.inFlight++;
    load.maxInFlight = Math.max(load.maxInFlight, load.inFlight);
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const r = { headers: req.headers, body: Buffer.concat(chunks).toString('utf8'), at: Date.now() };
      received.push(r);
      const answer = respond(r, received.length);
      setTimeout(() => {
        load.inFlight--;
        res.writeHead(answer.status, answer.headers ?? {});
        res.end('ok');
      }, answer.delayMs ?? 0);
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/hooks`;
  return {
    url,
    received,
    /** Requests open at once: now, and at most so far. */
    load,
    async waitFor(predicate: (all: Received[]) => boolean, timeoutMs = 15000) {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(received)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met in ${timeoutMs} ms (${received.length} received)`);
        await new Promise((r) => setTimeout(r, 25));
      }
    },
    close: () => new Promise<void>((resolve) => { server.closeAllConnections(); server.close(() => resolve()); }),
  };
}

export const newOrganization = () => newId('org');

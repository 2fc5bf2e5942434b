import { ALL_SCOPES, RESOURCES, serviceOfResource } from '@invoicing/contracts';
import { randomBytes } from 'node:crypto';
import { createServer, Server } from 'node:http';
import { gunzipSync } from 'node:zlib';
import { http, TokenPair } from './support/api';
import { DashboardUser } from './support/dashboard';
import { createKey, itWhen, Platform, STACK, startPlatform } from './support/platform';
import { platformPorts } from './support/ports';

/**
 * Tracing end to end (docs/observability.md, ADR 0028): the services export their spans over
 * OTLP/HTTP to a receiver this spec runs, and a request's trace is followed through the gateway,
 * Postgres, Redis and Kafka into the services that consume what it published.
 */
/** The auth service and every resource service from 4171, the gateway on 4179 (4178: the OTLP receiver). */
const PORTS = platformPorts({ first: 4171, gateway: 4179 });
const OTLP_PORT = 4178;
const RESOURCE_SERVICES = RESOURCES.map(serviceOfResource);
/** The keys of this spec may do anything (the payment flow writes clients, invoices and payments). */
const SCOPES = ALL_SCOPES.join(',');

/** OTLP's span kinds, as the JSON encoding numbers them. */
const KIND = { SERVER: 2, CLIENT: 3, PRODUCER: 4, CONSUMER: 5 } as const;
const HEX32 = /^[0-9a-f]{32}$/;
const HEX16 = /^[0-9a-f]{16}$/;

interface ExportedSpan {
  service: string;
  traceId: string;
  spanId: string;
  /** Absent (or empty) for a root span. */
  parentSpanId?: string;
  name: string;
  kind: number;
  attributes: Record<string, unknown>;
}

interface OtlpValue {
  stringValue?: string;
  intValue?: string | number;
  doubleValue?: number;
  boolValue?: boolean;
  arrayValue?: { values?: OtlpValue[] };
}
type OtlpAttributes = Array<{ key: string; value: OtlpValue }> | undefined;
interface OtlpRequest {
  resourceSpans?: Array<{
    resource?: { attributes?: OtlpAttributes };
    scopeSpans?: Array<{ spans?: Array<{ traceId: string; spanId: string; parentSpanId?: string; name: string; kind: number; attributes?: OtlpAttributes }> }>;
  }>;
}

function valueOf(v: OtlpValue): unknown {
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(valueOf);
  if (v.intValue !== undefined) return Number(v.intValue);
  return v.stringValue ?? v.doubleValue ?? v.boolValue;
}

function attributesOf(list: OtlpAttributes): Record<string, unknown> {
  return Object.fromEntries((list ?? []).map(({ key, value }) => [key, valueOf(value)]));
}

/**
 * A stand-in for an OpenTelemetry collector: accepts `POST /v1/traces` in the JSON encoding (what
 * @opentelemetry/exporter-trace-otlp-http sends; gzip too, should OTEL_EXPORTER_OTLP_COMPRESSION ask
 * for it) and keeps every span, with the `service.name` of its resource.
 */
class OtlpReceiver {
  readonly spans: ExportedSpan[] = [];
  readonly refused: string[] = [];
  private server: Server | null = null;

  async start(port: number): Promise<void> {
    this.server = createServer((request, response) => {
      const chunks: Buffer[] = [];
      request.on('data', (c: Buffer) => chunks.push(c));
      request.on('end', () => {
        const type = request.headers['content-type'] ?? '';
        if (request.method !== 'POST' || request.url !== '/v1/traces' || !type.startsWith('application/json')) {
          this.refused.push(`${request.method} ${request.url} ${type}`);
          response.writeHead(415).end();
          return;
        }
        const body = Buffer.concat(chunks);
        this.accept(JSON.parse((request.headers['content-encoding'] === 'gzip' ? gunzipSync(body) : body).toString('utf8')) as OtlpRequest);
        response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(port, '127.0.0.1', resolve));
  }

  private accept(request: OtlpRequest): void {
    for (const resourceSpans of request.resourceSpans ?? []) {
      const service = String(attributesOf(resourceSpans.resource?.attributes)['service.name']);
      for (const scope of resourceSpans.scopeSpans ?? []) {
        for (const s of scope.spans ?? []) {
          this.spans.push({ service, traceId: s.traceId, spanId: s.spanId, parentSpanId: s.parentSpanId || undefined, name: s.name, kind: s.kind, attributes: attributesOf(s.attributes) });
        }
      }
    }
  }

  trace(traceId: string): ExportedSpan[] {
    return this.spans.filter((s) => s.traceId === traceId);
  }

  /** Waits (spans arrive in batches every OTEL_BSP_SCHEDULE_DELAY) until `find` finds something. */
  async waitFor<T>(what: string, find: (spans: ExportedSpan[]) => T | undefined, timeoutMs = 15000): Promise<T> {
    const deadline = Date.now() + timeoutMs;
    for (;;) {
      const found = find(this.spans);
      if (found !== undefined) return found;
      if (Date.now() > deadline) {
        const seen = [...new Set(this.spans.map((s) => `${s.service}: ${s.name}`))].sort().join('\n  ');
        throw new Error(`no ${what} within ${timeoutMs} ms; refused exports: ${this.refused.length}; spans seen:\n  ${seen}`);
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => (this.server ? this.server.close(resolve) : resolve(undefined)));
  }
}

/** Whether `span` is `ancestor` or lies below it (parent links within one trace). */
function descendsFrom(span: ExportedSpan, ancestor: ExportedSpan, trace: ExportedSpan[]): boolean {
  const byId = new Map(trace.map((s) => [s.spanId, s]));
  for (let s: ExportedSpan | undefined = span; s; s = s.parentSpanId ? byId.get(s.parentSpanId) : undefined) {
    if (s.spanId === ancestor.spanId) return true;
  }
  return false;
}

const isPostgres = (s: ExportedSpan) => s.kind === KIND.CLIENT && (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'postgresql';
const isRedis = (s: ExportedSpan) => s.kind === KIND.CLIENT && (s.attributes['db.system.name'] ?? s.attributes['db.system']) === 'redis';
const serverSpan = (service: string, name: string) => (s: ExportedSpan) => s.service === service && s.kind === KIND.SERVER && s.name === name;

const receiver = new OtlpReceiver();
let platform: Platform;
let BASE: string;

/** A traceparent as a caller would send it: a new trace, sampled, the caller's own span id. */
function callerTraceparent(): { header: string; traceId: string; spanId: string } {
  const traceId = randomBytes(16).toString('hex');
  const spanId = randomBytes(8).toString('hex');
  return { header: `00-${traceId}-${spanId}-01`, traceId, spanId };
}

async function exchange(key: { client_id: string; client_secret: string }, headers: Record<string, string> = {}): Promise<TokenPair> {
  const r = await http('POST', `${BASE}/api/v1/auth/token`, { body: { grant_type: 'client_credentials', client_id: key.client_id, client_secret: key.client_secret }, headers });
  expect(r.status).toBe(200);
  return r.body as unknown as TokenPair;
}

/** Against a running stack the services export where it sends them, not here. */
const local = itWhen(!STACK.external, 'the running stack exports its spans to its own collector, not to this spec');

beforeAll(async () => {
  if (STACK.external) return;
  await receiver.start(OTLP_PORT);
  platform = await startPlatform({
    label: 'tracing',
    ports: PORTS,
    // The exporter sends JSON; a short batch delay so that spans arrive within the test.
    env: { OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${OTLP_PORT}`, OTEL_BSP_SCHEDULE_DELAY: '100' },
  });
  BASE = platform.baseUrl;
});

afterAll(async () => {
  await platform?.stop();
  await receiver.stop();
});

describe('tracing across the platform', () => {
  local("continues the gateway's trace when the caller sends no traceparent, with the service's queries inside", async () => {
    const { access_token: token } = await exchange(await createKey('E2E Tracing', 'untraced caller', SCOPES));
    const listed = await http('GET', `${BASE}/api/v1/invoices`, { token });
    expect(listed.status).toBe(200);
    const requestId = listed.headers.get('x-request-id');
    expect(requestId).toBeTruthy();

    // The service's span of that request: found by the request id it shares with the log lines.
    const server = await receiver.waitFor('server span of GET /api/v1/invoices', (spans) =>
      spans.find((s) => serverSpan('invoice-service', 'GET /api/v1/invoices')(s) && s.attributes.request_id === requestId),
    );
    expect(server.attributes['http.route']).toBe('/api/v1/invoices');
    // The gateway always passes a traceparent: a new trace here, and its own span as the parent.
    expect(server.traceId).toMatch(HEX32);
    expect(server.parentSpanId).toMatch(HEX16);
    const query = await receiver.waitFor('Postgres span under it', () => receiver.trace(server.traceId).find((s) => isPostgres(s) && descendsFrom(s, server, receiver.trace(server.traceId))));
    expect(query.service).toBe('invoice-service');
  });

  local("keeps the caller's trace id, with the gateway's span as parent, and puts Postgres and Redis spans under the service's", async () => {
    const key = await createKey('E2E Tracing', 'traced caller', SCOPES);
    const caller = callerTraceparent();
    // A first exchange of a new key: the key is read from Postgres and the session written to Redis.
    await exchange(key, { traceparent: caller.header });

    const server = await receiver.waitFor('server span in the caller\'s trace', () => receiver.trace(caller.traceId).find(serverSpan('auth-service', 'POST /api/v1/auth/token')));
    expect(server.traceId).toBe(caller.traceId);
    // The gateway is a hop of the trace: the service's parent is the gateway's span, not the caller's.
    expect(server.parentSpanId).toMatch(HEX16);
    expect(server.parentSpanId).not.toBe(caller.spanId);
    const under = (match: (s: ExportedSpan) => boolean) => () => receiver.trace(caller.traceId).find((s) => match(s) && descendsFrom(s, server, receiver.trace(caller.traceId)));
    const query = await receiver.waitFor('Postgres span under the server span', under(isPostgres));
    const command = await receiver.waitFor('Redis span under the server span', under(isRedis));
    expect([query.service, command.service]).toEqual(['auth-service', 'auth-service']);
  });

  local("makes a key's revocation one trace: the auth service's request, its Kafka send, and every resource service's consume", async () => {
    const user = await DashboardUser.signUp(BASE, 'E2E Tracing');
    const key = await user.createKey({ scopes: ['read:invoices'] });
    expect((await user.call('POST', `/api/v1/settings/api-keys/${key.id}/revoke`)).status).toBe(200);

    const server = await receiver.waitFor('server span of the revocation', (spans) =>
      spans.find((s) => serverSpan('auth-service', 'POST /api/v1/settings/api-keys/:id/revoke')(s)),
    );
    const trace = () => receiver.trace(server.traceId);
    const sends = await receiver.waitFor('Kafka send of the revocation', () => {
      const found = trace().filter((s) => s.service === 'auth-service' && s.kind === KIND.PRODUCER && s.name === 'send auth.revocations.v1');
      return found.length > 0 ? found : undefined;
    });
    for (const send of sends) {
      expect(descendsFrom(send, server, trace())).toBe(true);
      expect(send.attributes).toMatchObject({ 'messaging.system': 'kafka', 'messaging.destination.name': 'auth.revocations.v1' });
    }
    // Each resource service's revocation feed consumes it inside the same trace, below a send span.
    const consumers = await receiver.waitFor('every resource service consuming it', () => {
      const found = trace().filter((s) => s.kind === KIND.CONSUMER && s.name === 'process auth.revocations.v1');
      return RESOURCE_SERVICES.every((service) => found.some((s) => s.service === service)) ? found : undefined;
    });
    const sendIds = new Set(sends.map((s) => s.spanId));
    for (const consumed of consumers) expect({ service: consumed.service, parentIsASend: sendIds.has(consumed.parentSpanId ?? '') }).toEqual({ service: consumed.service, parentIsASend: true });
  });

  local('makes a payment applied to its invoice one trace: the payment request, the outbox relay\'s send, and the invoice service\'s consume and update', async () => {
    const { access_token: token } = await exchange(await createKey('E2E Tracing', 'payments', SCOPES));
    const client = await http('POST', `${BASE}/api/v1/clients`, { token, body: { name: 'Traced Ltd', currency: 'EUR' } });
    expect(client.status).toBe(201);
    const invoice = await http('POST', `${BASE}/api/v1/invoices`, {
      token,
      body: { client_id: client.body.id, currency: 'EUR', line_items: [{ description: 'Tracing', quantity: 1, unit_price: 2500 }] },
    });
    expect(invoice.status).toBe(201);

    const caller = callerTraceparent();
    const payment = await http('POST', `${BASE}/api/v1/payments`, {
      token,
      headers: { traceparent: caller.header },
      body: { invoice_id: invoice.body.id, amount: 2500, currency: 'EUR', method: 'bank_transfer' },
    });
    expect(payment.status).toBe(201);

    const trace = () => receiver.trace(caller.traceId);
    const server = await receiver.waitFor('server span of the payment', () => trace().find(serverSpan('payment-service', 'POST /api/v1/payments')));
    expect(server.parentSpanId).not.toBe(caller.spanId);
    // Sent by the relay after the request, from the outbox row: still below the request's span.
    const send = await receiver.waitFor('send of the payment event', () =>
      trace().find((s) => s.service === 'payment-service' && s.kind === KIND.PRODUCER && s.name === 'send invoicing.domain.v1'),
    );
    expect(descendsFrom(send, server, trace())).toBe(true);
    const consumed = await receiver.waitFor("the invoice service's consume", () =>
      trace().find((s) => s.service === 'invoice-service' && s.kind === KIND.CONSUMER && s.name === 'process invoicing.domain.v1'),
    );
    expect(consumed.parentSpanId).toBe(send.spanId);
    expect(consumed.attributes['messaging.consumer.group.name']).toBe('invoice-service.domain');
    // The payment applied to the invoice: the invoice service's queries run inside the consume span.
    const update = await receiver.waitFor('the update of the invoice', () =>
      trace().find((s) => isPostgres(s) && s.service === 'invoice-service' && String(s.attributes['db.query.text'] ?? s.attributes['db.statement']).includes('applied_payments')),
    );
    expect(descendsFrom(update, consumed, trace())).toBe(true);
    let seen: Record<string, unknown> = {};
    for (const deadline = Date.now() + 5000; seen.status !== 'paid' && Date.now() < deadline; await new Promise((r) => setTimeout(r, 20))) {
      seen = (await http('GET', `${BASE}/api/v1/invoices/${invoice.body.id}`, { token })).body;
    }
    expect(seen).toMatchObject({ amount_paid: 2500, status: 'paid' });
  });
});

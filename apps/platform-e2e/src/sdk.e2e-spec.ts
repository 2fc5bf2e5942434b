import type * as Sdk from '@invoicing/sdk';
import { ownerOfKind, RESOURCE_MANIFEST, serviceOfResource, validateRevocationEvent } from '@invoicing/contracts';
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { createServer, request as httpRequest, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { http } from './support/api';
import { createKey, CreatedKey, itWhen, Platform, STACK, startPlatform } from './support/platform';
import { platformPorts } from './support/ports';
import { ROOT, sleep } from './support/processes';
import { readRevocations } from './support/topic-reader';

/**
 * The SDK (libs/sdk, ADR 0026) against the real platform: its token lifecycle across real
 * access-token expiries with 0 failures and 0 refresh-token reuse events on Kafka, a create retried
 * after a lost response making exactly one object, and a real 429 storm (the services' per-key rate
 * limit) ridden out. The auth service issues 3-second access tokens here (ACCESS_TOKEN_LIFETIME_SECONDS).
 */

/** The package as it ships (dist/libs/sdk, made by the build tier), not its sources. */
const PACKAGE = join(ROOT, 'dist', 'libs', 'sdk');
const { Invoicing, MemoryTokenStore } = require(join(PACKAGE, 'index.cjs')) as typeof Sdk;
type Invoicing = Sdk.Invoicing;
type InvoicingOptions = Sdk.InvoicingOptions;

/** 4151-4159 belong to this spec: the auth service and every resource service from 4151, the gateway on 4159. */
const PORTS = platformPorts({ first: 4151, gateway: 4159 });
const LIFETIME_SECONDS = 3;
const RATE = 50;
const SCOPES = 'read:clients,write:clients';

let platform: Platform;
let BASE: string;

beforeAll(async () => {
  platform = await startPlatform({
    label: 'sdk',
    ports: PORTS,
    // Clients and invoices are called: the invoice service and the owners of what it references.
    start: ['auth-service', 'gateway', serviceOfResource('invoices'), ...RESOURCE_MANIFEST.invoices.references.map(ownerOfKind)],
    // A per-key rate of 50 a second (burst 50) at the client service: the trial stays under it (10
    // calls every 350 ms), the storm is three times the burst however slowly its calls arrive.
    env: { ACCESS_TOKEN_LIFETIME_SECONDS: String(LIFETIME_SECONDS), RATE_LIMIT_PER_SECOND: String(RATE), RATE_LIMIT_BURST: String(RATE) },
  });
  BASE = platform.baseUrl;
});

afterAll(async () => {
  await platform?.stop();
});

interface Sent {
  path: string;
  method: string;
  status: number | 'network error';
  body: string;
  headers: Headers;
}

/** The global fetch, recording every request the SDK makes and what came back. */
function recordingFetch(log: Sent[]): typeof fetch {
  return async (input, init) => {
    const url = new URL(typeof input === 'string' ? input : input instanceof URL ? input.href : input.url);
    const entry: Sent = { path: url.pathname, method: init?.method ?? 'GET', status: 'network error', body: typeof init?.body === 'string' ? init.body : '', headers: new Headers(init?.headers) };
    log.push(entry);
    const response = await fetch(input, init);
    entry.status = response.status;
    return response;
  };
}

function client(key: CreatedKey, log: Sent[], options: Partial<InvoicingOptions> = {}): Invoicing {
  return new Invoicing({ baseUrl: BASE, clientId: key.client_id, clientSecret: key.client_secret, fetch: recordingFetch(log), ...options });
}

const refreshTokensSent = (log: Sent[]) => log.filter((s) => s.path === '/api/v1/auth/refresh').map((s) => (JSON.parse(s.body) as { refresh_token: string }).refresh_token);

describe('the SDK against the real platform', () => {
  it('is built as a package that loads as an ES module and as CommonJS, with its types', () => {
    const manifest = JSON.parse(readFileSync(join(PACKAGE, 'package.json'), 'utf8')) as { version: string; exports: Record<string, Record<string, string>> };
    const esm = execFileSync(process.execPath, ['--input-type=module', '-e', `const m = await import(${JSON.stringify(join(PACKAGE, 'index.mjs'))}); console.log(typeof m.Invoicing, m.VERSION)`], { encoding: 'utf8' });
    expect(esm.trim()).toBe(`function ${manifest.version}`);
    expect(typeof Invoicing).toBe('function');
    expect(Object.values(manifest.exports['.'])).toEqual(expect.arrayContaining(['./types/index.d.ts', './index.mjs', './index.cjs']));
    expect(existsSync(join(PACKAGE, 'types', 'index.d.ts'))).toBe(true);
  });

  it("fetches an invoice as a PDF and as an e-invoice (pdf(), eInvoice()); a 422 for the e-invoice without the seller's details is an InvoicingApiError naming them", async () => {
    const key = await createKey('E2E SDK documents', 'documents', 'read:clients,write:clients,read:invoices,write:invoices');
    const api = client(key, []);
    const buyer = await api.clients.create({ name: 'Initech', address: { line1: '1 Main St', city: 'London', country: 'GB' } });
    const invoice = await api.invoices.create({ client_id: buyer.id, currency: 'EUR', due_date: '2099-01-31', line_items: [{ description: 'Consulting', quantity: 1, unit_price: 50000 }] });
    const pdf = Buffer.from(await api.invoices.pdf(invoice.id));
    expect(pdf.subarray(0, 5).toString('latin1')).toBe('%PDF-');
    const text = execFileSync('pdftotext', ['-', '-'], { input: pdf }).toString('utf8');
    expect(text).toContain(String(invoice.number));
    expect(text).toContain('Initech');
    // This organization never saved a profile (Settings → Organization): no seller to put in an e-invoice.
    const refused = (await api.invoices.eInvoice(invoice.id, 'ubl').catch((e: unknown) => e)) as Sdk.InvoicingApiError;
    expect(refused.status).toBe(422);
    expect(refused.errors.map((e) => e.field)).toEqual(expect.arrayContaining(['seller.legal_name', 'seller.vat_id']));
  });

  itWhen(!STACK.external, 'it needs the auth service to issue short-lived access tokens')(
    '200 concurrent calls from one client across access-token expiries: 0 failures, no refresh token presented twice, 0 reuse events on Kafka',
    async () => {
      const key = await createKey('E2E SDK', 'trial', SCOPES);
      const log: Sent[] = [];
      const api = client(key, log);
      const created = await api.clients.create({ name: 'Initech', currency: 'EUR' });
      const startedAt = Date.now();

      // 200 calls launched together, in 20 waves of 10 simultaneous calls 350 ms apart: across at
      // least two 3-second lifetimes, and whichever wave meets a renewal has 10 calls waiting on it.
      const outcomes = await Promise.allSettled(
        Array.from({ length: 200 }, async (_, i) => {
          await sleep((i % 20) * 350);
          const got = await api.clients.get(created.id);
          if (got.id !== created.id) throw new Error(`call ${i} read ${got.id}`);
        }),
      );
      const failures = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
      const elapsed = Date.now() - startedAt;

      const refreshes = refreshTokensSent(log);
      const exchanges = log.filter((s) => s.path === '/api/v1/auth/token').length;
      const refused = log.filter((s) => s.path.startsWith('/api/v1/clients') && s.status === 401).length;
      const reads = log.filter((s) => s.path.startsWith('/api/v1/clients/') && s.method === 'GET').length;
      console.log(
        `e2e: sdk trial: 200 calls in ${elapsed} ms, ${failures.length} failures; ${reads} GETs sent (${refused} answered 401 and retried), ${exchanges} exchanges, ${refreshes.length} refreshes (${new Set(refreshes).size} distinct refresh tokens)`,
      );
      expect(failures).toEqual([]);
      // The trial spans expiries: the SDK renewed, by refresh, at least twice.
      expect(elapsed).toBeGreaterThan(2 * LIFETIME_SECONDS * 1000);
      expect(refreshes.length).toBeGreaterThanOrEqual(2);
      expect(new Set(refreshes).size).toBe(refreshes.length);

      // Kafka: no session of this key was revoked for reuse. To show the reader sees such an event
      // when there is one, present one of the SDK's spent refresh tokens again ourselves: that must
      // be the one reuse event on the topic.
      const replayedAt = Date.now();
      const replay = await http('POST', `${BASE}/api/v1/auth/refresh`, { body: { refresh_token: refreshes[0] } });
      expect(replay.body.error).toBe('invalid_grant');
      const events = (await readRevocations(key.id, startedAt - 1000)).map((e) => validateRevocationEvent(e));
      const reuse = events.filter((e) => e.ok && e.value.type === 'invoicing.auth.sessions_revoked.v1' && e.value.data.reason === 'refresh_token_reuse');
      console.log(`e2e: sdk trial: refresh_token_reuse events for the key: ${reuse.length} (1 expected: the deliberate replay)`);
      expect(reuse).toHaveLength(1);
      expect(reuse[0].ok && Date.parse(reuse[0].value.time)).toBeGreaterThanOrEqual(replayedAt - 1000);
    },
    60000,
  );

  it('a session revoked under a client: the next call is answered 401, the SDK exchanges afresh once and the call succeeds (no refresh of the dead session)', async () => {
    const key = await createKey('E2E SDK', 'revoked session', SCOPES);
    const log: Sent[] = [];
    const store = new MemoryTokenStore();
    const api = client(key, log, { tokenStore: store });
    const created = await api.clients.create({ name: 'Vandelay', currency: 'EUR' });
    const held = await store.get();
    if (!held?.refreshToken) throw new Error('the store holds no session');

    // The owner ends that session (RFC 7009); wait until the client service refuses its token.
    const revoke = await fetch(`${BASE}/api/v1/auth/revoke`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${Buffer.from(`${key.client_id}:${key.client_secret}`).toString('base64')}` },
      body: new URLSearchParams({ token: held.refreshToken }).toString(),
    });
    expect(revoke.status).toBe(200);
    for (let i = 0; i < 100 && (await http('GET', `${BASE}/api/v1/clients/${created.id}`, { token: held.accessToken })).status !== 401; i++) await sleep(20);

    log.length = 0;
    expect((await api.clients.get(created.id)).id).toBe(created.id);
    expect(log.map((s) => `${s.method} ${s.path.replace(created.id, ':id')} ${s.status}`)).toEqual([
      'GET /api/v1/clients/:id 401',
      'POST /api/v1/auth/token 200',
      'GET /api/v1/clients/:id 200',
    ]);
  });

  it('a create whose response is lost is retried with the same Idempotency-Key and makes exactly one object', async () => {
    const key = await createKey('E2E SDK', 'lost response', SCOPES);
    // A proxy in front of the gateway that lets the first create through and then drops its
    // response (the connection is cut after the gateway answered).
    const creates: Array<{ key: string | undefined; status: number }> = [];
    const proxy = await startProxy(async (req, res, body) => {
      const upstream = await forward(req, body);
      if (req.method === 'POST' && req.url === '/api/v1/clients') {
        creates.push({ key: req.headers['idempotency-key'] as string | undefined, status: upstream.status });
        if (creates.length === 1) {
          res.socket?.destroy();
          return;
        }
      }
      res.writeHead(upstream.status, upstream.headers);
      res.end(upstream.body);
    });
    try {
      const log: Sent[] = [];
      const api = new Invoicing({ baseUrl: proxy.url, clientId: key.client_id, clientSecret: key.client_secret, fetch: recordingFetch(log) });
      const created = await api.clients.create({ name: 'Umbrella', currency: 'EUR' });
      expect(creates.length).toBe(2);
      expect(creates[0].key).toMatch(/\S+/);
      expect(creates[1].key).toBe(creates[0].key);
      expect(creates.map((c) => c.status)).toEqual([201, 201]);
      const all: string[] = [];
      for await (const c of api.clients.list()) all.push(c.id);
      expect(all).toEqual([created.id]);
    } finally {
      await proxy.close();
    }
  });

  itWhen(!STACK.external, 'it sets the per-key rate limit of the services it starts (50 a second); a running stack keeps its own')('rides out a 429 storm from the per-key rate limit (Retry-After honoured), with every call answered', async () => {
    const key = await createKey('E2E SDK', 'storm', SCOPES);
    const log: Sent[] = [];
    const api = client(key, log);
    const created = await api.clients.create({ name: 'Hooli', currency: 'EUR' });
    // 150 at once: three times the per-key burst (50, refilled at 50 a second). About 100 are
    // answered 429 with Retry-After: 1, then 50 of them again; the SDK's default 3 retries suffice.
    const startedAt = Date.now();
    const outcomes = await Promise.allSettled(Array.from({ length: 3 * RATE }, () => api.clients.get(created.id)));
    const failures = outcomes.filter((o) => o.status === 'rejected').map((o) => String((o as PromiseRejectedResult).reason));
    const limited = log.filter((s) => s.status === 429).length;
    console.log(`e2e: sdk 429 storm: ${3 * RATE} calls in ${Date.now() - startedAt} ms, ${limited} answered 429 and retried, ${failures.length} failures`);
    // Fewer only if the calls took over a second to arrive (the bucket refills meanwhile).
    expect(limited).toBeGreaterThanOrEqual(RATE);
    expect(failures).toEqual([]);
  });
});

async function startProxy(handle: (req: IncomingMessage, res: ServerResponse, body: Buffer) => Promise<void>): Promise<{ url: string; close(): Promise<void> }> {
  const server: Server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      handle(req, res, Buffer.concat(chunks)).catch(() => res.socket?.destroy());
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

function forward(req: IncomingMessage, body: Buffer): Promise<{ status: number; headers: Record<string, string | string[]>; body: Buffer }> {
  const target = new URL(req.url ?? '/', BASE);
  return new Promise((resolve, reject) => {
    const headers = { ...req.headers, host: target.host };
    delete headers.connection;
    const upstream = httpRequest(target, { method: req.method, headers }, (response) => {
      const chunks: Buffer[] = [];
      response.on('data', (c: Buffer) => chunks.push(c));
      response.on('end', () => {
        const out: Record<string, string | string[]> = {};
        for (const [name, value] of Object.entries(response.headers)) if (value !== undefined && !['connection', 'transfer-encoding', 'keep-alive'].includes(name)) out[name] = value;
        resolve({ status: response.statusCode ?? 502, headers: out, body: Buffer.concat(chunks) });
      });
    });
    upstream.on('error', reject);
    upstream.end(body);
  });
}

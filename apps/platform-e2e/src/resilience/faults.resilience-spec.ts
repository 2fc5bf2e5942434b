/**
 * Items 1-5 and 9 of docs/resilience.md: the built services as processes, real Postgres, Redis and
 * Kafka, and faults injected into the real processes: the Kafka broker stopped and started
 * (tools/infra/kafka.sh), a Redis of the test's own killed with -9 and started again, services
 * killed with -9 or restarted, and loopback TCP proxies that slow or cut a service's connection to
 * Redis or Postgres. Every figure is printed and appended to tmp/resilience/figures.jsonl.
 */
import { ALL_SCOPES, AUDIT_TOPIC, parsePublicId, Resource, RESOURCE_MANIFEST, RESOURCES, REVOCATIONS_TOPIC, serviceOfResource, validateAuditEvent } from '@invoicing/contracts';
import { startTcpProxy, TcpProxy } from '@invoicing/resource-api/testing';
import { ChildProcess, spawn } from 'node:child_process';
import { request as httpRequest } from 'node:http';
import { mkdirSync, readFileSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from 'pg';
import { kafka, ROOT, runCommand, ServiceName, ServiceProcess, sleep, startService } from '../support/processes';
import { loopbackUrls } from '../support/platform';
import { platformPorts } from '../support/ports';
import { DashboardSession } from './support/dashboard-session';
import { figure } from './support/figures';
import { readTopicSince } from './support/topic';
import { RawAnswer, send } from './support/raw-http';
import { claimsOf } from '../support/api';

/** The auth service and every resource service from 4301, the gateway on 4309. */
const PORTS = platformPorts({ first: 4301, gateway: 4309 });
/** A second invoice-service instance with the shortest staleness bound, for item 3. */
const STRICT_INVOICE_PORT = 4310;
/** A third, with a short request deadline, for item 15. */
const DEADLINE_INVOICE_PORT = 4311;
const DEADLINE_MS = 3000;
const STRICT_BOUND_MS = 5000;
const REDIS_PORT = 6391;
const BASE = `http://127.0.0.1:${PORTS.gateway}`;
const DIRECT = (service: keyof typeof PORTS) => `http://127.0.0.1:${PORTS[service]}`;
const RESOURCE_SERVICES = RESOURCES.map(serviceOfResource);
const DB = 'postgres://postgres@127.0.0.1:5432/invoicing';

type Json = Record<string, unknown>;
const services = new Map<string, ServiceProcess>();
let redisProxy: TcpProxy;
let pgProxy: TcpProxy;
let redis: ChildProcess | null = null;
let db: Client;
const session = new DashboardSession();
let organizationId = '';

// --- infrastructure the test owns ----------------------------------------------------------------
const REDIS_DIR = join(ROOT, 'tmp', 'resilience', 'redis');
/** A Redis of this test's own (append-only, fsync always), so that killing it harms no one else. */
async function startRedis(): Promise<void> {
  mkdirSync(REDIS_DIR, { recursive: true });
  redis = spawn('redis-server', ['--port', String(REDIS_PORT), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'yes', '--appendfsync', 'always', '--dir', REDIS_DIR], {
    stdio: 'ignore',
  });
  for (let i = 0; i < 100; i++) {
    const ok = await new Promise<boolean>((resolve) => {
      const c = spawn('redis-cli', ['-p', String(REDIS_PORT), 'ping'], { stdio: ['ignore', 'pipe', 'ignore'] });
      let out = '';
      c.stdout.on('data', (d: Buffer) => (out += d.toString()));
      c.on('exit', () => resolve(out.trim() === 'PONG'));
    });
    if (ok) return;
    await sleep(50);
  }
  throw new Error('test redis did not start');
}
async function killRedis(): Promise<void> {
  if (!redis) return;
  const done = new Promise((r) => redis!.once('exit', r));
  redis.kill('SIGKILL');
  await done;
  redis = null;
}

function start(service: ServiceName, port: number, label: string, env: Record<string, string> = {}): ServiceProcess {
  const p = startService(service, port, `${label}-faults`, { ...loopbackUrls(PORTS), ...env });
  services.set(label, p);
  return p;
}
const envFor = (service: ServiceName): Record<string, string> =>
  service === 'auth-service'
    ? { REDIS_URL: `redis://127.0.0.1:${redisProxy.port}` }
    : service === 'expense-service'
      ? { DATABASE_URL: `postgres://expense_app:expense_app_dev@127.0.0.1:${pgProxy.port}/invoicing` }
      : {};

// --- HTTP helpers -----------------------------------------------------------------------------------
const json = (method: string, url: string, body?: unknown, headers: Record<string, string> = {}): Promise<RawAnswer> =>
  send(url, method, new URL(url).pathname + new URL(url).search, { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers }, body === undefined ? undefined : JSON.stringify(body)).catch(
    (e: Error): RawAnswer => ({ status: 0, headers: {}, text: e.message, json: null }),
  );
const dashboard = () => session.headers();

interface Key {
  id: string;
  client_id: string;
  client_secret: string;
}
async function newKey(name = 'faults'): Promise<Key> {
  const r = await json('POST', `${DIRECT('auth-service')}/api/v1/settings/api-keys`, { name, scopes: ALL_SCOPES }, dashboard());
  if (r.status !== 201) throw new Error(`create key: ${r.status} ${r.text}`);
  return r.json as unknown as Key;
}
interface Pair {
  access_token: string;
  refresh_token: string;
}
async function exchange(key: Key, base = DIRECT('auth-service')): Promise<RawAnswer> {
  return json('POST', `${base}/api/v1/auth/token`, { grant_type: 'client_credentials', client_id: key.client_id, client_secret: key.client_secret });
}
async function pairOf(key: Key): Promise<Pair> {
  const r = await exchange(key);
  if (r.status !== 200) throw new Error(`exchange: ${r.status} ${r.text}`);
  return r.json as unknown as Pair;
}
const refreshAt = (pathKind: 'refresh' | 'token', refreshToken: string, key: Key, base = DIRECT('auth-service')) =>
  pathKind === 'refresh'
    ? json('POST', `${base}/api/v1/auth/refresh`, { refresh_token: refreshToken })
    : json('POST', `${base}/api/v1/auth/token`, { grant_type: 'refresh_token', refresh_token: refreshToken, client_id: key.client_id, client_secret: key.client_secret });
const revokeKey = (key: Key) => json('POST', `${DIRECT('auth-service')}/api/v1/settings/api-keys/${key.id}/revoke`, {}, dashboard());
const bearer = (token: string) => ({ authorization: `Bearer ${token}` });

/** Resident memory of a live process in MB; null once it has exited. */
function rssMb(pid: number): number | null {
  try {
    const m = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
    return m ? Math.round(Number(m[1]) / 1024) : null;
  } catch {
    return null;
  }
}
async function rowsOf(table: string): Promise<number> {
  const { rows } = await db.query<{ n: string }>(`SELECT count(*) AS n FROM ${table} WHERE organization_id = $1`, [organizationId]);
  return Number(rows[0].n);
}
/** A second organization of its own (a dashboard user and a key with every scope), and a token of it. */
async function anotherOrganization(name: string): Promise<{ organization: string; token: string }> {
  const other = new DashboardSession();
  const auth = DIRECT('auth-service');
  other.keep(await json('GET', `${auth}/api/v1/account/csrf`));
  const signup = await json('POST', `${auth}/api/v1/account/signup`, { organization_name: name, email: `${name.toLowerCase()}-${Date.now()}@example.com`, password: 'correct horse battery' }, other.headers());
  if (signup.status !== 201) throw new Error(`signup: ${signup.status} ${signup.text}`);
  other.keep(signup);
  other.keep(await json('GET', `${auth}/api/v1/account/csrf`, undefined, other.headers()));
  const created = await json('POST', `${auth}/api/v1/settings/api-keys`, { name, scopes: ALL_SCOPES }, other.headers());
  if (created.status !== 201) throw new Error(`create key: ${created.status} ${created.text}`);
  const { access_token } = await pairOf(created.json as unknown as Key);
  return { organization: String((signup.json?.organization as Json).id), token: access_token };
}

/** Polls until `check` holds; returns the milliseconds it took (throws after `timeoutMs`). */
async function until(what: string, check: () => Promise<boolean>, timeoutMs: number, everyMs = 20): Promise<number> {
  const startedAt = Date.now();
  for (;;) {
    if (await check()) return Date.now() - startedAt;
    if (Date.now() - startedAt > timeoutMs) throw new Error(`${what}: not within ${timeoutMs} ms`);
    await sleep(everyMs);
  }
}

beforeAll(async () => {
  await kafka('start');
  rmSync(REDIS_DIR, { recursive: true, force: true });
  await startRedis();
  redisProxy = await startTcpProxy(REDIS_PORT);
  pgProxy = await startTcpProxy(5432);
  db = new Client({ connectionString: DB });
  await db.connect();
  for (const service of ['auth-service', ...RESOURCE_SERVICES] as const) await runCommand(service, ['migrate']);
  for (const [name, port] of Object.entries(PORTS)) start(name as ServiceName, port, name, envFor(name as ServiceName));
  start('invoice-service', STRICT_INVOICE_PORT, 'invoice-service-strict', { REVOCATION_MAX_STALENESS_MS: String(STRICT_BOUND_MS) });
  await Promise.all([...services.values()].map((p) => p.waitReady(90000)));
  session.keep(await json('GET', `${DIRECT('auth-service')}/api/v1/account/csrf`));
  const signup = await json(
    'POST',
    `${DIRECT('auth-service')}/api/v1/account/signup`,
    { organization_name: 'Faults Ltd', email: `faults-${Date.now()}@example.com`, password: 'correct horse battery' },
    dashboard(),
  );
  expect(signup.status).toBe(201);
  session.keep(signup);
  session.keep(await json('GET', `${DIRECT('auth-service')}/api/v1/account/csrf`, undefined, dashboard()));
  organizationId = parsePublicId('org', String((signup.json?.organization as Json).id))!;
}, 240000);

afterAll(async () => {
  await kafka('start');
  await Promise.all([...services.values()].map((p) => p.stop()));
  await redisProxy?.close();
  await pgProxy?.close();
  await killRedis();
  await db?.end();
});

describe('faults (items 1-5, 9, 15 and 16 of docs/resilience.md)', () => {
  it('item 1: 100 races of 20 concurrent refreshes of one token (half /refresh, half the token endpoint): one winner each, every loser reuse', async () => {
    const key = await newKey('races');
    let oneWinner = 0;
    let losersAsReuse = 0;
    let losers = 0;
    for (let trial = 0; trial < 100; trial++) {
      const { refresh_token } = await pairOf(key);
      const answers = await Promise.all(Array.from({ length: 20 }, (_, i) => refreshAt(i % 2 ? 'token' : 'refresh', refresh_token, key)));
      const winners = answers.filter((a) => a.status === 200);
      if (winners.length === 1) oneWinner += 1;
      for (const a of answers.filter((x) => x.status !== 200)) {
        losers += 1;
        if (a.status === 400 && a.json?.error === 'invalid_grant' && /already used/.test(String(a.json?.error_description))) losersAsReuse += 1;
      }
      // The reuse revoked the family: the winner's new refresh token is dead too.
      if (winners.length === 1) {
        const next = await refreshAt('refresh', String(winners[0].json?.refresh_token), key);
        expect(next.status).toBe(400);
      }
    }
    figure('1', 'refresh races with exactly one winner', `${oneWinner}/100`);
    figure('1', 'losers answered as reuse (invalid_grant, family revoked)', `${losersAsReuse}/${losers}`);
    expect(oneWinner).toBe(100);
    expect(losersAsReuse).toBe(losers);
    expect(losers).toBe(1900);
  }, 300000);

  it('lockout (ADR 0022): 10 s of wrong secrets for one key from 20 addresses never refuse its owner elsewhere', async () => {
    const key = await newKey('lockout');
    // The test plays the gateway: it connects from 127.0.0.2 (the trusted proxy) and names the caller.
    const tokenFrom = (address: string, secret: string) =>
      new Promise<number>((resolve) => {
        const body = JSON.stringify({ grant_type: 'client_credentials', client_id: key.client_id, client_secret: secret });
        const url = new URL(`${DIRECT('auth-service')}/api/v1/auth/token`);
        const req = httpRequest(
          { host: url.hostname, port: url.port, path: url.pathname, method: 'POST', localAddress: '127.0.0.2', agent: false, headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), 'x-forwarded-for': address } },
          (res) => res.resume().on('end', () => resolve(res.statusCode ?? 0)),
        );
        req.on('error', () => resolve(0));
        req.end(body);
      });
    const wrong = `sk_live_${'0'.repeat(43)}`.slice(0, key.client_secret.length);
    const attackers = Array.from({ length: 20 }, (_, i) => `203.0.113.${i + 1}`);
    const attack: Record<number, number> = {};
    const owner: Record<number, number> = {};
    const until = Date.now() + 10_000;
    await Promise.all([
      ...attackers.map(async (address) => {
        while (Date.now() < until) {
          const status = await tokenFrom(address, wrong);
          attack[status] = (attack[status] ?? 0) + 1;
        }
      }),
      (async () => {
        while (Date.now() < until) {
          const status = await tokenFrom('198.51.100.20', key.client_secret);
          owner[status] = (owner[status] ?? 0) + 1;
          await sleep(200);
        }
      })(),
    ]);
    figure('lockout', 'wrong-secret requests from 20 addresses in 10 s, by status', JSON.stringify(attack));
    figure('lockout', "owner's exchanges from its own address meanwhile, by status", JSON.stringify(owner));
    // Each attacking address spends its own budget (10 failures for this key), then is refused.
    expect(attack[401]).toBe(20 * 10);
    expect(attack[429]).toBeGreaterThan(0);
    expect(Object.keys(owner)).toEqual(['200']);
  }, 60000);

  it("item 15: a row that cannot be read fails its own readers alone, never another organization's read in its batch; a stalled table is answered 503 within the request deadline", async () => {
    const instance = start('invoice-service', DEADLINE_INVOICE_PORT, 'invoice-service-deadline', { REQUEST_TIMEOUT_MS: String(DEADLINE_MS) });
    await instance.waitReady(90000);
    const url = `http://127.0.0.1:${DEADLINE_INVOICE_PORT}/api/v1/invoices`;
    const victim = await anotherOrganization('Victim');
    const hostile = await anotherOrganization('Hostile');
    const invoiceOf = async (token: string): Promise<string> => {
      const client = await json('POST', `${BASE}/api/v1/clients`, { name: 'C', currency: 'EUR' }, bearer(token));
      const invoice = await json('POST', `${BASE}/api/v1/invoices`, { client_id: client.json?.id, currency: 'EUR', line_items: [{ description: 'x', quantity: 1, unit_price: 100 }] }, bearer(token));
      if (invoice.status !== 201) throw new Error(`invoice: ${invoice.status} ${invoice.text}`);
      return String(invoice.json?.id);
    };
    const victimInvoice = await invoiceOf(victim.token);
    const hostileInvoice = await invoiceOf(hostile.token);
    // A value no reader can hold (past 2^53), as a bug or an older version could have written it: the
    // table's own bound is lifted for the trial, as only the schema owner could.
    await db.query(`ALTER TABLE invoices.invoices DROP CONSTRAINT invoices_amount_paid_in_range`);
    try {
      await db.query(`UPDATE invoices.invoices SET amount_paid = 9007199254740993 WHERE id = $1`, [parsePublicId('inv', hostileInvoice)]);
      // Reads of both organizations sent together, so that they share batches (EntityReader).
      const started = Date.now();
      const answers = await Promise.all(
        Array.from({ length: 120 }, (_, i) =>
          i % 2 === 0 ? json('GET', `${url}/${victimInvoice}`, undefined, bearer(victim.token)) : json('GET', `${url}/${hostileInvoice}`, undefined, bearer(hostile.token)),
        ),
      );
      const ms = Date.now() - started;
      const victims = answers.filter((_, i) => i % 2 === 0).map((a) => a.status);
      const unreadable = answers.filter((_, i) => i % 2 === 1);
      figure('15', 'unreadable row: the other organization\'s reads sharing its batches, answered 200', `${victims.filter((s) => s === 200).length} of ${victims.length} in ${ms} ms`);
      figure('15', 'unreadable row: its own reads', JSON.stringify(unreadable.reduce<Record<number, number>>((c, a) => ({ ...c, [a.status]: (c[a.status] ?? 0) + 1 }), {})));
      expect(victims).toEqual(Array(60).fill(200));
      expect(unreadable.map((a) => a.status)).toEqual(Array(60).fill(500));
      expect(unreadable.every((a) => String(a.headers['content-type']).startsWith('application/problem+json') && !/exceeds|range|stack/i.test(a.text))).toBe(true);
      expect(ms).toBeLessThan(DEADLINE_MS);
      // The organization's own list fails; the other's does not.
      expect((await json('GET', url, undefined, bearer(hostile.token))).status).toBe(500);
      expect((await json('GET', url, undefined, bearer(victim.token))).status).toBe(200);
    } finally {
      await db.query(`UPDATE invoices.invoices SET amount_paid = 0 WHERE id = $1`, [parsePublicId('inv', hostileInvoice)]);
      await db.query(`ALTER TABLE invoices.invoices ADD CONSTRAINT invoices_amount_paid_in_range CHECK (amount_paid <= 1000000000000)`);
    }

    // A stalled table (an operator's lock): every read is answered, 503 at the deadline, and the
    // other services go on; the first read after the lock is released is a 200.
    const locker = new Client({ connectionString: DB });
    await locker.connect();
    await locker.query('BEGIN');
    await locker.query('LOCK TABLE invoices.invoices IN ACCESS EXCLUSIVE MODE');
    try {
      const started = Date.now();
      const [read, list, other] = await Promise.all([
        json('GET', `${url}/${victimInvoice}`, undefined, bearer(victim.token)),
        json('GET', url, undefined, bearer(victim.token)),
        json('GET', `${BASE}/api/v1/clients?limit=1`, undefined, bearer(victim.token)),
      ]);
      const ms = Date.now() - started;
      figure('15', 'stalled table: read by id, list, another service', `${read.status}, ${list.status}, ${other.status} in ${ms} ms`, { deadline_ms: DEADLINE_MS });
      expect([read.status, list.status, other.status]).toEqual([503, 503, 200]);
      expect(read.headers['retry-after']).toBe('1');
      expect(ms).toBeGreaterThanOrEqual(DEADLINE_MS - 100);
      expect(ms).toBeLessThan(DEADLINE_MS + 2000);
    } finally {
      await locker.query('ROLLBACK');
      await locker.end();
    }
    const recovered = await until('reads after the lock', async () => (await json('GET', `${url}/${victimInvoice}`, undefined, bearer(victim.token))).status === 200, 15000, 100);
    figure('15', 'stalled table released: first 200 after', `${recovered} ms`);
    await instance.stop();
    services.delete('invoice-service-deadline');
  }, 180000);

  it('item 5: Redis slow or killed: token and refresh answer 503 temporarily_unavailable within 2 s, issue nothing unrecorded, and recover without a restart', async () => {
    const key = await newKey('redis');
    const before = await pairOf(key);
    const timed = async (call: () => Promise<RawAnswer>) => {
      const t = Date.now();
      const a = await call();
      return { status: a.status, error: a.json?.error, retryAfter: a.headers['retry-after'], ms: Date.now() - t };
    };
    const probe = async (label: string) => {
      const answers = [
        await timed(() => exchange(key)),
        await timed(() => refreshAt('refresh', before.refresh_token, key)),
        await timed(() => refreshAt('token', before.refresh_token, key)),
      ];
      const worst = Math.max(...answers.map((a) => a.ms));
      figure('5', `${label}: token/refresh answers`, answers.map((a) => `${a.status} ${String(a.error)} in ${a.ms} ms`).join('; '), { worst_ms: worst });
      for (const a of answers) expect({ status: a.status, error: a.error }).toEqual({ status: 503, error: 'temporarily_unavailable' });
      expect(worst).toBeLessThan(2000);
    };

    // Slow: every Redis reply held 3 s.
    redisProxy.delay(3000);
    try {
      await probe('Redis 3 s slow');
    } finally {
      redisProxy.restore();
    }
    const slowRecovery = await until('recovery after slow Redis', async () => (await exchange(key)).status === 200, 15000, 100);
    figure('5', 'Redis slow: recovered (first 200) after the latency ended', `${slowRecovery} ms`);

    // Killed: kill -9, then started again from its append-only file.
    await killRedis();
    try {
      await probe('Redis killed');
    } finally {
      await startRedis();
    }
    const killRecovery = await until('recovery after Redis restart', async () => (await exchange(key)).status === 200, 20000, 100);
    figure('5', 'Redis killed: recovered (first 200) after it was started again', `${killRecovery} ms`);
    // The pair issued before the outage is intact: its refresh token still rotates exactly once.
    const rotated = await refreshAt('refresh', before.refresh_token, key);
    expect(rotated.status).toBe(200);
    // Nothing was issued while Redis was unreachable: every access token ever issued to this key is
    // one whose session Redis holds (the ones above), so none can exist unrecorded.
    expect((await json('GET', `${DIRECT('invoice-service')}/api/v1/invoices`, undefined, bearer(String(rotated.json?.access_token)))).status).toBe(200);
  }, 120000);

  it('item 5: Postgres unreachable under a resource service: 503 within 2 s, ready turns down, recovers without a restart', async () => {
    const key = await newKey('postgres');
    const { access_token } = await pairOf(key);
    const url = `${DIRECT('expense-service')}/api/v1/expenses`;
    const body = { description: 'Taxi', amount: 100, currency: 'EUR', incurred_on: '2026-11-20' };
    expect((await json('POST', url, body, bearer(access_token))).status).toBe(201);
    pgProxy.cut();
    const t = Date.now();
    const write = await json('POST', url, body, bearer(access_token));
    const read = await json('GET', url, undefined, bearer(access_token));
    const ms = Date.now() - t;
    const ready = await json('GET', `${DIRECT('expense-service')}/health/ready`);
    figure('5', 'Postgres cut: expense-service write, read, readiness', `${write.status}, ${read.status}, ${ready.status} in ${ms} ms`, {
      retry_after: write.headers['retry-after'],
    });
    expect([write.status, read.status, ready.status]).toEqual([503, 503, 503]);
    expect(String(write.headers['content-type'])).toMatch(/^application\/problem\+json/);
    expect(ms).toBeLessThan(4000);
    pgProxy.restore();
    const recovered = await until('postgres recovery', async () => (await json('POST', url, body, bearer(access_token))).status === 201, 20000, 100);
    figure('5', 'Postgres restored: first 201 after', `${recovered} ms`);
  }, 60000);

  it('items 2 and 3: Kafka stopped during 50 reuse detections and 20 key revocations: 0 lost, all refused afterwards; a stale view fails closed and recovers', async () => {
    const reuseKeys = await Promise.all(Array.from({ length: 50 }, (_, i) => newKey(`reuse-${i}`)));
    const revokeKeys = await Promise.all(Array.from({ length: 20 }, (_, i) => newKey(`revoke-${i}`)));
    const steady = await newKey('steady');
    const reusePairs = await Promise.all(reuseKeys.map(pairOf));
    const revokePairs = await Promise.all(revokeKeys.map(pairOf));
    // Spend each reuse key's refresh token once now; spending it again below is the reuse.
    for (const [i, p] of reusePairs.entries()) expect((await refreshAt('refresh', p.refresh_token, reuseKeys[i])).status).toBe(200);
    const strictToken = (await pairOf(steady)).access_token;
    const strictUrl = `http://127.0.0.1:${STRICT_INVOICE_PORT}`;
    expect((await json('GET', `${strictUrl}/api/v1/invoices`, undefined, bearer(strictToken))).status).toBe(200);

    const outageStart = Date.now();
    await kafka('stop');
    const stopped = Date.now();
    // While the broker is down: reuse detections, key revocations, and ordinary exchanges.
    const reuses = await Promise.all(reusePairs.map((p) => refreshAt('refresh', p.refresh_token, reuseKeys[0])));
    const revokes = await Promise.all(revokeKeys.map(revokeKey));
    const exchanges = await Promise.all(Array.from({ length: 20 }, () => exchange(steady)));
    figure('2', 'with Kafka down: reuse detections answered invalid_grant', `${reuses.filter((r) => r.status === 400).length}/50`);
    figure('2', 'with Kafka down: key revocations answered 200', `${revokes.filter((r) => r.status === 200).length}/20`);
    figure('2', 'with Kafka down: token exchanges answered 200', `${exchanges.filter((r) => r.status === 200).length}/20`);
    expect(reuses.every((r) => r.status === 400)).toBe(true);
    expect(revokes.every((r) => r.status === 200)).toBe(true);
    expect(exchanges.every((r) => r.status === 200)).toBe(true);

    // Item 3: the strict instance (5 s bound) stops vouching for tokens; the others (30 s) still answer.
    const toStale = await until(
      'strict instance fails closed',
      async () => (await json('GET', `${strictUrl}/api/v1/invoices`, undefined, bearer(strictToken))).status === 503,
      STRICT_BOUND_MS + 10000,
      100,
    );
    const failedClosed = await json('GET', `${strictUrl}/api/v1/invoices`, undefined, bearer(strictToken));
    const strictReady = await json('GET', `${strictUrl}/health/ready`);
    const strictLive = await json('GET', `${strictUrl}/health/live`);
    figure('3', `stale view (bound ${STRICT_BOUND_MS} ms): answering 503 (first seen) after the broker was told to stop`, `${Date.now() - outageStart} ms`, {
      broker_stop_took_ms: stopped - outageStart,
      polled_ms: toStale,
      ready: strictReady.status,
      live: strictLive.status,
      retry_after: failedClosed.headers['retry-after'],
    });
    expect(String(failedClosed.headers['content-type'])).toMatch(/^application\/problem\+json/);
    expect(failedClosed.headers['retry-after']).toBeDefined();
    expect(strictReady.status).toBe(503);
    expect(strictLive.status).toBe(200);

    await kafka('start');
    const restarted = Date.now();
    figure('2', 'broker outage (stop to started again)', `${restarted - outageStart} ms`);
    const recovered = await until(
      'strict instance recovers',
      async () => (await json('GET', `${strictUrl}/api/v1/invoices`, undefined, bearer(strictToken))).status === 200,
      60000,
      100,
    );
    figure('3', 'stale view: accepting tokens again after the broker restarted', `${recovered} ms`);
    expect((await json('GET', `${strictUrl}/health/ready`)).status).toBe(200);

    // Every event reaches the topic (the outbox relays what was written during the outage).
    const wanted = new Set([...reuseKeys, ...revokeKeys].map((k) => k.id));
    const seen = await readKeys(wanted, outageStart, 60000);
    figure('2', 'revocation events on the topic after the outage', `${seen.size}/70`, { lost: 70 - seen.size, delivered_ms_after_restart: Date.now() - restarted });
    expect(seen.size).toBe(70);
    // ...and so does every audit record written meanwhile (ADR 0024): one per reuse, one per revocation.
    const audited = await readAuditRecords(wanted, outageStart, 60000);
    const expectedAudit = new Set([...reuseKeys.map((k) => `refresh_token.reuse_detected ${k.id}`), ...revokeKeys.map((k) => `api_key.revoked ${k.id}`)]);
    const missing = [...expectedAudit].filter((r) => !audited.has(r));
    figure('2', 'audit records on auth.audit.v1 after the outage', `${expectedAudit.size - missing.length}/70`, { lost: missing.length });
    expect(missing).toEqual([]);

    // Every resource service (and the strict instance) refuses all 70 keys' access tokens.
    const tokens = [...reusePairs, ...revokePairs].map((p) => p.access_token);
    const bases = [...RESOURCE_SERVICES.map((s) => DIRECT(s)), strictUrl];
    const paths = [...RESOURCES, 'invoices'];
    let lastStatuses: string[] = [];
    const refusedIn = await until(
      'every service refuses the revoked tokens',
      async () => {
        const statuses = await Promise.all(
          bases.flatMap((b, i) => tokens.map(async (t, j) => `${b} ${j} ${(await json('GET', `${b}/api/v1/${paths[i]}?limit=1`, undefined, bearer(t))).status}`)),
        );
        lastStatuses = statuses.filter((s) => !s.endsWith(' 401'));
        return lastStatuses.length === 0;
      },
      60000,
      200,
    ).catch((e: Error) => {
      throw new Error(`${e.message}; still not 401: ${lastStatuses.slice(0, 20).join(', ')} (${lastStatuses.length} in all)`);
    });
    figure('2', `all 70 keys refused by all ${bases.length} resource instances`, `${refusedIn} ms after the events were read`, { checks: tokens.length * bases.length });
  }, 300000);

  it('item 4: kill -9 under writes loses no committed write; a restarted service refuses, on its first request, a token revoked while it was down', async () => {
    const key = await newKey('restart');
    const victim = await newKey('victim');
    const { access_token } = await pairOf(key);
    const victimToken = (await pairOf(victim)).access_token;
    const url = `${DIRECT('client-service')}/api/v1/clients`;
    const before = await rowsOf('clients.clients');
    let created = 0;
    let failed = 0;
    let writing = true;
    const writers = Array.from({ length: 4 }, async (_, w) => {
      for (let i = 0; writing; i++) {
        const r = await json('POST', url, { name: `Load ${w}-${i}` }, bearer(access_token));
        if (r.status === 201) created += 1;
        else failed += 1;
        if (r.status !== 201) await sleep(20);
      }
    });
    await sleep(1500);
    await services.get('client-service')!.kill();
    await sleep(300);
    writing = false;
    await Promise.all(writers);
    const after = await rowsOf('clients.clients');
    figure('4', 'kill -9 under 4 writers: 201s received vs rows in the table', `${created} vs ${after - before}`, { refused_or_cut: failed });
    // Every 201 is a committed row; a write cut by the kill may have committed without its 201.
    expect(after - before).toBeGreaterThanOrEqual(created);
    expect(after - before - created).toBeLessThanOrEqual(4);

    // Revoked while the service is down; the restarted instance replays the topic before ready.
    expect((await revokeKey(victim)).status).toBe(200);
    await sleep(500);
    const p = start('client-service', PORTS['client-service'], 'client-service-restarted', envFor('client-service'));
    const readyMs = await p.waitReady(60000);
    const first = await json('GET', url, undefined, bearer(victimToken));
    figure('4', 'restarted client-service: ready after (replay included)', `${readyMs} ms`, { first_request_with_revoked_token: first.status });
    expect(first.status).toBe(401);
    expect((await json('GET', url, undefined, bearer(access_token))).status).toBe(200);
  }, 120000);

  it('item 16: kill -9 of a service under 16 writers with Idempotency-Keys: every committed row has its event on the topic (0 lost), and every cut request retried with its key ends in exactly one row', async () => {
    const key = await newKey('write-path');
    const { access_token } = await pairOf(key);
    const organization = String(claimsOf(access_token).org_id);
    const url = `${DIRECT('client-service')}/api/v1/clients`;
    const startedAt = Date.now();
    const answered = new Map<string, number>();
    let writing = true;
    let n = 0;
    const writers = Array.from({ length: 16 }, async () => {
      while (writing) {
        const idempotencyKey = `kill-${startedAt}-${n++}`;
        const r = await json('POST', url, { name: `Write ${idempotencyKey}` }, { ...bearer(access_token), 'idempotency-key': idempotencyKey });
        answered.set(idempotencyKey, r.status);
        if (r.status !== 201) await sleep(20);
      }
    });
    await sleep(2000);
    // The instance item 4 restarted (or the first, when this runs alone).
    await (services.get('client-service-restarted') ?? services.get('client-service'))!.kill();
    await sleep(300);
    writing = false;
    await Promise.all(writers);
    const p = start('client-service', PORTS['client-service'], 'client-service-restarted', envFor('client-service'));
    await p.waitReady(60000);
    // Every request that got no 201 (cut by the kill, or refused while the service was down) again,
    // with its key: the ones that had committed replay, the others create now.
    const cut = [...answered].filter(([, status]) => status !== 201).map(([k]) => k);
    const retried: Record<number, number> = {};
    for (const idempotencyKey of cut) {
      let r: RawAnswer;
      // The key's rate limit (100 a second) answers a fast loop 429: wait as it says.
      while ((r = await json('POST', url, { name: `Write ${idempotencyKey}` }, { ...bearer(access_token), 'idempotency-key': idempotencyKey })).status === 429) {
        await sleep(Number(r.headers['retry-after'] ?? 1) * 1000);
      }
      retried[r.status] = (retried[r.status] ?? 0) + 1;
    }
    // The organization's rows of this trial (item 4 wrote in it before).
    const { rows } = await db.query<{ id: string }>(`SELECT id FROM clients.clients WHERE organization_id = $1 AND name LIKE $2`, [
      parsePublicId('org', organization),
      `Write kill-${startedAt}-%`,
    ]);
    const ids = new Set(rows.map((r) => `cli_${r.id.replace(/-/g, '')}`));
    // This trial's events only: item 4 wrote clients in the same organization, and the instance it
    // restarted relays the last of them up to a second before this trial starts (seen in CI).
    const events = await readTopicSince(['127.0.0.1:9092'], 'invoicing.domain.v1', startedAt - 1000, 60000, ids.size, (message) => {
      const event = JSON.parse(String(message.value)) as { data?: { organization_id?: string; object?: { id?: string; name?: string } } };
      const ours = event.data?.organization_id === organization && String(event.data.object?.name ?? '').startsWith(`Write kill-${startedAt}-`);
      return ours ? (event.data!.object!.id ?? null) : null;
    });
    const lost = [...ids].filter((id) => !events.has(id)).length;
    const duplicates = [...events.values()].filter((e) => e.messages > 1).length;
    figure('16', 'kill -9 under 16 writers with keys: requests, 201s, rows, events missing, events sent twice', `${answered.size}, ${[...answered.values()].filter((s) => s === 201).length}, ${ids.size}, ${lost}, ${duplicates}`, { retried });
    expect(lost).toBe(0);
    // One row per key that ever got a 201; a key retried never made a second one.
    expect(ids.size).toBe(answered.size);
    expect(Object.keys(retried).filter((status) => status !== '201')).toEqual([]);
    // No event of a row that is not there (a create rolled back after its event went out).
    expect([...events.keys()].filter((id) => !ids.has(id))).toEqual([]);
  }, 180000);

  it('item 9: 60 s of mixed traffic (after a 60 s warm-up) while Kafka restarts once and a resource service restarts: no 5xx outside the documented 503 windows, no lost write, flat memory', async () => {
    const keys = await Promise.all(Array.from({ length: 4 }, (_, i) => newKey(`load-${i}`)));
    const pairs = await Promise.all(keys.map(pairOf));
    const seed = await json('POST', `${BASE}/api/v1/clients`, { name: 'Seed' }, bearer(pairs[0].access_token));
    const seedId = String(seed.json?.id);
    // Written: every resource whose objects reference no other object (each create stands alone).
    const writable = RESOURCES.filter((r) => RESOURCE_MANIFEST[r].references.length === 0);
    // Each service's schema and table are named by its resource (`clients.clients`).
    const tables = Object.fromEntries(writable.map((r) => [r, `${r}.${r}`]));
    const before = Object.fromEntries(await Promise.all(Object.entries(tables).map(async ([k, t]) => [k, await rowsOf(t)])));
    const written: Record<string, number> = Object.fromEntries(writable.map((r) => [r, 0]));
    const fiveXx: Array<{ at: number; what: string; status: number; staleView: boolean }> = [];
    const counts: Record<string, number> = {};
    const t0 = Date.now();
    const WARM_UP = 60000;
    const DURATION = 120000;
    let restartWindow: [number, number] | null = null;

    const record = (what: string, a: RawAnswer) => {
      counts[`${what} ${a.status}`] = (counts[`${what} ${a.status}`] ?? 0) + 1;
      if (a.status >= 500 || a.status === 0) {
        // ADR 0017: a resource service whose revocation feed is silent past its bound answers 503.
        const staleView = a.status === 503 && /revoked/.test(String(a.json?.detail));
        fiveXx.push({ at: Date.now() - t0, what, status: a.status, staleView });
      }
    };
    // RSS every 2 s from the end of the warm-up. It is a sawtooth: V8 hands ~30 MB back at a major
    // collection and grows again over the next 30-40 s (a series: 137 MB, 101 MB two seconds later,
    // 136 MB 45 s after that). A single reading at minute one and one at the end compared a trough
    // with a peak (+27 %) or a peak with a trough (-19 %) at random; a leak shows as higher peaks.
    // So each half of the measured minute is summed up by its highest reading, peak against peak.
    const memory: Record<string, { at: number; mb: number }[]> = {};
    const sampleMemory = () => {
      // The restarted product-service starts over; killed processes are gone.
      for (const [label, p] of services) {
        const mb = rssMb(p.pid);
        if (!label.startsWith('product-service') && mb !== null) (memory[label] ??= []).push({ at: Date.now() - t0, mb });
      }
    };
    let sampler: NodeJS.Timeout | undefined;
    const MEMORY_WINDOW = 30000;
    // Fixed rates, well inside the per-key limits: one loop per kind of traffic.
    const loop = async (everyMs: number, body: (i: number) => Promise<void>) => {
      for (let i = 0; Date.now() - t0 < DURATION; i++) {
        const next = t0 + i * everyMs;
        if (next > Date.now()) await sleep(next - Date.now());
        await body(i);
      }
    };
    const current = pairs.map((p) => ({ ...p }));
    const traffic = [
      loop(200, async (i) => record('exchange', await exchange(keys[i % 4], BASE))),
      // Each key's refresh chain is sequential: a refresh token is spent by the one call that made it.
      loop(200, async (i) => {
        const k = i % 4;
        const a = await refreshAt(i % 2 ? 'token' : 'refresh', current[k].refresh_token, keys[k], BASE);
        record('refresh', a);
        if (a.status === 200) current[k] = a.json as unknown as Pair;
      }),
      loop(25, async (i) => {
        // Lists of every resource, and every tenth read a get of one client.
        const r = i % 10 === 9 ? 'clients' : RESOURCES[i % RESOURCES.length];
        const path = i % 10 === 9 ? `/api/v1/clients/${seedId}` : `/api/v1/${r}?limit=20`;
        record(`read ${r}`, await json('GET', `${BASE}${path}`, undefined, bearer(current[i % 4].access_token)));
      }),
      loop(50, async (i) => {
        const kind = writable[i % writable.length];
        const a = await json('POST', `${BASE}/api/v1/${kind}`, minimalCreate(kind, `Load ${i}`), bearer(current[i % 4].access_token));
        record(`write ${kind}`, a);
        if (a.status === 201) written[kind] += 1;
      }),
    ];
    let kafkaWindow: [number, number] = [0, 0];
    const faults = (async () => {
      await sleep(WARM_UP);
      sampleMemory();
      sampler = setInterval(sampleMemory, 2000);
      await sleep(5000);
      const stopAt = Date.now() - t0;
      await kafka('stop');
      await sleep(2000);
      await kafka('start');
      kafkaWindow = [stopAt, Date.now() - t0];
      figure('9', 'Kafka stopped and started again', `${kafkaWindow[0]}-${kafkaWindow[1]} ms`);
      await sleep(10000);
      const product = services.get('product-service')!;
      const from = Date.now() - t0;
      await product.stop();
      const restarted = start('product-service', PORTS['product-service'], 'product-service-load', envFor('product-service'));
      await restarted.waitReady(60000);
      restartWindow = [from, Date.now() - t0];
      figure('9', 'product-service restart window (SIGTERM to ready)', `${restartWindow[0]}-${restartWindow[1]} ms`);
    })();
    await Promise.all([...traffic, faults]);
    clearInterval(sampler);
    sampleMemory();

    const after = Object.fromEntries(await Promise.all(Object.entries(tables).map(async ([k, t]) => [k, await rowsOf(t)])));
    const inRestart = (e: { at: number; what: string }) =>
      /products$/.test(e.what) && restartWindow !== null && e.at >= restartWindow[0] && e.at <= restartWindow[1] + 1000;
    const outside = fiveXx.filter((e) => !inRestart(e) && !e.staleView);
    const stale = fiveXx.filter((e) => e.staleView);
    const total = Object.values(counts).reduce((a, b) => a + b, 0);
    figure('9', 'requests in 120 s', total, { counts });
    figure('9', '5xx outside the documented windows', outside.length, { first: outside.slice(0, 5) });
    figure('9', '5xx on product routes during its restart (gateway: upstream unavailable)', fiveXx.filter(inRestart).length);
    figure(
      '9',
      '503 from a stale revocation view (ADR 0017)',
      stale.length,
      stale.length ? { from_ms: stale[0].at, to_ms: stale[stale.length - 1].at, kafka_window_ms: kafkaWindow } : { kafka_window_ms: kafkaWindow },
    );
    for (const k of Object.keys(tables)) figure('9', `writes to ${k}: 201s vs new rows`, `${written[k]} vs ${after[k] - before[k]}`);
    const end = Date.now() - t0;
    const peak = (samples: { at: number; mb: number }[]) => (samples.length ? Math.max(...samples.map((m) => m.mb)) : undefined);
    const peaks: Record<string, readonly [number, number | undefined]> = {};
    for (const [label, samples] of Object.entries(memory)) {
      const first = peak(samples.filter((m) => m.at <= WARM_UP + MEMORY_WINDOW));
      // Gone before the end (killed): no last window, nothing to compare.
      if (first !== undefined) peaks[label] = [first, peak(samples.filter((m) => m.at >= end - MEMORY_WINDOW))];
    }
    const growth = Object.fromEntries(
      Object.entries(peaks).map(([label, [first, last]]) => [label, `${first} -> ${last ?? '?'} MB (${last === undefined ? '?' : Math.round(((last - first) / first) * 100)} %)`]),
    );
    figure('9', 'RSS from minute one to the end (highest reading of each half of the measured minute)', JSON.stringify(growth));
    figure('9', 'RSS series (s: MB)', JSON.stringify(Object.fromEntries(Object.entries(memory).map(([l, m]) => [l, m.map((x) => `${Math.round(x.at / 1000)}:${x.mb}`).join(' ')]))));
    expect(outside).toEqual([]);
    for (const k of Object.keys(tables)) expect({ k, rows: after[k] - before[k] }).toEqual({ k, rows: written[k] });
    for (const [label, [first, last]] of Object.entries(peaks)) {
      if (last !== undefined) expect({ label, within: last <= first * 1.2 }).toEqual({ label, within: true });
    }
  }, 400000);
});

/**
 * The smallest body a create of `resource` takes: the required fields of the manifest's sample
 * (which validates), the field it shows set to `label` (a name or a description).
 */
function minimalCreate(resource: Resource, label: string): Json {
  const { createSchema, sample } = RESOURCE_MANIFEST[resource];
  const required: readonly string[] = 'required' in createSchema ? createSchema.required : [];
  const body: Json = Object.fromEntries(Object.entries(sample.create).filter(([field]) => required.includes(field)));
  return typeof body[sample.shown] === 'string' ? { ...body, [sample.shown]: label } : body;
}

/** Collects, from `sinceMs`, the audit records (`<type> <api key id>`) of the keys of `wanted` on the audit stream, each a valid event. */
function readAuditRecords(wanted: Set<string>, sinceMs: number, waitMs: number): ReturnType<typeof readTopicSince> {
  return readTopicSince(['127.0.0.1:9092'], AUDIT_TOPIC, sinceMs, waitMs, wanted.size, (message) => {
    const event = validateAuditEvent(JSON.parse(message.value?.toString() ?? 'null'));
    return event.ok && event.value.data.api_key_id && wanted.has(event.value.data.api_key_id) ? `${event.value.data.type} ${event.value.data.api_key_id}` : null;
  });
}

/** Collects, from `sinceMs`, the API key ids of `wanted` that appear as keys on the revocations topic. */
function readKeys(wanted: Set<string>, sinceMs: number, waitMs: number): ReturnType<typeof readTopicSince> {
  return readTopicSince(['127.0.0.1:9092'], REVOCATIONS_TOPIC, sinceMs, waitMs, wanted.size, (message) => {
    const id = message.key?.toString();
    return id && wanted.has(id) ? id : null;
  });
}


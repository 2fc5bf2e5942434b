import { parsePublicId, validateRevocationEvent } from '@invoicing/contracts';
import Redis, { Cluster } from 'ioredis';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { uuidv7 } from 'uuidv7';
import { RevocationRelay } from '../revocation/outbox-relay';
import { RevocationOutbox } from '../revocation/revocation-outbox.service';
import { AuthTestApp, decodeJwt, postJson, startAuthTestApp } from '../testing/auth-test-app';
import { keySlot } from './key-slot';
import { newRefreshToken } from '../keys/credential-format';
import { REDIS } from './session-store';

/**
 * The auth service on a real Redis Cluster of three primaries with one replica each (ADR 0018;
 * `tools/infra/redis-cluster.sh`, started by tools/infra/up.sh), with real Postgres and Kafka:
 * exchange, rotation, reuse detection, the concurrent-refresh race, RFC 7009 revocation, the failure
 * throttle and the pending sweep. A Lua script whose keys spanned two slots would fail here with
 * CROSSSLOT; a client that talked to one node only would fail the last test, which finds the keys on
 * every primary and none on the single Redis. Which ports are the primaries is asked of the cluster
 * (CLUSTER NODES): 7001-7003 as created, others after a failover.
 */
const NODE_PORTS = [7001, 7002, 7003, 7004, 7005, 7006];
const CLUSTER_URL = `redis-cluster://${NODE_PORTS.map((port) => `127.0.0.1:${port}`).join(',')}`;
const REUSE = 'The refresh token was already used; every session of this API key is revoked.';

let app: AuthTestApp;
let db: DataSource;
/** The app's own client. */
let cluster: Cluster;
/** The primaries' ports, ascending (found with CLUSTER NODES). */
let masterPorts: number[];
/** Plain connections to each primary, and to the single Redis the other suites use. */
let direct: Redis[];
let single: Redis;
/** Slot ranges of each primary, in the order of masterPorts. */
let ranges: Array<Array<[number, number]>>;

const plain = (port: number) => new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 1, enableOfflineQueue: true });

/** Every node in cluster_state:ok, and the primaries (nodes flagged master that serve slots) as one of them sees them. */
async function discover(): Promise<{ problem: string | null; primaries: number[] }> {
  const nodes = NODE_PORTS.map(plain);
  try {
    for (const node of nodes) {
      const info = await node.cluster('INFO').catch((e: Error) => e.message);
      if (!/cluster_state:ok/.test(String(info))) return { problem: `127.0.0.1:${node.options.port}: ${String(info).split('\n')[0]}`, primaries: [] };
    }
    // "<id> <ip:port@cport> <flags> <master-id> <ping> <pong> <epoch> <link> [slots...]"
    const lines = String(await nodes[0].cluster('NODES')).trim().split('\n');
    const primaries = lines
      .map((line) => line.trim().split(' '))
      .filter((f) => f[2].split(',').includes('master') && !f[2].includes('fail') && f.length > 8)
      .map((f) => Number(f[1].split('@')[0].split(':')[1]))
      .sort((a, b) => a - b);
    return { problem: primaries.length === 3 ? null : `${primaries.length} primaries serve slots`, primaries };
  } finally {
    nodes.forEach((node) => node.disconnect());
  }
}

beforeAll(async () => {
  single = new Redis({ host: '127.0.0.1', port: 6379, maxRetriesPerRequest: 1 });
  const { problem, primaries } = await discover();
  if (problem) throw new Error(`no healthy Redis Cluster on 127.0.0.1:7001-7006 (${problem}); run bash tools/infra/redis-cluster.sh start`);
  masterPorts = primaries;
  direct = masterPorts.map(plain);
  const slots = (await direct[0].cluster('SLOTS')) as unknown as Array<[number, number, [string, number]]>;
  ranges = masterPorts.map((port) => slots.filter((s) => Number(s[2][1]) === port).map((s): [number, number] => [s[0], s[1]]));

  app = await startAuthTestApp({ REDIS_URL: CLUSTER_URL });
  db = app.service.app.get(DataSource);
  cluster = app.service.app.get(REDIS);
  // The pending-sweep test takes the scan's steps itself: stop the timer, let the start-up sweep end.
  const relay = app.service.app.get(RevocationRelay) as unknown as { sweeper: NodeJS.Timeout; sweeping: Promise<void> | null };
  clearInterval(relay.sweeper);
  await relay.sweeping;
});

afterAll(async () => {
  await app?.close();
  // Leave no test keys behind (single-key UNLINKs: keys of different slots may share a node).
  for (const node of direct ?? []) {
    const keys = await scanAll(node, `${app?.config.REDIS_KEY_PREFIX ?? 'none:'}*`).catch(() => []);
    if (keys.length > 0) await Promise.all(keys.map((k) => node.unlink(k)));
    node.disconnect();
  }
  single?.disconnect();
});

type Key = Awaited<ReturnType<AuthTestApp['createKey']>>;
type Pair = { access_token: string; refresh_token: string; scope: string };

const basic = (key: Key) => `Basic ${Buffer.from(`${key.clientId}:${key.clientSecret}`).toString('base64')}`;
const token = (body: unknown, headers?: Record<string, string>) => postJson(`${app.baseUrl}/api/v1/auth/token`, body, headers);
const refresh = (refreshToken: string) => postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: refreshToken });
const prefixed = (suffix: string) => `${app.config.REDIS_KEY_PREFIX}${suffix}`;
const tagOf = (key: Key) => parsePublicId('key', key.id) as string;

async function exchange(key: Key): Promise<Pair> {
  const r = await token({ client_id: key.clientId, client_secret: key.clientSecret, grant_type: 'client_credentials' });
  expect(r.status).toBe(200);
  return r.body as unknown as Pair;
}

async function revoke(params: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.baseUrl}/api/v1/auth/revoke`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
  return { status: response.status, text: await response.text() };
}

async function outboxEvents(key: Key) {
  const rows: Array<{ payload: unknown }> = await db.query(`SELECT payload FROM auth.outbox WHERE message_key = $1 ORDER BY id`, [key.id]);
  return rows.map((r) => {
    const event = validateRevocationEvent(r.payload);
    if (!event.ok) throw new Error(`invalid event in the outbox: ${JSON.stringify(r.payload)}`);
    return event.value;
  });
}

async function scanAll(node: Redis, match: string): Promise<string[]> {
  const keys: string[] = [];
  let cursor = '0';
  do {
    const [next, batch] = await node.scan(cursor, 'MATCH', match, 'COUNT', 1000);
    keys.push(...batch);
    cursor = next;
  } while (cursor !== '0');
  return keys;
}

/** The master (index into masterPorts) that serves a key's slot. */
const masterOf = (key: string) => ranges.findIndex((r) => r.some(([from, to]) => keySlot(key) >= from && keySlot(key) <= to));

it('talks to the three primaries through a cluster client, and computes slots as the cluster does', async () => {
  expect(cluster).toBeInstanceOf(Cluster);
  expect(cluster.status).toBe('ready');
  expect(
    cluster
      .nodes('master')
      .map((n) => n.options.port)
      .sort(),
  ).toEqual(masterPorts);
  expect(ranges.map((r) => r.length > 0)).toEqual([true, true, true]);
  const uuid = randomUUID();
  for (const key of [prefixed(`sess:{${uuid}}`), prefixed(`rt:${'f'.repeat(64)}`), prefixed('thr:ip:127.0.0.1')]) {
    expect(await direct[0].cluster('KEYSLOT', key)).toBe(keySlot(key));
  }
});

it('exchanges credentials and rotates: the family lives on the master of its key, in one slot', async () => {
  const key = await app.createKey();
  const first = await exchange(key);
  expect(first).toMatchObject({ refresh_token: expect.stringMatching(/^rt_live_/), scope: 'read:invoices write:invoices read:clients' });
  expect(decodeJwt(first.access_token).payload).toMatchObject({ sub: key.id, client_id: key.clientId, sid: expect.stringMatching(/^ses_/) });
  const second = await refresh(first.refresh_token);
  expect(second.status).toBe(200);
  expect(decodeJwt(second.body.access_token as string).payload.sid).toBe(decodeJwt(first.access_token).payload.sid);

  const sess = prefixed(`sess:{${tagOf(key)}}`);
  const sexp = prefixed(`sexp:{${tagOf(key)}}`);
  expect(keySlot(sess)).toBe(keySlot(sexp));
  const owner = masterOf(sess);
  for (let i = 0; i < direct.length; i++) {
    // Only the owner holds them (another master would answer MOVED, not 0: ask with a plain EXISTS).
    const exists = await direct[i].exists(sess, sexp).catch((e: Error) => e.message);
    expect({ port: masterPorts[i], exists }).toEqual({ port: masterPorts[i], exists: i === owner ? 2 : expect.stringMatching(/^MOVED /) });
  }
  expect(await cluster.zcard(sexp)).toBe(1);
});

it('detects reuse: a spent token revokes every session of the key, in one script', async () => {
  const key = await app.createKey();
  const a = await exchange(key);
  const b = await exchange(key);
  const a2 = await refresh(a.refresh_token);
  expect(a2.status).toBe(200);
  const reuse = await refresh(a.refresh_token);
  expect(reuse.body).toEqual({ error: 'invalid_grant', error_description: REUSE });
  expect((await refresh(a2.body.refresh_token as string)).status).toBe(400);
  expect((await refresh(b.refresh_token)).status).toBe(400);
  const events = await outboxEvents(key);
  expect(events).toHaveLength(1);
  expect(events[0].data.reason).toBe('refresh_token_reuse');
  expect([...events[0].data.session_ids].sort()).toEqual([decodeJwt(a.access_token).payload.sid, decodeJwt(b.access_token).payload.sid].sort());
  // Nothing is left pending in Redis once the outbox holds it.
  expect(await cluster.llen(prefixed(`pend:{${tagOf(key)}}`))).toBe(0);
  // A new exchange starts a working session.
  expect((await refresh((await exchange(key)).refresh_token)).status).toBe(200);
});

it('lets exactly one of 20 concurrent refreshes with one token win (25 rounds); the losers are reuse and end the family', async () => {
  const rounds = 25;
  const outcomes: string[] = [];
  const keys: Array<{ key: Key; sid: string }> = [];
  for (let round = 0; round < rounds; round++) {
    const key = await app.createKey();
    const pair = await exchange(key);
    const results = await Promise.all(Array.from({ length: 20 }, () => refresh(pair.refresh_token)));
    const winners = results.filter((r) => r.status === 200);
    const refused = results.filter((r) => r.status === 400 && r.body.error === 'invalid_grant');
    // The first loser to reach the script finds a spent token (reuse) and revokes the family; the
    // others find it gone.
    const reuse = refused.filter((r) => r.body.error_description === REUSE);
    const winnerStillWorks = winners.length === 1 ? (await refresh(winners[0].body.refresh_token as string)).status : null;
    outcomes.push(`${winners.length} won, ${refused.length} refused, ${reuse.length} reuse, winner's token then ${winnerStillWorks}`);
    keys.push({ key, sid: decodeJwt(pair.access_token).payload.sid as string });
  }
  expect(outcomes).toEqual(Array.from({ length: rounds }, () => "1 won, 19 refused, 1 reuse, winner's token then 400"));
  for (const { key, sid } of keys) {
    const events = await outboxEvents(key);
    expect(events.map((e) => [e.data.reason, e.data.session_ids])).toEqual([['refresh_token_reuse', [sid]]]);
  }
});

it('revokes a session by its refresh token or its access token (RFC 7009), once', async () => {
  const key = await app.createKey();
  const ended = await exchange(key);
  const kept = await exchange(key);
  const r = await revoke({ token: ended.refresh_token, token_type_hint: 'refresh_token' }, { authorization: basic(key) });
  expect(r).toEqual({ status: 200, text: '' });
  expect((await refresh(ended.refresh_token)).status).toBe(400);
  const keptNext = await refresh(kept.refresh_token);
  expect(keptNext.status).toBe(200);
  // Again, by its access token: already revoked, nothing more is published (the marker is in the key's slot).
  expect((await revoke({ token: ended.access_token }, { authorization: basic(key) })).status).toBe(200);
  const sid = decodeJwt(ended.access_token).payload.sid as string;
  expect(await cluster.exists(prefixed(`rses:{${tagOf(key)}}:${sid}`))).toBe(1);

  // The other session, by its access token with client_secret_post.
  const viaAccess = await revoke({ token: keptNext.body.access_token as string, client_id: key.clientId, client_secret: key.clientSecret });
  expect(viaAccess.status).toBe(200);
  expect((await refresh(keptNext.body.refresh_token as string)).status).toBe(400);

  const events = await outboxEvents(key);
  expect(events.map((e) => [e.data.reason, e.data.session_ids])).toEqual([
    ['session_revoked', [sid]],
    ['session_revoked', [decodeJwt(kept.access_token).payload.sid]],
  ]);
  // Another key's credentials change nothing.
  const other = await app.createKey();
  const theirs = await exchange(other);
  expect((await revoke({ token: theirs.refresh_token }, { authorization: basic(key) })).status).toBe(200);
  expect((await refresh(theirs.refresh_token)).status).toBe(200);
});

it('throttles failed client authentication with 429 and Retry-After', async () => {
  const victim = await app.createKey();
  const other = await app.createKey();
  const bad = { client_id: victim.clientId, client_secret: other.clientSecret, grant_type: 'client_credentials' };
  for (let i = 0; i < app.config.AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT_ADDRESS; i++) expect((await token(bad)).status).toBe(401);
  const limited = await token(bad);
  expect(limited.status).toBe(429);
  expect(limited.body.error).toBe('temporarily_unavailable');
  expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
  // The refusing counter is this client at this address; the one across addresses only watches.
  const limit = String(app.config.AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT_ADDRESS);
  expect(await cluster.get(prefixed(`thr:cl-ip:${victim.clientId}:127.0.0.1`))).toBe(limit);
  expect(await cluster.pttl(prefixed(`thr:cl-ip:${victim.clientId}:127.0.0.1`))).toBeGreaterThan(0);
  expect(await cluster.get(prefixed(`thr:cl:${victim.clientId}`))).toBe(limit);
  // Other clients are not affected.
  await exchange(other);
});

it('finds orphaned pending revocations on every master with a bounded, resumable scan', async () => {
  // One orphan on each master: what a session script leaves when its process dies before the outbox insert.
  const orphans: Array<{ key: Key; sid: string; pend: string }> = [];
  for (let master = 0; master < masterPorts.length; master++) {
    let key: Key;
    do key = await app.createKey();
    while (masterOf(prefixed(`pend:{${tagOf(key)}}`)) !== master);
    const sid = `ses_${randomUUID().replace(/-/g, '')}`;
    const pend = prefixed(`pend:{${tagOf(key)}}`);
    await cluster.rpush(
      pend,
      JSON.stringify({
        event_id: uuidv7(),
        reason: 'refresh_token_reuse',
        session_ids: [sid],
        revoked_at: String(Date.now()),
        org: parsePublicId('org', key.organizationPublicId),
        cid: key.clientId,
      }),
    );
    orphans.push({ key, sid, pend });
  }

  const masters = cluster.nodes('master');
  const spies = masters.map((node) => jest.spyOn(node, 'scan'));
  const pending = async () => (await Promise.all(orphans.map((o) => cluster.llen(o.pend)))).reduce((a, b) => a + b);
  try {
    let moved = 0;
    for (let sweeps = 0; sweeps < 2000 && (await pending()) > 0; sweeps++) {
      const before = spies.map((s) => s.mock.calls.length);
      moved += await app.service.app.get(RevocationOutbox).sweep(2);
      // Bounded: at most the steps it was given, across all masters.
      expect(spies.map((s, i) => s.mock.calls.length - before[i]).reduce((a, b) => a + b)).toBeLessThanOrEqual(2);
    }
    expect(moved).toBeGreaterThanOrEqual(orphans.length);
    // Resumable: on each master, every step starts from the cursor its previous step returned (or '0').
    for (const spy of spies) {
      const calls = spy.mock.calls;
      for (let i = 1; i < calls.length; i++) {
        const previous = (await spy.mock.results[i - 1].value) as [string, string[]];
        expect(String(calls[i][0])).toBe(previous[0]);
      }
      // Every master was walked.
      expect(calls.length).toBeGreaterThan(0);
    }
  } finally {
    spies.forEach((s) => s.mockRestore());
  }
  expect(await pending()).toBe(0);
  for (const { key, sid } of orphans) {
    const events = await outboxEvents(key);
    expect(events.map((e) => e.data.session_ids)).toEqual([[sid]]);
  }
});

it('stored the keys on every master of the cluster, and none on the single Redis', async () => {
  const match = `${app.config.REDIS_KEY_PREFIX}*`;
  const perMaster = await Promise.all(direct.map((node) => scanAll(node, match)));
  expect(perMaster.map((keys) => keys.length > 0)).toEqual([true, true, true]);
  // Each key sits on the master that serves its slot: the client routed every command by slot.
  for (let i = 0; i < perMaster.length; i++) {
    for (const key of perMaster[i]) expect({ key, master: masterOf(key) }).toEqual({ key, master: i });
  }
  const kinds = new Set(perMaster.flat().map((k) => k.slice(app.config.REDIS_KEY_PREFIX.length).split(/[:{]/)[0]));
  expect([...kinds].sort()).toEqual(expect.arrayContaining(['rses', 'rt', 'sess', 'sexp', 'thr']));
  expect(await scanAll(single, match)).toEqual([]);
});

describe('with no node of the cluster reachable', () => {
  let down: AuthTestApp;

  beforeAll(async () => {
    // Closed ports stand for the outage; the real cluster is untouched.
    down = await startAuthTestApp({ REDIS_URL: 'redis-cluster://127.0.0.1:7191,127.0.0.1:7192' });
  });

  afterAll(async () => {
    await down?.close();
  });

  it('starts, answers 503 temporarily_unavailable (never 500), and reports not ready', async () => {
    const key = await down.createKey();
    const exchanged = await postJson(`${down.baseUrl}/api/v1/auth/token`, {
      client_id: key.clientId,
      client_secret: key.clientSecret,
      grant_type: 'client_credentials',
    });
    expect(exchanged.status).toBe(503);
    expect(exchanged.body.error).toBe('temporarily_unavailable');
    expect(exchanged.headers.get('retry-after')).toBe('1');
    const refreshed = await postJson(`${down.baseUrl}/api/v1/auth/refresh`, { refresh_token: newRefreshToken() });
    expect(refreshed.status).toBe(503);
    const ready = await fetch(`${down.baseUrl}/health/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({ checks: { postgres: 'up', redis: 'down' } });
  });
});

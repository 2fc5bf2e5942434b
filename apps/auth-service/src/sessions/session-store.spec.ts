import { DependencyUnavailableError, isDependencyFailure } from '@invoicing/service-kit';
import { randomUUID } from 'node:crypto';
import { DashboardSessions } from '../settings/dashboard-sessions';
import type { AuthConfig } from '../config/config';
import { FailureThrottle } from './failure-throttle';
import { keySlot } from './key-slot';
import type { RedisClient } from './redis-connection';
import { CREATE_SESSION, REVOKE_ALL_SESSIONS, REVOKE_SESSION, ROTATE_SESSION, SET_SECRET_FLOOR } from './session-scripts';
import { REVOCATION_WAIT_TIMEOUT_MS, SessionStore } from './session-store';

/**
 * On a Redis Cluster every command, and above all every Lua script, must name keys of one slot
 * (else CROSSSLOT), and a script must declare in KEYS every key it touches (ADR 0003, 0018). These
 * specs run the real store, throttle and settings sessions against a recording fake and check the
 * keys of every command they send; `keySlot` is checked against slots Redis itself computed.
 */

/** Plain commands the code sends, and how many of their leading arguments are keys. */
const PLAIN_COMMAND_KEYS: Record<string, number> = { set: 1, get: 1, getex: 1, del: 1, hget: 1, lrem: 1, lrange: 1, pttl: 1, wait: 0 };

interface Call {
  command: string;
  keys: string[];
  /** The arguments after the keys (recorded for plain commands and scripts, not in a transaction). */
  args?: unknown[];
  /** The pipeline it was sent in (a count), if any. */
  pipeline?: number;
}

interface Recorder {
  redis: RedisClient;
  calls: Call[];
  scripts: Map<string, { numberOfKeys: number; lua: string }>;
  replies: Record<string, unknown>;
  /** Commands that fail, with this error (alone or in a pipeline). */
  failures: Record<string, Error>;
}

/** A Redis whose every command records its keys; an unknown command fails the spec (declare its keys above). */
function recordingRedis(): Recorder {
  const calls: Call[] = [];
  const scripts = new Map<string, { numberOfKeys: number; lua: string }>();
  const replies: Record<string, unknown> = {};
  const failures: Record<string, Error> = {};
  let pipelines = 0;
  const record = (command: string, args: unknown[], pipeline?: number) => {
    const keys = scripts.get(command)?.numberOfKeys ?? PLAIN_COMMAND_KEYS[command];
    if (keys === undefined) throw new Error(`unexpected Redis command ${command}: declare how many keys it takes`);
    calls.push({ command, keys: args.slice(0, keys).map(String), args: args.slice(keys), pipeline });
  };
  const target: Record<string, unknown> = {
    isCluster: false,
    defineCommand: (name: string, definition: { numberOfKeys: number; lua: string }) => scripts.set(name, definition),
    // A transaction: all its commands are one call, whose keys must share a slot too.
    multi: () => {
      const queued: Call[] = [];
      const chain = new Proxy(
        {},
        {
          get: (_t, prop: string) =>
            prop === 'exec'
              ? async () => {
                  calls.push({ command: `multi(${queued.map((q) => q.command).join(',')})`, keys: queued.flatMap((q) => q.keys) });
                  return queued.map(() => [null, 1]);
                }
              : (...args: unknown[]) => {
                  queued.push({ command: prop, keys: [String(args[0])] });
                  return chain;
                },
        },
      );
      return chain;
    },
    // A pipeline: its commands are recorded one by one, marked with the pipeline they went in.
    pipeline: () => {
      const queued: Array<[string, unknown[]]> = [];
      const chain: unknown = new Proxy(
        {},
        {
          get: (_t, prop: string) =>
            prop === 'exec'
              ? async () => {
                  const id = ++pipelines;
                  for (const [command, args] of queued) record(command, args, id);
                  return queued.map(([command]) => [failures[command] ?? null, replies[command] ?? null]);
                }
              : (...args: unknown[]) => {
                  queued.push([prop, args]);
                  return chain;
                },
        },
      );
      return chain;
    },
  };
  const redis = new Proxy(target, {
    get: (t, prop) => {
      if (typeof prop !== 'string' || prop in t) return t[prop as string];
      return async (...args: unknown[]) => {
        record(prop, args);
        if (failures[prop]) throw failures[prop];
        return replies[prop] ?? null;
      };
    },
  }) as unknown as RedisClient;
  return { redis, calls, scripts, replies, failures };
}

function config(prefix: string, waitReplicas = 0): AuthConfig {
  return {
    REDIS_KEY_PREFIX: prefix,
    AUTH_MAX_SESSIONS_PER_KEY: 50_000,
    AUTH_THROTTLE_WINDOW_SECONDS: 60,
    REDIS_WAIT_REPLICAS: waitReplicas,
    REDIS_WAIT_TIMEOUT_MS: 200,
  } as AuthConfig;
}

const pendingJson = (sid: string) =>
  JSON.stringify({ event_id: randomUUID(), reason: 'refresh_token_reuse', session_ids: [sid], revoked_at: '1', org: randomUUID(), cid: 'ak_live_x' });

/** Every command SessionStore sends, for one API key and session. */
async function driveSessionStore(store: SessionStore, recorder: Recorder, apiKeyUuid: string): Promise<void> {
  const sessionId = `ses_${randomUUID().replace(/-/g, '')}`;
  const pointer = { apiKeyUuid, sessionId };
  const hash = 'a'.repeat(64);
  const common = { organizationId: randomUUID(), clientId: 'ak_live_x', now: 1_000, eventId: randomUUID() };
  recorder.replies.authCreateSession = 1;
  // Also writes the new token's pointer (rt:<hash>), as rotate does.
  await store.create({ ...common, apiKeyUuid, sessionId, refreshHash: hash, refreshExpiresAt: 2_000, scope: 'read:invoices', secretGeneration: 0 });
  recorder.replies.get = `${apiKeyUuid} ${sessionId}`;
  await store.findPointer(hash);
  recorder.replies.hget = JSON.stringify({ sc: 'read:invoices' });
  await store.sessionScope(pointer);
  recorder.replies.authRotateSession = ['rotated', 'read:invoices', common.organizationId, common.clientId];
  await store.rotate({ pointer, presentedHash: hash, newHash: 'b'.repeat(64), newExpiresAt: 3_000, now: 1_500, eventId: common.eventId });
  recorder.replies.authRotateSession = ['reuse', pendingJson(sessionId)];
  const reuse = await store.rotate({ pointer, presentedHash: hash, newHash: 'c'.repeat(64), newExpiresAt: 3_000, now: 1_500, eventId: common.eventId });
  if (reuse.kind === 'reuse') await store.ackPending(reuse.pending);
  recorder.replies.authRevokeAllSessions = pendingJson(sessionId);
  for (const markKeyRevoked of [true, false]) {
    await store.revokeAll({ ...common, apiKeyUuid, reason: 'revoked_by_user', markKeyRevoked, markerTtlMs: 1_000, secretFloor: markKeyRevoked ? undefined : 1 });
  }
  recorder.replies.authSetSecretFloor = 1;
  await store.raiseSecretFloor(apiKeyUuid, 2);
  recorder.replies.authRevokeSession = pendingJson(sessionId);
  for (const evenIfGone of [true, false]) {
    await store.revokeSession({ ...common, apiKeyUuid, sessionId, evenIfGone, markerTtlMs: 1_000 });
  }
}

describe(keySlot.name, () => {
  it('computes the slots Redis computes (CLUSTER KEYSLOT), hash tags included', () => {
    // Each value is what CLUSTER KEYSLOT answered on Redis 7.0.
    const slots: Record<string, number> = {
      '123456789': 12739,
      somekey: 11058,
      'foo{hash_tag}': 2515,
      'foo{}{bar}': 8363, // an empty tag: the whole key is hashed
      'foo{{bar}}zap': 4015, // the tag is "{bar"
      'foo{bar}{zap}': 5061, // only the first tag counts
      'é{x': 8265, // UTF-8 bytes; an unclosed brace is no tag
    };
    for (const [key, slot] of Object.entries(slots)) expect({ key, slot: keySlot(key) }).toEqual({ key, slot });
    expect(keySlot('{user1000}.following')).toBe(keySlot('{user1000}.followers'));
  });
});

describe('Redis Cluster slots of every command', () => {
  const prefixes = ['auth:', 'test:1a2b3c4d:', ''];

  it('SessionStore: all KEYS of every script, and of every other command, share one slot: the API key tag', async () => {
    let scriptCalls = 0;
    for (const prefix of prefixes) {
      const recorder = recordingRedis();
      const store = new SessionStore(recorder.redis, config(prefix));
      // Many keys, so that tagged keys of different API keys land in many different slots.
      for (let i = 0; i < 25; i++) {
        const apiKeyUuid = randomUUID();
        recorder.calls.length = 0;
        await driveSessionStore(store, recorder, apiKeyUuid);
        const commands = new Set(recorder.calls.map((c) => c.command));
        expect(commands).toEqual(
          new Set(['authCreateSession', 'set', 'get', 'hget', 'authRotateSession', 'lrem', 'authRevokeAllSessions', 'authRevokeSession', 'authSetSecretFloor']),
        );
        for (const call of recorder.calls) {
          const slots = new Set(call.keys.map(keySlot));
          expect({ command: call.command, keys: call.keys, slots: slots.size }).toEqual({ command: call.command, keys: call.keys, slots: 1 });
          const script = recorder.scripts.get(call.command);
          if (!script) continue;
          scriptCalls++;
          expect(call.keys).toHaveLength(script.numberOfKeys);
          // The slot of the API key's hash tag: one slot per key, whatever the prefix.
          expect(keySlot(call.keys[0])).toBe(keySlot(apiKeyUuid));
          // The refresh-token pointer (rt:<hash>, untagged) is never part of a script.
          for (const key of call.keys) expect(key.startsWith(`${prefix}rt:`)).toBe(false);
        }
      }
    }
    expect(scriptCalls).toBe(prefixes.length * 25 * 8);
  });

  it('every script touches only keys it declares in KEYS (never a key built from ARGV)', () => {
    const recorder = recordingRedis();
    new SessionStore(recorder.redis, config('auth:'));
    const declared = Object.fromEntries([...recorder.scripts].map(([name, s]) => [name, s]));
    expect(Object.keys(declared).sort()).toEqual(['authCreateSession', 'authRevokeAllSessions', 'authRevokeSession', 'authRotateSession', 'authSetSecretFloor']);
    expect(new Set(Object.values(declared).map((s) => s.lua))).toEqual(new Set([CREATE_SESSION, ROTATE_SESSION, REVOKE_ALL_SESSIONS, REVOKE_SESSION, SET_SECRET_FLOOR]));
    for (const [name, { numberOfKeys, lua }] of Object.entries(declared)) {
      const indexes = [...lua.matchAll(/KEYS\[(\d+)\]/g)].map((m) => Number(m[1]));
      expect({ name, highest: Math.max(...indexes) }).toEqual({ name, highest: numberOfKeys });
      // The first argument of every redis.call is a declared key: KEYS[n], or the parameters of the
      // shared revoke_all helper, which are called with KEYS[1..3] only.
      for (const [, command, firstArg] of lua.matchAll(/redis\.call\('(\w+)',\s*([^,)]+)/g)) {
        expect({ name, command, firstArg }).toEqual({ name, command, firstArg: expect.stringMatching(/^(KEYS\[\d\]|sess|sexp|pend)$/) });
      }
      for (const [, args] of lua.matchAll(/revoke_all\(([^)]*)\)/g)) {
        if (args.startsWith('sess,')) continue; // the definition
        expect(args.split(',').slice(0, 3).map((a) => a.trim())).toEqual(['KEYS[1]', 'KEYS[2]', 'KEYS[3]']);
      }
      // DEL of several keys: all declared, so all in the API key's slot.
      for (const [, keys] of lua.matchAll(/redis\.call\('DEL',\s*([^)]*)\)/g)) {
        for (const key of keys.split(',')) expect(key.trim()).toMatch(/^(KEYS\[\d\]|sess|sexp|pend)$/);
      }
    }
  });

  it('FailureThrottle: each transaction touches one key, so one slot', async () => {
    const recorder = recordingRedis();
    const throttle = new FailureThrottle(recorder.redis, config('auth:'));
    const policy = {
      refuse: [
        { key: 'ip:127.0.0.1', limit: 50 },
        { key: 'cl-ip:ak_live_0000:127.0.0.1', limit: 10 },
      ],
      watch: [{ key: 'cl:ak_live_0000', limit: 10 }],
      windowSeconds: 60,
    };
    await throttle.recordFailure(policy);
    recorder.replies.get = '99';
    recorder.replies.pttl = 1500;
    expect(await throttle.retryAfter(policy)).toBe(2);
    // A reservation, settled as a success, gives its places back: one key a call.
    expect(await throttle.reserve(policy)).toBeNull();
    await throttle.settle(policy, true);
    expect(recorder.calls.filter((c) => c.command === 'authThrottleGiveBack')).toHaveLength(2);
    const transactions = recorder.calls.filter((c) => c.command.startsWith('multi('));
    expect(transactions).toHaveLength(5);
    for (const call of recorder.calls) expect(new Set(call.keys.map(keySlot)).size).toBe(1);
    for (const t of transactions) expect(new Set(t.keys).size).toBe(1);
  });

  it('DashboardSessions: single-key commands only', async () => {
    const recorder = recordingRedis();
    const sessions = new DashboardSessions(recorder.redis, config('auth:'));
    const token = await sessions.start({ userId: randomUUID(), organizationId: randomUUID(), email: 'a@example.com' });
    await sessions.find(token);
    await sessions.end(token);
    expect(recorder.calls.map((c) => c.command)).toEqual(['set', 'getex', 'del']);
    for (const call of recorder.calls) expect(call.keys).toHaveLength(1);
  });
});

describe('SessionStore.scanPendingStep on a Redis Cluster', () => {
  const prefix = 'auth:';
  const pendKey = (uuid: string) => `${prefix}pend:{${uuid}}`;

  /** A cluster of masters, each with its own keys; SCAN returns `page` keys per call. */
  function fakeCluster(keysPerNode: string[][], page = 2) {
    const lists = new Map<string, string[]>();
    const masters = keysPerNode.map((keys, i) => {
      const node = {
        options: { host: '127.0.0.1', port: 7001 + i },
        scan: jest.fn(async (cursor: string, ..._rest: unknown[]): Promise<[string, string[]]> => {
          const from = Number(cursor);
          const batch = keys.slice(from, from + page);
          const next = from + page >= keys.length ? '0' : String(from + page);
          return [next, batch.filter((k) => k.startsWith(`${prefix}pend:{`))];
        }),
      };
      for (const key of keys) if (key.startsWith(`${prefix}pend:{`)) lists.set(key, [pendingJson(`ses_${key.length}`)]);
      return node;
    });
    let order = masters;
    const cluster = {
      isCluster: true,
      defineCommand: () => undefined,
      nodes: jest.fn((role: string) => (role === 'master' ? order : [])),
      lrange: jest.fn(async (key: string) => lists.get(key) ?? []),
    };
    return {
      cluster,
      masters,
      reorder: (next: typeof masters) => (order = next),
      store: new SessionStore(cluster as unknown as RedisClient, config(prefix)),
    };
  }

  const uuids = Array.from({ length: 6 }, () => randomUUID());
  const layout = () => [
    [pendKey(uuids[0]), `${prefix}rt:1`, `${prefix}rt:2`, pendKey(uuids[1]), `${prefix}sess:{x}`],
    [`${prefix}rt:3`, pendKey(uuids[2])],
    [pendKey(uuids[3]), pendKey(uuids[4]), `${prefix}rt:4`, `${prefix}rt:5`, pendKey(uuids[5])],
  ];

  it('walks every master, one SCAN call per step, resuming where the previous call stopped', async () => {
    const { store, masters } = fakeCluster(layout());
    const found: string[] = [];
    const steps: Array<[number, string]> = [];
    for (let call = 0; call < 20; call++) {
      const before = masters.map((m) => m.scan.mock.calls.length);
      const records = await store.scanPendingStep(1);
      const scanned = masters.map((m, i) => m.scan.mock.calls.length - before[i]);
      expect(scanned.reduce((a, b) => a + b)).toBe(1);
      const node = scanned.indexOf(1);
      steps.push([7001 + node, String(masters[node].scan.mock.calls.at(-1)?.[0])]);
      found.push(...records.map((r) => r.apiKeyUuid));
      if (steps.length === 3 + 1 + 3) break; // one pass: 3 + 1 + 3 pages of 2 keys
    }
    expect(steps).toEqual([
      [7001, '0'],
      [7001, '2'],
      [7001, '4'],
      [7002, '0'],
      [7003, '0'],
      [7003, '2'],
      [7003, '4'],
    ]);
    // Every orphan of every master, once, with the API key read from the key's hash tag.
    expect(found.sort()).toEqual([...uuids].sort());
    // A new pass starts over at the first master.
    await store.scanPendingStep(1);
    expect(masters[0].scan.mock.calls.at(-1)?.[0]).toBe('0');
    expect(masters[0].scan).toHaveBeenCalledTimes(4);
  });

  it('stops a call at the end of a pass and keeps a stable node order', async () => {
    const { store, masters, reorder } = fakeCluster(layout());
    reorder([masters[2], masters[0], masters[1]]);
    const records = await store.scanPendingStep(100);
    expect(records.map((r) => r.apiKeyUuid).sort()).toEqual([...uuids].sort());
    expect(masters.map((m) => m.scan.mock.calls.length)).toEqual([3, 1, 3]);
    // Bounded: a call never takes more steps than it is given.
    const before = masters.map((m) => m.scan.mock.calls.length).reduce((a, b) => a + b);
    await store.scanPendingStep(2);
    expect(masters.map((m) => m.scan.mock.calls.length).reduce((a, b) => a + b) - before).toBe(2);
  });

  it('restarts the pass when the node it stood on is gone (failover)', async () => {
    const { store, masters, reorder } = fakeCluster(layout());
    await store.scanPendingStep(3); // 7001 done, now at the start of 7002
    reorder([masters[0], masters[2]]);
    await store.scanPendingStep(1);
    expect(masters[0].scan).toHaveBeenCalledTimes(4);
    expect(masters[0].scan.mock.calls.at(-1)?.[0]).toBe('0');
  });
});

describe("the refresh-token pointer, written by the store with the script that names the token", () => {
  const apiKeyUuid = randomUUID();
  const sessionId = 'ses_0193000000007000800000000000000a';
  const newHash = 'b'.repeat(64);
  const created = (store: SessionStore) =>
    store.create({ apiKeyUuid, sessionId, refreshHash: newHash, refreshExpiresAt: 31_000, scope: 'read:invoices', organizationId: randomUUID(), clientId: 'ak_live_x', now: 1_000, secretGeneration: 0 });
  const rotated = (store: SessionStore) =>
    store.rotate({ pointer: { apiKeyUuid, sessionId }, presentedHash: 'a'.repeat(64), newHash, newExpiresAt: 31_000, now: 1_000, eventId: randomUUID() });

  for (const waitReplicas of [0, 1]) {
    it(`sends SET rt:<hash> NX (key and session, expiring with the token) and the script in the same tick, the pointer first (REDIS_WAIT_REPLICAS=${waitReplicas})`, async () => {
      for (const [script, write] of [
        ['authCreateSession', created],
        ['authRotateSession', rotated],
      ] as const) {
        const recorder = recordingRedis();
        recorder.replies.authCreateSession = 1;
        recorder.replies.authRotateSession = ['rotated', 'read:invoices', randomUUID(), 'ak_live_x'];
        recorder.replies.wait = 1;
        const store = new SessionStore(recorder.redis, config('auth:', waitReplicas));
        const pending = write(store);
        // Both sent before anything is awaited: one round trip, as when the caller sent them.
        const writes = recorder.calls.filter((c) => c.command !== 'wait');
        expect(writes.map((c) => c.command)).toEqual(['set', script]);
        expect(writes[0]).toMatchObject({ keys: [`auth:rt:${newHash}`], args: [`${apiKeyUuid} ${sessionId}`, 'PX', 30_000, 'NX'] });
        // Each its own write (with its own WAIT): the pointer's slot is not the session's.
        if (waitReplicas > 0) expect(writes[0].pipeline).not.toBe(writes[1].pipeline);
        await pending;
      }
    });
  }

  it('answers only once both are recorded: a failed pointer write fails the session write it came with', async () => {
    for (const write of [created, rotated]) {
      const recorder = recordingRedis();
      recorder.replies.authCreateSession = 1;
      recorder.replies.authRotateSession = ['rotated', 'read:invoices', randomUUID(), 'ak_live_x'];
      recorder.failures.set = new Error('Connection is closed.');
      await expect(write(new SessionStore(recorder.redis, config('auth:')))).rejects.toThrow('Connection is closed.');
    }
  });
});

describe('REDIS_WAIT_REPLICAS (ADR 0030)', () => {
  const writes = ['authCreateSession', 'set', 'authRotateSession', 'authRevokeAllSessions', 'authRevokeSession', 'authSetSecretFloor'];
  const revocations = ['authRevokeAllSessions', 'authRevokeSession', 'authSetSecretFloor'];

  it('sends every session write in a pipeline of its own with WAIT right behind it, on the same slot; a revocation waits at least REVOCATION_WAIT_TIMEOUT_MS', async () => {
    const recorder = recordingRedis();
    const store = new SessionStore(recorder.redis, config('auth:', 1));
    recorder.replies.wait = 1;
    await driveSessionStore(store, recorder, randomUUID());
    const piped = recorder.calls.filter((c) => c.pipeline !== undefined);
    const byPipeline = new Map<number, Call[]>();
    for (const call of piped) byPipeline.set(call.pipeline!, [...(byPipeline.get(call.pipeline!) ?? []), call]);
    for (const [, [write, wait, ...rest]] of byPipeline) {
      expect(writes).toContain(write.command);
      // Token writes wait REDIS_WAIT_TIMEOUT_MS; a revocation, already in effect on the primary, longer.
      const timeout = revocations.includes(write.command) ? REVOCATION_WAIT_TIMEOUT_MS : 200;
      expect({ write: write.command, command: wait.command, args: wait.args }).toEqual({ write: write.command, command: 'wait', args: [1, timeout] });
      expect(rest).toEqual([]);
    }
    // Every write went that way; reads and the pending list's cleanup did not.
    expect(recorder.calls.filter((c) => c.pipeline === undefined).map((c) => c.command).sort()).toEqual(['get', 'hget', 'lrem']);
    expect(new Set(piped.filter((c) => c.command !== 'wait').map((c) => c.command))).toEqual(new Set(writes));
  });

  it('a write no replica acknowledged in time is a dependency failure (503), after which nothing is handed out', async () => {
    const recorder = recordingRedis();
    const store = new SessionStore(recorder.redis, config('auth:', 1));
    recorder.replies.wait = 0;
    recorder.replies.authRotateSession = ['rotated', 'read:invoices', randomUUID(), 'ak_live_x'];
    const pointer = { apiKeyUuid: randomUUID(), sessionId: 'ses_1' };
    const rotation = store.rotate({ pointer, presentedHash: 'a'.repeat(64), newHash: 'b'.repeat(64), newExpiresAt: 3_000, now: 1_500, eventId: randomUUID() });
    await expect(rotation).rejects.toThrow(DependencyUnavailableError);
    await expect(rotation).rejects.toThrow('Redis: 0 of 1 replicas acknowledged a session write within 200 ms');
    expect(isDependencyFailure(await rotation.catch((e: unknown) => e))).toBe(true);
  });

  it('without replicas to wait for, writes go alone (auto-pipelined), with no WAIT', async () => {
    const recorder = recordingRedis();
    await driveSessionStore(new SessionStore(recorder.redis, config('auth:', 0)), recorder, randomUUID());
    expect(recorder.calls.some((c) => c.pipeline !== undefined || c.command === 'wait')).toBe(false);
  });
});

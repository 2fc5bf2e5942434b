import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import type { ClientContext, Cluster, RedisCommander, Result } from 'ioredis';
import { DependencyUnavailableError } from '@invoicing/service-kit';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import type { RedisClient } from './redis-connection';
import type { AuditActorAt } from '../audit/audit-log';
import { CREATE_SESSION, REVOKE_ALL_SESSIONS, REVOKE_SESSION, ROTATE_SESSION, SECRET_FLOOR_TTL_MS, SET_SECRET_FLOOR } from './session-scripts';

export const REDIS = Symbol('REDIS');

/** Keys looked at by one SCAN step of {@link SessionStore.scanPendingStep}. */
const PENDING_SCAN_COUNT = 1000;

/**
 * How long a revocation (all of a key's sessions, one session, a raised secret floor) waits for its
 * replica at least. A revocation is in effect on the primary before its WAIT returns: a short WAIT
 * answered 503 and asked the user to retry what was already done. Token writes keep
 * REDIS_WAIT_TIMEOUT_MS, since what they hand out must survive a failover (ADR 0030). Seen in the
 * replicated resilience run: a replica slowed past 200 ms by a restarting broker on two cores.
 */
export const REVOCATION_WAIT_TIMEOUT_MS = 1000;

declare module 'ioredis' {
  interface RedisCommander<Context> {
    authCreateSession(sess: string, sexp: string, ...args: string[]): Result<number, Context>;
    authRotateSession(sess: string, sexp: string, pend: string, ...args: string[]): Result<string[], Context>;
    authRevokeAllSessions(sess: string, sexp: string, pend: string, ...args: string[]): Result<string, Context>;
    authSetSecretFloor(sess: string, ...args: string[]): Result<number, Context>;
    authRevokeSession(sess: string, sexp: string, pend: string, marker: string, ...args: string[]): Result<string | null, Context>;
  }
}

/** A revocation recorded in Redis by a script, waiting to be copied into the outbox. */
export interface PendingRevocation {
  event_id: string;
  reason: 'refresh_token_reuse' | 'revoked_by_user' | 'session_revoked' | 'secret_rolled' | 'exposed';
  session_ids: string[];
  /** Milliseconds since the epoch, as a string (Lua numbers lose precision). */
  revoked_at: string;
  /** Organization uuid. */
  org: string;
  cid: string;
  /** Who caused it, for the audit log: JSON of {@link RevocationActor}; absent for older records. */
  actor?: string;
}

/** Who caused a revocation, as the audit log records it (public ids; the client's address). */
export interface RevocationActor extends AuditActorAt {
  /** What else the audit record says (an exposure's report URL). */
  data?: Record<string, string>;
}

export interface PendingRevocationRecord {
  apiKeyUuid: string;
  raw: string;
  event: PendingRevocation;
  /** `event.actor` decoded (null when absent or unreadable): who caused it, for the audit log. */
  actor: RevocationActor | null;
}

/** Whose sessions: the key, and what a revocation event says of it (organization uuid, client id). */
export interface SessionOwner {
  apiKeyUuid: string;
  organizationId: string;
  clientId: string;
}

/** When a revocation happens, the id of the event that announces it, and how long its marker lasts. */
export interface RevocationStamp {
  now: number;
  eventId: string;
  markerTtlMs: number;
}

export type RotateResult =
  | { kind: 'rotated'; scope: string; organizationId: string; clientId: string }
  | { kind: 'reuse'; pending: PendingRevocationRecord }
  | { kind: 'expired' }
  | { kind: 'invalid' };

/** One write, to the node of one slot, expressed for any client: the Redis itself or a pipeline. */
type Write<T> = <C extends ClientContext>(client: RedisCommander<C>) => Result<T, C>;

export interface SessionPointer {
  apiKeyUuid: string;
  sessionId: string;
}

/**
 * Refresh-token families ("sessions") in Redis. Only hashes of refresh tokens are stored. Each
 * token also has a pointer `rt:<hash>` (hash → key and session) so a refresh can find its family;
 * the store writes it itself, with the session script that names the token ({@link create},
 * {@link rotate}), so that no caller can record one without the other.
 */
@Injectable()
export class SessionStore {
  private readonly prefix: string;
  private readonly maxSessionsPerKey: string;
  /** Replicas that must hold a write before it counts (REDIS_WAIT_REPLICAS), and for how long to wait. */
  private readonly waitReplicas: number;
  private readonly waitTimeoutMs: number;
  /** A revocation's WAIT: at least {@link REVOCATION_WAIT_TIMEOUT_MS}. */
  private readonly revocationWaitMs: number;
  /**
   * Where the scan for orphaned pending revocations stands: the node being walked (its address on a
   * cluster, '' for one Redis; null at the start of a pass) and the cursor on it.
   */
  private pendingScan: { node: string | null; cursor: string } = { node: null, cursor: '0' };

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.prefix = config.REDIS_KEY_PREFIX;
    this.maxSessionsPerKey = String(config.AUTH_MAX_SESSIONS_PER_KEY);
    this.waitReplicas = config.REDIS_WAIT_REPLICAS;
    this.waitTimeoutMs = config.REDIS_WAIT_TIMEOUT_MS;
    this.revocationWaitMs = Math.max(config.REDIS_WAIT_TIMEOUT_MS, REVOCATION_WAIT_TIMEOUT_MS);
    redis.defineCommand('authCreateSession', { numberOfKeys: 2, lua: CREATE_SESSION });
    redis.defineCommand('authRotateSession', { numberOfKeys: 3, lua: ROTATE_SESSION });
    redis.defineCommand('authRevokeAllSessions', { numberOfKeys: 3, lua: REVOKE_ALL_SESSIONS });
    redis.defineCommand('authRevokeSession', { numberOfKeys: 4, lua: REVOKE_SESSION });
    redis.defineCommand('authSetSecretFloor', { numberOfKeys: 1, lua: SET_SECRET_FLOOR });
  }

  private sessKey(apiKeyUuid: string): string {
    return `${this.prefix}sess:{${apiKeyUuid}}`;
  }
  private expiriesKey(apiKeyUuid: string): string {
    return `${this.prefix}sexp:{${apiKeyUuid}}`;
  }
  private pendKey(apiKeyUuid: string): string {
    return `${this.prefix}pend:{${apiKeyUuid}}`;
  }
  private revokedSessionKey(apiKeyUuid: string, sessionId: string): string {
    return `${this.prefix}rses:{${apiKeyUuid}}:${sessionId}`;
  }
  private pointerKey(refreshHash: string): string {
    return `${this.prefix}rt:${refreshHash}`;
  }

  /**
   * Sends one write and, with REDIS_WAIT_REPLICAS, a `WAIT` right behind it in the same pipeline:
   * the pipeline goes to the node of the write's slot on that node's one connection, so the WAIT
   * counts the replicas holding this write (and every earlier one on the connection). Resolves with
   * the write's reply once enough replicas have it; otherwise throws a dependency failure (503), and
   * the caller hands nothing out. Redis replicates asynchronously: without this, a primary that dies
   * after answering is replaced by a replica that never saw the write, and a spent refresh token
   * works again (ADR 0030). Without replicas to wait for, the write goes alone (auto-pipelined).
   *
   * A script in a pipeline is sent as EVALSHA once the connection has loaded it; only a SCRIPT FLUSH
   * on a live connection makes ioredis resend it after the pipeline (NOSCRIPT), past its WAIT.
   */
  private async write<T>(write: Write<T>, waitTimeoutMs = this.waitTimeoutMs): Promise<T> {
    if (this.waitReplicas === 0) return write(this.redis as RedisCommander);
    for (let attempt = 1; ; attempt++) {
      const pipeline = this.redis.pipeline();
      write(pipeline);
      pipeline.wait(this.waitReplicas, waitTimeoutMs);
      const [[writeError, reply], [waitError, acknowledged]] = (await pipeline.exec()) ?? [[null, null], [null, 0]];
      if (writeError) {
        // ioredis follows a redirection of a pipeline only when every command in it was redirected
        // or is read-only; WAIT is neither, so after a failover the write comes back MOVED (or
        // CLUSTERDOWN while the replica takes over). It was not executed: refresh the slot map, and
        // send it again, up to five times (the nodes take a moment to agree on the new map); past
        // that, the cluster is still moving: a dependency failure (503), as for the client's own
        // "Too many Cluster redirections".
        if (isCluster(this.redis) && REDIRECTED.test(writeError.message)) {
          if (attempt < 6) {
            await refreshSlots(this.redis);
            continue;
          }
          throw new DependencyUnavailableError(`Redis Cluster: a session write was still redirected after ${attempt} attempts`);
        }
        throw writeError;
      }
      if (waitError) throw waitError;
      if ((acknowledged as number) < this.waitReplicas) {
        throw new DependencyUnavailableError(
          `Redis: ${String(acknowledged)} of ${this.waitReplicas} replicas acknowledged a session write within ${waitTimeoutMs} ms`,
        );
      }
      return reply as T;
    }
  }

  /**
   * Records a new refresh token: its pointer (`SET rt:<hash> NX`, untagged, so in a slot of its own)
   * and the session script that names its hash, the pointer first. The two cannot share a MULTI or a
   * script on a cluster (different slots), so they are two writes, each with its own WAIT, sent in
   * the same tick (one round trip: ioredis pipelines them) and both awaited: the token may be handed
   * out only once the store knows it. A pointer whose script refused (a revoked key, a spent token)
   * or failed points at a session that never names its hash, so it never validates, and it expires
   * with the token it was minted for.
   */
  private recordRefreshToken<T>(refreshHash: string, owner: SessionPointer, ttlMs: number, script: Write<T>): Promise<[unknown, T]> {
    const pointer = this.pointerKey(refreshHash);
    return Promise.all([this.write((c) => c.set(pointer, `${owner.apiKeyUuid} ${owner.sessionId}`, 'PX', ttlMs, 'NX')), this.write(script)]);
  }

  async findPointer(refreshHash: string): Promise<SessionPointer | null> {
    const value = await this.redis.get(this.pointerKey(refreshHash));
    if (!value) return null;
    const [apiKeyUuid, sessionId] = value.split(' ');
    return { apiKeyUuid, sessionId };
  }

  /**
   * The scope a session was granted, or null when it no longer exists. A session's scope never
   * changes, so this read cannot race with a rotation in any way that matters.
   */
  async sessionScope(pointer: SessionPointer): Promise<string | null> {
    const raw = await this.redis.hget(this.sessKey(pointer.apiKeyUuid), `s:${pointer.sessionId}`);
    if (!raw) return null;
    return (JSON.parse(raw) as { sc: string }).sc;
  }

  /**
   * Starts a session with its first refresh token (`refreshHash`, and its pointer, expiring with it).
   * False when the key was revoked meanwhile. Past AUTH_MAX_SESSIONS_PER_KEY live sessions, the one
   * whose refresh token expires first is evicted in the same step.
   */
  async create(
    input: SessionOwner & {
      sessionId: string;
      refreshHash: string;
      refreshExpiresAt: number;
      scope: string;
      now: number;
      /** The key row's secret generation the client authenticated against. */
      secretGeneration: number;
    },
  ): Promise<boolean> {
    const sess = this.sessKey(input.apiKeyUuid);
    const sexp = this.expiriesKey(input.apiKeyUuid);
    const ttlMs = input.refreshExpiresAt - input.now;
    const [, created] = await this.recordRefreshToken<number>(input.refreshHash, input, ttlMs, (c) =>
      c.authCreateSession(
        sess,
        sexp,
        input.sessionId,
        input.refreshHash,
        String(input.refreshExpiresAt),
        input.scope,
        input.organizationId,
        input.clientId,
        String(input.now),
        String(ttlMs),
        this.maxSessionsPerKey,
        String(input.secretGeneration),
      ),
    );
    return created === 1;
  }

  /**
   * From now on only clients that authenticated against a key row of `generation` or later open
   * sessions (a roll that ended the old secret at once): a request that checked the old secret on
   * a stale row is refused when it comes to open its session.
   */
  async raiseSecretFloor(apiKeyUuid: string, generation: number): Promise<void> {
    const sess = this.sessKey(apiKeyUuid);
    await this.write((c) => c.authSetSecretFloor(sess, String(generation), String(SECRET_FLOOR_TTL_MS)), this.revocationWaitMs);
  }

  /**
   * Spends `presentedHash` and records `newHash` (and its pointer, to the same session) in one step,
   * or finds a reuse (every session of the key revoked, the revocation pending) or a refusal. The
   * rotation script is atomic: of N concurrent rotations of one token exactly one wins.
   */
  async rotate(input: {
    pointer: SessionPointer;
    presentedHash: string;
    newHash: string;
    newExpiresAt: number;
    now: number;
    eventId: string;
    /** Recorded with a reuse, if one is detected. */
    actor?: RevocationActor;
  }): Promise<RotateResult> {
    const { apiKeyUuid, sessionId } = input.pointer;
    const keys = [this.sessKey(apiKeyUuid), this.expiriesKey(apiKeyUuid), this.pendKey(apiKeyUuid)] as const;
    const args = [
      sessionId,
      input.presentedHash,
      input.newHash,
      String(input.now),
      String(input.newExpiresAt),
      String(input.newExpiresAt - input.now),
      input.eventId,
      input.actor ? JSON.stringify(input.actor) : '',
    ];
    const [, [kind, ...rest]] = await this.recordRefreshToken<string[]>(input.newHash, input.pointer, input.newExpiresAt - input.now, (c) =>
      c.authRotateSession(...keys, ...args),
    );
    switch (kind) {
      case 'rotated':
        return { kind, scope: rest[0], organizationId: rest[1], clientId: rest[2] };
      case 'reuse':
        return { kind, pending: decodePending(apiKeyUuid, rest[0]) };
      case 'expired':
        return { kind };
      default:
        return { kind: 'invalid' };
    }
  }

  /** Revokes every session of a key at once (and with `markKeyRevoked`, refuses new ones). */
  async revokeAll(
    input: SessionOwner &
      RevocationStamp & {
        reason: PendingRevocation['reason'];
        markKeyRevoked: boolean;
        /** Raise the secret floor to this generation in the same step (see raiseSecretFloor). */
        secretFloor?: number;
        actor?: RevocationActor;
      },
  ): Promise<PendingRevocationRecord> {
    const keys = [this.sessKey(input.apiKeyUuid), this.expiriesKey(input.apiKeyUuid), this.pendKey(input.apiKeyUuid)] as const;
    const args = [
      String(input.now),
      input.eventId,
      input.reason,
      input.markKeyRevoked ? '1' : '0',
      String(input.markerTtlMs),
      input.organizationId,
      input.clientId,
      input.secretFloor === undefined ? '' : String(input.secretFloor),
      String(SECRET_FLOOR_TTL_MS),
      input.actor ? JSON.stringify(input.actor) : '',
    ];
    const raw = await this.write<string>((c) => c.authRevokeAllSessions(...keys, ...args), this.revocationWaitMs);
    return decodePending(input.apiKeyUuid, raw);
  }

  /**
   * Ends one session (RFC 7009): its refresh tokens stop working and a `session_revoked` event is
   * recorded in the same atomic step. With `evenIfGone`, a session that no longer exists is announced
   * anyway (its access tokens may still be live). Null when nothing changed: the session was gone
   * (and not `evenIfGone`), or it was revoked this way within `markerTtlMs` already.
   */
  async revokeSession(
    input: SessionOwner & RevocationStamp & { sessionId: string; evenIfGone: boolean },
  ): Promise<PendingRevocationRecord | null> {
    const keys = [
      this.sessKey(input.apiKeyUuid),
      this.expiriesKey(input.apiKeyUuid),
      this.pendKey(input.apiKeyUuid),
      this.revokedSessionKey(input.apiKeyUuid, input.sessionId),
    ] as const;
    const args = [
      input.sessionId,
      String(input.now),
      input.eventId,
      String(input.markerTtlMs),
      input.evenIfGone ? '1' : '0',
      input.organizationId,
      input.clientId,
    ];
    const raw = await this.write<string | null>((c) => c.authRevokeSession(...keys, ...args), this.revocationWaitMs);
    return raw ? decodePending(input.apiKeyUuid, raw) : null;
  }

  /** Removes a pending revocation once the outbox holds it. */
  async ackPending(record: PendingRevocationRecord): Promise<void> {
    await this.redis.lrem(this.pendKey(record.apiKeyUuid), 1, record.raw);
  }

  /**
   * The pending revocations found by the next `calls` steps of a SCAN of the keyspace (about
   * {@link PENDING_SCAN_COUNT} keys a step), resuming where the previous call stopped. They are
   * records whose process died between the session script and the outbox insert: rare, and the
   * whole keyspace (a pointer per refresh token, millions on a busy platform) has to be walked to
   * find them. Walking it all at every sweep kept Redis busy all the time (15-17 % of its CPU at
   * 840,000 keys, docs/perf.md); a bounded step per sweep costs a few milliseconds of Redis time
   * and finds every orphan within one pass. Records whose insert failed in a live process never
   * wait for the scan: the outbox retries those itself.
   *
   * On a Redis Cluster a pass walks every master in turn (SCAN only sees the keys of the node it is
   * sent to), each from cursor 0 to 0; a step is still one SCAN call on one node.
   */
  async scanPendingStep(calls: number): Promise<PendingRevocationRecord[]> {
    const match = `${this.prefix}pend:{*}`;
    const open = `${this.prefix}pend:{`.length;
    const records: PendingRevocationRecord[] = [];
    for (let i = 0; i < calls; i++) {
      const nodes = this.scanNodes();
      let at = nodes.findIndex((n) => n.address === this.pendingScan.node);
      if (at < 0) {
        // A pass starts at the first node; so does a step whose node is gone (failover, resharding).
        at = 0;
        this.pendingScan = { node: nodes[0].address, cursor: '0' };
      }
      const [next, keys] = await nodes[at].client.scan(this.pendingScan.cursor, 'MATCH', match, 'COUNT', PENDING_SCAN_COUNT);
      for (const key of keys) {
        const apiKeyUuid = key.slice(open, -1);
        for (const raw of await this.redis.lrange(key, 0, -1)) records.push(decodePending(apiKeyUuid, raw));
      }
      if (next !== '0') {
        this.pendingScan = { node: nodes[at].address, cursor: next };
      } else if (at + 1 < nodes.length) {
        this.pendingScan = { node: nodes[at + 1].address, cursor: '0' };
      } else {
        // A pass is complete; the next call starts the next one.
        this.pendingScan = { node: null, cursor: '0' };
        break;
      }
    }
    return records;
  }

  /** What a SCAN pass walks: the one Redis, or every master of the cluster in a stable order. */
  private scanNodes(): Array<{ address: string; client: Redis }> {
    if (!isCluster(this.redis)) return [{ address: '', client: this.redis }];
    const masters = this.redis
      .nodes('master')
      .map((client) => ({ address: `${client.options.host}:${client.options.port}`, client }))
      .sort((a, b) => a.address.localeCompare(b.address));
    if (masters.length === 0) throw new Error('the Redis Cluster client knows no master (not connected)');
    return masters;
  }

  async ping(): Promise<boolean> {
    return (await this.redis.ping()) === 'PONG';
  }
}

function isCluster(client: RedisClient): client is Cluster {
  return client.isCluster === true;
}

/** A write a cluster node did not execute because its slot is served elsewhere, or not served yet. */
const REDIRECTED = /^(?:MOVED|CLUSTERDOWN|TRYAGAIN) /;

/** Reloads the cluster's slot map, then waits as ioredis does after a failover (retryDelayOnFailover). */
function refreshSlots(cluster: Cluster): Promise<void> {
  return new Promise((resolve) => cluster.refreshSlotsCache(() => setTimeout(resolve, 100)));
}

function decodePending(apiKeyUuid: string, raw: string): PendingRevocationRecord {
  const event = JSON.parse(raw) as PendingRevocation;
  // cjson encodes an empty Lua table as an object.
  if (!Array.isArray(event.session_ids)) event.session_ids = [];
  return { apiKeyUuid, raw, event, actor: decodeActor(event.actor) };
}

function decodeActor(json: string | undefined): RevocationActor | null {
  if (!json) return null;
  try {
    return JSON.parse(json) as RevocationActor;
  } catch {
    return null;
  }
}

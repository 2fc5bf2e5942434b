import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { Result } from 'ioredis';
import { Clock } from '../common/clock';
import { throttleAddress } from '../common/throttle-address';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import type { RedisClient } from '../sessions/redis-connection';
import { REDIS } from '../sessions/session-store';
import { AuditEntry, AuditLog, derivedAuditId } from './audit-log';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    auditDigestFailure(hash: string, samples: string, blocks: string, block: string, ttlSeconds: number, maxSamples: number): Result<number, Context>;
    auditDigestAdmit(
      hash: string,
      counter: string,
      over: string,
      overIds: string,
      type: string,
      ceiling: number,
      ttlSeconds: number,
      subjectId: string,
      maxSamples: number,
    ): Result<number, Context>;
  }
}

/** Who failed: an account (`usr_...`, failed log-ins) or a key (`key_...`, failed client authentications). */
export interface FailureSubject {
  /** Organization uuid. */
  organizationId: string;
  kind: 'account' | 'api_key';
  /** Public id of the account or key. */
  id: string;
}

/** Sample address blocks a summary names. */
export const SAMPLE_ADDRESSES = 10;
/** Accounts and keys a record of suppressed records names. */
const SAMPLE_SUBJECTS = 10;
/** A window's summary waits this long past its end, for failures still in flight on instances whose clocks lag. */
const FLUSH_GRACE_MS = 2000;
const FLUSH_BATCH = 100;

/** What {@link AuditFailureDigest} admits of one record (the ADMIT script's answer). */
const VERDICT = {
  /** Already recorded in this window: nothing to write. */
  seen: 0,
  write: 1,
  /** Over the organization's ceiling: counted in its suppressed record instead. */
  suppressed: 2,
  /** The first record suppressed in the window: the organization's suppressed record is due at its end. */
  firstSuppressed: 3,
  /** The subject's first record in the window: its summary is due at the end. */
  firstWrite: 4,
} as const;

/**
 * Failed log-ins and failed key authentications, aggregated before they reach the audit log (ADR
 * 0035). The log is a hash chain that is only ever appended to (ADR 0024), so nothing written can be
 * merged afterwards: the counting happens in Redis first, per account or key and fixed window
 * (AUDIT_FAILURE_WINDOW_SECONDS), and the log gets
 * - at once, the signal: the window's first failed log-in of an account (`account.login_failed`) and
 *   each alert type once (`account.login_failures_alert`, `api_key.auth_failures_alert`), at most
 *   AUDIT_FAILURE_RECORDS_PER_ORGANIZATION_PER_WINDOW of them per organization;
 * - when the window ends, one summary per account or key recorded in it, with every failure counted
 *   (`failures`), the address blocks they came from (`address_blocks`, an estimate) and up to ten of
 *   them; and one `audit.failure_records_suppressed` naming what the ceiling held back.
 * Strangers with many addresses (an IPv6 /48 holds 65,536 /64 blocks) or many Client IDs add at most
 * twice the ceiling plus one records to an organization's window, however hard they try.
 *
 * Every key of one organization and window shares a hash tag, so each script runs on one Redis
 * Cluster slot; the schedule of summaries (a sorted set by window end) is one key of its own. A
 * summary has an id derived from its window, so instances flushing the same window side by side
 * write it once (AuditLog.record skips an id it holds).
 */
@Injectable()
export class AuditFailureDigest implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(AuditFailureDigest.name);
  private readonly windowMs: number;
  private readonly ttlSeconds: number;
  private readonly dueKey: string;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
  ) {
    this.windowMs = config.AUDIT_FAILURE_WINDOW_SECONDS * 1000;
    // Long enough for a summary delayed by an outage of a whole window.
    this.ttlSeconds = 2 * config.AUDIT_FAILURE_WINDOW_SECONDS + 60;
    this.dueKey = `${config.REDIS_KEY_PREFIX}afd-due`;
    redis.defineCommand('auditDigestFailure', { numberOfKeys: 3, lua: COUNT_FAILURE });
    redis.defineCommand('auditDigestAdmit', { numberOfKeys: 4, lua: ADMIT });
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), Math.min(5000, Math.max(250, this.windowMs / 4)));
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /**
   * Counts one failure of `subject` from `address`, then writes each of `records` that is the first
   * of its type for the subject in this window and within the organization's ceiling. Quiet: a
   * failure here is logged and the request answered as it would have been.
   */
  async failed(subject: FailureSubject, address: string, records: AuditEntry[]): Promise<void> {
    const window = Math.floor(this.clock.now() / this.windowMs);
    const keys = this.keysOf(subject.organizationId, window, subject.kind, subject.id);
    const block = throttleAddress(address);
    let verdicts: number[];
    try {
      await this.redis.auditDigestFailure(keys.subject, keys.samples, keys.blocks, block, this.ttlSeconds, SAMPLE_ADDRESSES);
      verdicts = [];
      for (const record of records) {
        const verdict = (await this.redis.auditDigestAdmit(
          keys.subject,
          keys.counter,
          keys.over,
          keys.overIds,
          record.type,
          this.config.AUDIT_FAILURE_RECORDS_PER_ORGANIZATION_PER_WINDOW,
          this.ttlSeconds,
          subject.id,
          SAMPLE_SUBJECTS,
        )) as number;
        verdicts.push(verdict);
        const due = (window + 1) * this.windowMs + FLUSH_GRACE_MS;
        if (verdict === VERDICT.firstWrite) await this.redis.zadd(this.dueKey, due, memberOf(subject.organizationId, window, subject.kind, subject.id));
        if (verdict === VERDICT.firstSuppressed) await this.redis.zadd(this.dueKey, due, memberOf(subject.organizationId, window, 'organization', '-'));
      }
    } catch (e) {
      // Without the counts the ceiling cannot be kept; the signal is: the records are written as they come.
      this.logger.warn({ msg: 'audit failure digest unavailable; recording without it', error: String(e) });
      verdicts = records.map(() => VERDICT.write);
    }
    for (const [i, record] of records.entries()) {
      if (verdicts[i] === VERDICT.write || verdicts[i] === VERDICT.firstWrite) await this.audit.recordQuietly(record);
    }
  }

  /** One flush at a time: a slow one (Postgres slow) is not overlapped by the next. */
  private tick(): void {
    this.running ??= this.flush()
      .catch((e: unknown) => this.logger.warn({ msg: 'audit failure summaries not written; retrying at the next flush', error: String(e) }))
      .finally(() => (this.running = null));
  }

  /**
   * Writes the summaries of every window that has ended. A summary stays scheduled until it is
   * written, so a database outage delays it rather than losing it (as long as Redis keeps the counts).
   */
  async flush(): Promise<number> {
    let written = 0;
    for (;;) {
      const due = await this.redis.zrangebyscore(this.dueKey, '-inf', this.clock.now(), 'LIMIT', 0, FLUSH_BATCH);
      for (const member of due) {
        const entry = await this.summaryOf(member);
        if (entry && (await this.audit.recordNow(entry, { lockTimeoutMs: 2000 }))) written += 1;
        await this.redis.zrem(this.dueKey, member);
      }
      if (due.length < FLUSH_BATCH) return written;
    }
  }

  private async summaryOf(member: string): Promise<AuditEntry | null> {
    const [organizationId, windowText, kind, id] = member.split('|');
    const window = Number(windowText);
    if (!organizationId || !kind || !id || !Number.isSafeInteger(window)) return null;
    const keys = this.keysOf(organizationId, window, kind, id);
    const span = {
      window_started_at: new Date(window * this.windowMs).toISOString(),
      window_ended_at: new Date((window + 1) * this.windowMs).toISOString(),
    };
    const base = {
      id: derivedAuditId(`audit-digest/${member}`),
      organizationId,
      actor: { kind: 'system' as const, id: null },
      clientAddress: null,
      occurredAt: new Date((window + 1) * this.windowMs),
    };
    if (kind === 'organization') {
      const [suppressed, ids] = await Promise.all([this.redis.hget(keys.over, 'suppressed'), this.redis.smembers(keys.overIds)]);
      if (!suppressed) return null;
      ids.sort();
      return {
        ...base,
        type: 'audit.failure_records_suppressed',
        data: {
          records_suppressed: Number(suppressed),
          ceiling: this.config.AUDIT_FAILURE_RECORDS_PER_ORGANIZATION_PER_WINDOW,
          user_ids: ids.filter((i) => i.startsWith('usr_')),
          api_key_ids: ids.filter((i) => i.startsWith('key_')),
          ...span,
        },
      };
    }
    const [digest, samples, blocks] = await Promise.all([this.redis.hgetall(keys.subject), this.redis.smembers(keys.samples), this.redis.pfcount(keys.blocks)]);
    const failures = Number(digest.failures ?? 0);
    // One failure was said in full by the record written at once.
    if (digest.recorded !== '1' || failures <= 1) return null;
    const counts = { failures, address_blocks: blocks, sample_addresses: samples.sort(), ...span };
    return kind === 'account'
      ? { ...base, type: 'account.login_failures_summary', data: { user_id: id, ...counts } }
      : { ...base, type: 'api_key.auth_failures_summary', apiKeyId: id, data: counts };
  }

  private keysOf(organizationId: string, window: number, kind: string, id: string) {
    const base = `${this.config.REDIS_KEY_PREFIX}afd:{${organizationId}}:${window}`;
    const subject = `${base}:${kind}:${id}`;
    return { subject, samples: `${subject}:a`, blocks: `${subject}:h`, counter: `${base}:n`, over: `${base}:over`, overIds: `${base}:over:ids` };
  }
}

function memberOf(organizationId: string, window: number, kind: string, id: string): string {
  return `${organizationId}|${window}|${kind}|${id}`;
}

/**
 * KEYS: the subject's hash, its sample set, its HyperLogLog of address blocks. ARGV: the block, the
 * TTL, the sample size. Counts one failure; answers the window's count.
 */
const COUNT_FAILURE = `
local n = redis.call('HINCRBY', KEYS[1], 'failures', 1)
redis.call('PFADD', KEYS[3], ARGV[1])
if redis.call('SCARD', KEYS[2]) < tonumber(ARGV[3]) then redis.call('SADD', KEYS[2], ARGV[1]) end
if n == 1 then
  for i = 1, 3 do redis.call('EXPIRE', KEYS[i], ARGV[2]) end
end
return n`;

/**
 * KEYS: the subject's hash, the organization's record counter, its suppressed hash and the ids it
 * samples. ARGV: the record's type, the ceiling, the TTL, the subject's id, the sample size. Answers
 * a VERDICT.
 */
const ADMIT = `
if redis.call('HSETNX', KEYS[1], 'once:' .. ARGV[1], 1) == 0 then return 0 end
redis.call('EXPIRE', KEYS[1], ARGV[3])
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('EXPIRE', KEYS[2], ARGV[3]) end
if n > tonumber(ARGV[2]) then
  local s = redis.call('HINCRBY', KEYS[3], 'suppressed', 1)
  if redis.call('SCARD', KEYS[4]) < tonumber(ARGV[5]) then redis.call('SADD', KEYS[4], ARGV[4]) end
  redis.call('EXPIRE', KEYS[3], ARGV[3])
  redis.call('EXPIRE', KEYS[4], ARGV[3])
  if s == 1 then return 3 end
  return 2
end
if redis.call('HSETNX', KEYS[1], 'recorded', 1) == 1 then return 4 end
return 1`;

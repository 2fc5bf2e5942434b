import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { AUDIT_EVENT_V1, AUDIT_TOPIC, AuditEventType, AuditEventV1, newId, parsePublicId, toPublicId, validateAuditEvent } from '@invoicing/contracts';
import { enqueueEvents } from '@invoicing/event-bus';
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { DataSource, EntityManager } from 'typeorm';
import { EVENT_SOURCE } from '../revocation/revocation-events.factory';
import { AuditActor, AuditRecordContent, AuditRecordError, chainNext, JsonObject, redactSecrets, StoredAuditRecord } from './audit-chain';

/** Who did something and from where, as the settings calls know it (`address`: the request's). */
export interface AuditActorAt {
  kind: AuditActor['kind'];
  id: string | null;
  address: string | null;
}

/** The entry of a change made to one key by `by`, at `at` (ms). */
export function keyChangeEntry(type: AuditEventType, key: { id: string; organizationId: string }, by: AuditActorAt, at: number, data: JsonObject): AuditEntry {
  return {
    type,
    organizationId: key.organizationId,
    actor: { kind: by.kind, id: by.id } as AuditActor,
    apiKeyId: toPublicId('key', key.id),
    clientAddress: by.address,
    occurredAt: new Date(at),
    data,
  };
}

/**
 * An audit record's id derived from `name` (what it records: an event's id, a digest's member): the
 * same on every retry or redelivery, so `record` finds it written and writes nothing. Never equal to
 * an outbox event's own id (`evt_` and 32 hex digits of SHA-256 of the name).
 */
export function derivedAuditId(name: string): string {
  return `evt_${createHash('sha256').update(name).digest('hex').slice(0, 32)}`;
}

/** One thing to record; the log adds the id (unless given), the position in the chain and the hashes. */
export interface AuditEntry {
  type: AuditEventType;
  /** Organization uuid. */
  organizationId: string;
  actor: AuditActor;
  /** Public key id (`key_...`) of the key concerned, if any. */
  apiKeyId?: string | null;
  clientAddress?: string | null;
  data?: JsonObject;
  occurredAt?: Date;
  /**
   * A fixed `evt_` id for an entry that may be written twice (a retried outbox insert): the second
   * write finds it and records nothing.
   */
  id?: string;
}

interface Row {
  id: string;
  organization_id: string;
  seq: string;
  type: string;
  occurred_at: Date;
  actor_kind: AuditActor['kind'];
  actor_id: string | null;
  api_key_id: string | null;
  client_address: string | null;
  data: JsonObject;
  prev_hash: string;
  hash: string;
}

/** A stored row as the chain and the API know it (public ids, seq a number, time in ISO form). */
export function recordOf(row: Row): StoredAuditRecord {
  return {
    id: toPublicId('evt', row.id),
    organization_id: toPublicId('org', row.organization_id),
    seq: Number(row.seq),
    type: row.type,
    occurred_at: row.occurred_at.toISOString(),
    actor: { kind: row.actor_kind, id: row.actor_id } as AuditActor,
    api_key_id: row.api_key_id,
    client_address: row.client_address,
    data: row.data,
    prev_hash: row.prev_hash,
    hash: row.hash,
  };
}

export interface AuditListQuery {
  limit: number;
  /** Public id of the record after which (older) the page starts. */
  startingAfter?: string;
  type?: string;
  apiKeyId?: string;
}

/**
 * The per-organization audit log (ADR 0024). {@link record} appends one record inside the
 * caller's transaction, so a record exists exactly when what it records has committed: the key's
 * creation, its revocation and its audit record commit or roll back together. Records of one
 * organization are chained (audit-chain.ts): appends to one organization take turns on a
 * transaction-scoped advisory lock, and the unique (organization_id, seq) makes a race that slipped
 * past it fail (its transaction rolls back) rather than fork the chain. The same transaction puts the record on the audit stream
 * (topic auth.audit.v1) through the outbox: published at least once, kept while Kafka is down.
 *
 * Nothing here runs on the token path: exchanges and refreshes record nothing; only what a security
 * team asks about (a key created, rolled, revoked...; a refresh token reused; log-ins) is recorded.
 */
@Injectable()
export class AuditLog {
  private readonly logger = new Logger(AuditLog.name);

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  /** Appends the entry in `tx`; null when an entry with its fixed id is already recorded. */
  async record(tx: EntityManager, entry: AuditEntry): Promise<StoredAuditRecord | null> {
    const id = entry.id ?? newId('evt');
    const uuid = parsePublicId('evt', id)!;
    await tx.query(`SELECT pg_advisory_xact_lock(hashtextextended($1, 0))`, [`audit:${entry.organizationId}`]);
    if (entry.id) {
      const [seen] = (await tx.query(`SELECT 1 FROM auth.audit_events WHERE id = $1`, [uuid])) as unknown[];
      if (seen) return null;
    }
    const [last] = (await tx.query(`SELECT organization_id, seq, hash FROM auth.audit_events WHERE organization_id = $1 ORDER BY seq DESC LIMIT 1`, [
      entry.organizationId,
    ])) as Array<{ organization_id: string; seq: string; hash: string }>;
    const organizationPublicId = toPublicId('org', entry.organizationId);
    const previous = last ? { organization_id: organizationPublicId, seq: Number(last.seq), hash: last.hash } : null;
    const content: AuditRecordContent = {
      id,
      organization_id: organizationPublicId,
      seq: last ? Number(last.seq) + 1 : 1,
      type: entry.type,
      occurred_at: (entry.occurredAt ?? new Date()).toISOString(),
      actor: entry.actor,
      api_key_id: entry.apiKeyId ?? null,
      // Fastify's address is an IP; anything else (a proxy's odd X-Forwarded-For) is recorded as unknown.
      client_address: entry.clientAddress && isIP(entry.clientAddress) !== 0 ? entry.clientAddress : null,
      // Secret-shaped values (in a report's URL, say) are redacted, never recorded.
      data: redactSecrets(entry.data ?? {}),
    };
    let stored: StoredAuditRecord;
    try {
      stored = chainNext(previous, content);
    } catch (e) {
      // The record must not take down what it records (a revocation commits with it): what cannot
      // be recorded of its data (too large, not JSON) is left out, and says so.
      if (!(e instanceof AuditRecordError)) throw e;
      this.logger.error({ msg: 'audit data refused; recorded without it', type: entry.type, error: e.message });
      stored = chainNext(previous, { ...content, client_address: null, data: { data_refused: true } });
    }
    await tx.query(
      `INSERT INTO auth.audit_events (id, organization_id, seq, type, occurred_at, actor_kind, actor_id, api_key_id, client_address, data, prev_hash, hash)
       VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        uuid,
        entry.organizationId,
        stored.seq,
        stored.type,
        stored.occurred_at,
        stored.actor.kind,
        stored.actor.id,
        stored.api_key_id,
        stored.client_address,
        JSON.stringify(stored.data),
        stored.prev_hash,
        stored.hash,
      ],
    );
    const event = streamEvent(stored);
    const check = validateAuditEvent(event);
    if (!check.ok) throw new Error(`audit event fails its schema: ${check.errors.join('; ')}`);
    await enqueueEvents(tx, 'auth', AUDIT_TOPIC, [{ id: uuid, key: organizationPublicId, payload: event }]);
    return stored;
  }

  /**
   * Records in a transaction of its own (log-ins, alerts: nothing else to commit with). A failure is
   * the caller's to handle; `recordQuietly` logs it instead, for events that must not fail a request
   * that already succeeded.
   */
  async recordNow(entry: AuditEntry, options: { lockTimeoutMs?: number } = {}): Promise<StoredAuditRecord | null> {
    return this.db.transaction(async (tx) => {
      if (options.lockTimeoutMs) await tx.query(`SET LOCAL lock_timeout = '${Math.floor(options.lockTimeoutMs)}ms'`);
      return this.record(tx, entry);
    });
  }

  /**
   * For records a request must not wait on or fail for (a failed log-in, an alert, a log-out): it
   * waits at most half a second for the organization's turn, so a flood of them (strangers failing
   * log-ins for a known email) queues nobody's log-in behind it and holds no connection long.
   */
  async recordQuietly(entry: AuditEntry): Promise<void> {
    try {
      await this.recordNow(entry, { lockTimeoutMs: 500 });
    } catch (e) {
      this.logger.error({ msg: 'audit record not written', type: entry.type, organization_id: toPublicId('org', entry.organizationId), error: String(e) });
    }
  }

  /** Newest first, Stripe list shape; filters by type and key; scoped to the organization. */
  async list(organizationId: string, query: AuditListQuery): Promise<{ data: StoredAuditRecord[]; hasMore: boolean }> {
    const params: unknown[] = [organizationId];
    const where = ['organization_id = $1'];
    if (query.type) {
      params.push(query.type);
      where.push(`type = $${params.length}`);
    }
    if (query.apiKeyId) {
      params.push(query.apiKeyId);
      where.push(`api_key_id = $${params.length}`);
    }
    if (query.startingAfter) {
      params.push(parsePublicId('evt', query.startingAfter));
      // The cursor is a record of this organization; another's id finds no seq and ends the list.
      where.push(`seq < (SELECT seq FROM auth.audit_events WHERE id = $${params.length} AND organization_id = $1)`);
    }
    params.push(query.limit + 1);
    const rows = (await this.db.query(`SELECT * FROM auth.audit_events WHERE ${where.join(' AND ')} ORDER BY seq DESC LIMIT $${params.length}`, params)) as Row[];
    return { data: rows.slice(0, query.limit).map(recordOf), hasMore: rows.length > query.limit };
  }

  /** The organization's records in chain order, a page at a time (for verify-audit). */
  async *chain(organizationId: string, pageSize = 1000): AsyncGenerator<StoredAuditRecord> {
    let after = 0;
    for (;;) {
      const rows = (await this.db.query(`SELECT * FROM auth.audit_events WHERE organization_id = $1 AND seq > $2 ORDER BY seq LIMIT $3`, [
        organizationId,
        after,
        pageSize,
      ])) as Row[];
      for (const row of rows) yield recordOf(row);
      if (rows.length < pageSize) return;
      after = Number(rows[rows.length - 1].seq);
    }
  }
}

function streamEvent(record: StoredAuditRecord): AuditEventV1 {
  return {
    specversion: '1.0',
    id: record.id,
    source: EVENT_SOURCE,
    type: AUDIT_EVENT_V1,
    subject: record.organization_id,
    time: record.occurred_at,
    datacontenttype: 'application/json',
    data: record as unknown as AuditEventV1['data'],
  };
}

import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  API_KEYS_TOPIC,
  ApiKeyChange,
  ApiKeyEvent,
  AuditEventType,
  AuthTopicEvent,
  RevocationEvent,
  REVOCATIONS_TOPIC,
  toPublicId,
  validateApiKeyEvent,
  validateAuthTopicEvent,
  validateRevocationEvent,
} from '@invoicing/contracts';
import { enqueueEvents, EventPublisher, markPublished, OutgoingMessage } from '@invoicing/event-bus';
import { EventEmitter } from 'node:events';
import { DataSource, EntityManager } from 'typeorm';
import { markKeyRevoked } from '../keys/api-keys.service';
import { PendingRevocationRecord, SessionStore } from '../sessions/session-store';
import { revocationEvents } from './revocation-events.factory';
import { AuditEntry, AuditLog, derivedAuditId } from '../audit/audit-log';
import { apiKeysChanged } from '../lifecycle/key-events';

/** The Kafka publisher shared by the outbox (direct sends) and the relay. */
export const EVENT_PUBLISHER = Symbol('EVENT_PUBLISHER');

/**
 * SCAN steps of ~1,000 keys per sweep (every 5 s): about 200,000 keys a minute, a few milliseconds
 * of Redis time per sweep, so an orphaned record is found within minutes even among millions of keys.
 */
const SCAN_CALLS_PER_SWEEP = 20;

/** One pending record: its key's list and its exact text (what LREM removes). */
function retryKey(record: PendingRevocationRecord): string {
  return `${record.apiKeyUuid}\n${record.raw}`;
}

/** As the relay sends an outbox row: key = API key id, CloudEvents structured mode. */
function toMessage(event: RevocationEvent): OutgoingMessage {
  return { key: event.subject, value: JSON.stringify(event), headers: { 'content-type': 'application/cloudevents+json; charset=UTF-8' } };
}

/**
 * Moves revocations from Redis (where the session scripts record them atomically with the
 * revocation itself) into the Postgres outbox. Until that insert succeeds the record stays pending
 * in Redis and the sweeper retries it: no revocation is lost between the two stores.
 */
@Injectable()
export class RevocationOutbox {
  private readonly logger = new Logger(RevocationOutbox.name);
  /** Emits 'enqueued' after an insert so the relay publishes at once instead of at its next poll. */
  readonly signals = new EventEmitter();
  /** Records this process could not move (Postgres down, usually), retried at every sweep. */
  private readonly retries = new Map<string, PendingRevocationRecord>();

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly sessions: SessionStore,
    @Inject(EVENT_PUBLISHER) private readonly publisher: EventPublisher,
    private readonly audit: AuditLog,
  ) {}

  /**
   * Best effort now; on failure the sweeper retries. Never throws.
   *
   * The events are also sent to Kafka at once, beside the durable path rather than after it: the
   * outbox insert and the relay's locking read took ~5-10 ms before the first byte reached the
   * broker, and a revocation should reach the resource services before the caller even reads our
   * answer. The outbox row is written either way; once the direct send is acknowledged it is marked
   * published, otherwise the relay publishes it (and may publish it twice if the two race: delivery
   * is at least once, events carry ids, and applying a revocation twice changes nothing).
   */
  async enqueue(record: PendingRevocationRecord): Promise<boolean> {
    let events: RevocationEvent[];
    try {
      events = revocationEvents(record);
      for (const event of events) {
        const check = validateRevocationEvent(event);
        if (!check.ok) throw new Error(`revocation event fails its schema: ${check.errors.join('; ')}`);
      }
    } catch (e) {
      this.logger.error({ msg: 'revocation event cannot be built; kept pending in Redis', event_id: record.event.event_id, error: String(e) });
      this.retries.set(retryKey(record), record);
      return false;
    }
    const direct = this.publisher.publish(REVOCATIONS_TOPIC, events.map(toMessage)).then(
      () => true,
      () => false,
    );
    try {
      if (await this.insert(record, events)) this.signals.emit('enqueued');
      await this.sessions.ackPending(record);
    } catch (e) {
      this.logger.warn({ msg: 'revocation kept pending in Redis; the sweeper will retry', event_id: record.event.event_id, error: String(e) });
      this.retries.set(retryKey(record), record);
      return false;
    }
    this.retries.delete(retryKey(record));
    void direct.then(async (sent) => {
      if (sent && (await this.markPublished(events))) return;
      this.signals.emit('enqueued');
    });
    return true;
  }

  /**
   * Events that commit with the change they announce (an expiry, a new allowlist, an expiry
   * notice), written in the caller's transaction; call {@link committed} once it has committed.
   * Throws when an event fails its schema, which rolls the change back with it.
   */
  async enqueueInTransaction(tx: EntityManager, events: AuthTopicEvent[]): Promise<void> {
    for (const event of events) {
      const check = validateAuthTopicEvent(event);
      if (!check.ok) throw new Error(`${event.type} fails its schema: ${check.errors.join('; ')}`);
    }
    if (events.length === 0) return;
    await enqueueEvents(tx, 'auth', REVOCATIONS_TOPIC, events.map((e) => ({ id: e.id, key: e.subject, payload: e })));
  }

  /**
   * What the keys' owners are told of by webhook (`invoicing.auth.api_key_changed.v1`), written in
   * the caller's transaction for the relay alone to publish, on `auth.api-keys.v1`: a topic kept 30
   * days, so a webhook service down for longer than the revocation topic's two hours loses none.
   * Call {@link committed} once the transaction has committed. Throws when an event fails its
   * schema, which rolls the change back with it.
   */
  async enqueueKeyChanges(tx: EntityManager, events: ApiKeyEvent[]): Promise<void> {
    for (const event of events) {
      const check = validateApiKeyEvent(event);
      if (!check.ok) throw new Error(`${event.type} fails its schema: ${check.errors.join('; ')}`);
    }
    if (events.length === 0) return;
    await enqueueEvents(tx, 'auth', API_KEYS_TOPIC, events.map((e) => ({ id: e.id, key: e.subject, payload: e })));
  }

  /** Wakes the relay: what was enqueued in a transaction that has now committed goes out at once. */
  committed(): void {
    this.signals.emit('enqueued');
  }

  private async markPublished(events: RevocationEvent[]): Promise<boolean> {
    try {
      await markPublished(this.db, 'auth', events.map((e) => e.id));
      return true;
    } catch {
      return false;
    }
  }

  /**
   * Retries what this process failed to move (at once, every sweep), then takes the next bounded
   * step of the scan for records orphaned by a process that died (SessionStore.scanPendingStep).
   */
  async sweep(scanCalls = SCAN_CALLS_PER_SWEEP): Promise<number> {
    const due = new Map(this.retries);
    for (const record of await this.sessions.scanPendingStep(scanCalls)) due.set(retryKey(record), record);
    let moved = 0;
    for (const record of due.values()) {
      if (await this.enqueue(record)) moved += 1;
    }
    return moved;
  }

  /** True when it wrote events only the relay sends (which must then be woken). */
  private async insert(record: PendingRevocationRecord, events: RevocationEvent[]): Promise<boolean> {
    let tellsRelay = false;
    await this.db.transaction(async (tx) => {
      if (record.event.reason === 'revoked_by_user' || record.event.reason === 'exposed') {
        // The key's status and its event commit together: a revoked key is always announced.
        await markKeyRevoked(tx, record.apiKeyUuid, record.event.revoked_at);
      }
      if (record.event.reason === 'exposed') {
        // Where the secret was found, for the owner's banner (the first report wins).
        const url = exposureUrl(record);
        await tx.query(
          `UPDATE auth.api_keys SET exposed_at = COALESCE(exposed_at, to_timestamp($2::bigint / 1000.0)), exposed_url = COALESCE(exposed_url, $3) WHERE id = $1`,
          [record.apiKeyUuid, record.event.revoked_at, url],
        );
      }
      // ...and so does its audit record (idempotent: a retried insert finds it by its id).
      const audit = auditEntryOf(record);
      if (audit) await this.audit.record(tx, audit);
      // One statement for every part; they share created_at and are published in order of id.
      await enqueueEvents(tx, 'auth', REVOCATIONS_TOPIC, events.map((e) => ({ id: e.id, key: e.subject, payload: e })));
      // Told to the owner's webhook endpoints (api_key.revoked, api_key.exposed), with the key as
      // it now is, on the key changes' own topic; its id comes from the revocation's, so a retried
      // insert writes it once. It goes by the relay alone, not by the direct send: the key's owner
      // is not racing an attacker.
      const change = TOLD_REVOCATIONS[record.event.reason];
      if (change) {
        const told = await apiKeysChanged(tx, [record.apiKeyUuid], change, new Date(Number(record.event.revoked_at)), record.event.event_id);
        await this.enqueueKeyChanges(tx, told);
        tellsRelay = told.length > 0;
      }
    });
    return tellsRelay;
  }
}

/** What of a revocation the key's owner is told by webhook: a key revoked, by its owner or for its exposure. */
const TOLD_REVOCATIONS: Partial<Record<PendingRevocationRecord['event']['reason'], ApiKeyChange>> = {
  revoked_by_user: 'revoked',
  exposed: 'exposed',
};

/** Sessions named in an audit record of a reuse: enough to find them, bounded for thousands. */
const AUDITED_SESSION_IDS = 20;

/**
 * The audit record of a revocation (ADR 0024): a key revoked by its owner or exposed, a refresh
 * token reused. Its id comes from the revocation's event id, so a retried insert records it once.
 * The sessions an RFC 7009 call or a roll ends are not separate records (the roll has its own).
 */
const AUDITED_REVOCATIONS: Partial<Record<PendingRevocationRecord['event']['reason'], AuditEventType>> = {
  revoked_by_user: 'api_key.revoked',
  exposed: 'api_key.exposed',
  refresh_token_reuse: 'refresh_token.reuse_detected',
};

function auditEntryOf(record: PendingRevocationRecord): AuditEntry | null {
  const { event, actor } = record;
  const type = AUDITED_REVOCATIONS[event.reason];
  if (type === undefined) return null;
  const apiKeyId = toPublicId('key', record.apiKeyUuid);
  const sessionIds = [...new Set(event.session_ids)];
  return {
    id: auditIdOf(event.event_id),
    type,
    organizationId: event.org,
    // A reuse is the key's doing (its id is the record's key); a user's revocation names the user.
    actor: actor?.kind === 'user' ? { kind: 'user', id: actor.id } : actor?.kind === 'api_key' || type === 'refresh_token.reuse_detected' ? { kind: 'api_key', id: apiKeyId } : { kind: 'system', id: null },
    apiKeyId,
    clientAddress: actor?.address ?? null,
    occurredAt: new Date(Number(event.revoked_at)),
    data: {
      sessions_ended: sessionIds.length,
      ...(type === 'refresh_token.reuse_detected' ? { session_ids: sessionIds.slice(0, AUDITED_SESSION_IDS) } : {}),
      ...(actor?.data ?? {}),
    },
  };
}

/**
 * The audit record's id, derived from the revocation's event id: the same on a retry (so the record
 * is written once), and never equal to it, since the event id is already an outbox row's id (the
 * revocation event's) and the audit record's stream event is another row of the same table.
 */
function auditIdOf(eventId: string): string {
  return derivedAuditId(`audit/${eventId}`);
}

/** Stored and shown to the owner: no control characters (a NUL would fail the update itself). */
function exposureUrl(record: PendingRevocationRecord): string | null {
  const url = record.actor?.data?.url ?? '';
  return [...url].filter((c) => c.charCodeAt(0) > 0x1f && c.charCodeAt(0) !== 0x7f).join('').slice(0, 2048) || null;
}

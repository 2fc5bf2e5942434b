import { Inject, Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { RevocationEvent, REVOCATIONS_TOPIC, validateRevocationEvent } from '@invoicing/contracts';
import { enqueueEvents, EventPublisher, markPublished, OutgoingMessage } from '@invoicing/event-bus';
import { EventEmitter } from 'node:events';
import { DataSource } from 'typeorm';
import { markKeyRevoked } from '../keys/api-keys.service';
import { PendingRevocationRecord, SessionStore } from '../sessions/session-store';
import { revocationEvents } from './revocation-events.factory';

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
      await this.insert(record, events);
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

  private async insert(record: PendingRevocationRecord, events: RevocationEvent[]): Promise<void> {
    await this.db.transaction(async (tx) => {
      if (record.event.reason === 'revoked_by_user') {
        // The key's status and its event commit together: a revoked key is always announced.
        await markKeyRevoked(tx, record.apiKeyUuid, record.event.revoked_at);
      }
      // One statement for every part; they share created_at and are published in order of id.
      await enqueueEvents(tx, 'auth', REVOCATIONS_TOPIC, events.map((e) => ({ id: e.id, key: e.subject, payload: e })));
    });
  }
}

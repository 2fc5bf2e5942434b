import { Injectable, Logger } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { REVOCATIONS_TOPIC, validateRevocationEvent } from '@invoicing/contracts';
import { EventEmitter } from 'node:events';
import { DataSource } from 'typeorm';
import { PendingRevocationRecord, SessionStore } from '../sessions/session-store';
import { revocationEvents } from './revocation-events.factory';

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

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly sessions: SessionStore,
  ) {}

  /** Best effort now; on failure the sweeper retries. Never throws. */
  async enqueue(record: PendingRevocationRecord): Promise<boolean> {
    try {
      await this.insert(record);
      await this.sessions.ackPending(record);
      this.signals.emit('enqueued');
      return true;
    } catch (e) {
      this.logger.warn({ msg: 'revocation kept pending in Redis; the sweeper will retry', event_id: record.event.event_id, error: String(e) });
      return false;
    }
  }

  /** Re-enqueues every revocation still pending in Redis. */
  async sweep(): Promise<number> {
    let moved = 0;
    for await (const record of this.sessions.scanPending()) {
      if (await this.enqueue(record)) moved += 1;
    }
    return moved;
  }

  private async insert(record: PendingRevocationRecord): Promise<void> {
    const events = revocationEvents(record);
    for (const event of events) {
      const check = validateRevocationEvent(event);
      if (!check.ok) throw new Error(`revocation event fails its schema: ${check.errors.join('; ')}`);
    }
    await this.db.transaction(async (tx) => {
      if (record.event.reason === 'revoked_by_user') {
        // The key's status and its event commit together: a revoked key is always announced.
        await tx.query(
          `UPDATE auth.api_keys SET status = 'revoked', revoked_at = COALESCE(revoked_at, to_timestamp($2::bigint / 1000.0))
            WHERE id = $1`,
          [record.apiKeyUuid, record.event.revoked_at],
        );
      }
      // One statement for every part; they share created_at and are published in order of id.
      await tx.query(
        `INSERT INTO auth.outbox (id, topic, message_key, payload, created_at)
         SELECT e.id, $1, e.message_key, e.payload, now()
           FROM unnest($2::uuid[], $3::text[], $4::jsonb[]) AS e(id, message_key, payload)
         ON CONFLICT (id) DO NOTHING`,
        [REVOCATIONS_TOPIC, events.map((e) => e.id), events.map((e) => e.subject), events.map((e) => JSON.stringify(e))],
      );
    });
  }
}

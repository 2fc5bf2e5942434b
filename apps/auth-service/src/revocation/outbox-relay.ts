import { Inject, Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { EventPublisher } from '@invoicing/event-bus';
import { DataSource } from 'typeorm';
import { RevocationOutbox } from './revocation-outbox.service';

export const EVENT_PUBLISHER = Symbol('EVENT_PUBLISHER');

interface OutboxRow {
  id: string;
  topic: string;
  message_key: string;
  payload: Record<string, unknown>;
}

const BATCH = 100;
const POLL_MS = 1000;
const SWEEP_MS = 5000;
const MAX_BACKOFF_MS = 2000;

/**
 * Publishes outbox rows to Kafka, oldest first, and marks them published in the same transaction
 * that locked them (`FOR UPDATE SKIP LOCKED`, so several instances share the work). Delivery is at
 * least once: a crash between send and commit publishes a row again, with the same CloudEvents id.
 */
@Injectable()
export class OutboxRelay implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(OutboxRelay.name);
  private timer: NodeJS.Timeout | null = null;
  private sweeper: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private again = false;
  private stopped = false;
  private failures = 0;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    @Inject(EVENT_PUBLISHER) private readonly publisher: EventPublisher,
    private readonly outbox: RevocationOutbox,
  ) {}

  onApplicationBootstrap(): void {
    this.outbox.signals.on('enqueued', () => this.kick());
    this.sweeper = setInterval(() => void this.outbox.sweep().then((n) => n > 0 && this.kick(), () => undefined), SWEEP_MS);
    this.sweeper.unref();
    void this.outbox.sweep().catch(() => undefined);
    this.kick();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.sweeper) clearInterval(this.sweeper);
    await this.running;
    await this.publisher.close();
  }

  /** Drains now (or right after the drain in progress). */
  kick(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    this.running = this.drainAll().finally(() => {
      this.running = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.kick();
        return;
      }
      const delay = this.failures > 0 ? Math.min(MAX_BACKOFF_MS, 250 * 2 ** (this.failures - 1)) : POLL_MS;
      this.timer = setTimeout(() => this.kick(), delay);
      this.timer.unref();
    });
  }

  /** Publishes until the outbox is empty or a publish fails. Returns the number published. */
  async drainAll(): Promise<number> {
    let total = 0;
    for (;;) {
      let published: number;
      try {
        published = await this.drainBatch();
      } catch (e) {
        this.failures += 1;
        if (this.failures === 1 || this.failures % 20 === 0) {
          this.logger.warn({ msg: 'outbox relay cannot publish yet; will retry', attempts: this.failures, error: String(e) });
        }
        return total;
      }
      if (this.failures > 0) this.logger.log({ msg: 'outbox relay publishing again', after_failures: this.failures });
      this.failures = 0;
      total += published;
      if (published < BATCH) return total;
    }
  }

  private async drainBatch(): Promise<number> {
    const result = await this.db.transaction(async (tx): Promise<{ published: number; error?: unknown }> => {
      const rows: OutboxRow[] = await tx.query(
        `SELECT id, topic, message_key, payload FROM auth.outbox
          WHERE published_at IS NULL ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [BATCH],
      );
      if (rows.length === 0) return { published: 0 };
      try {
        const byTopic = new Map<string, OutboxRow[]>();
        for (const row of rows) byTopic.set(row.topic, [...(byTopic.get(row.topic) ?? []), row]);
        for (const [topic, batch] of byTopic) {
          await this.publisher.publish(
            topic,
            batch.map((r) => ({
              key: r.message_key,
              value: JSON.stringify(r.payload),
              headers: { 'content-type': 'application/cloudevents+json; charset=UTF-8' },
            })),
          );
        }
      } catch (e) {
        await tx.query(`UPDATE auth.outbox SET attempts = attempts + 1, last_error = $2 WHERE id = ANY($1::uuid[])`, [
          rows.map((r) => r.id),
          String(e).slice(0, 500),
        ]);
        // Commit the attempt count; the rows stay unpublished and locked rows are released.
        return { published: 0, error: e ?? new Error('publish failed') };
      }
      await tx.query(`UPDATE auth.outbox SET published_at = now(), attempts = attempts + 1 WHERE id = ANY($1::uuid[])`, [
        rows.map((r) => r.id),
      ]);
      return { published: rows.length };
    });
    if (result.error !== undefined) throw result.error;
    return result.published;
  }
}

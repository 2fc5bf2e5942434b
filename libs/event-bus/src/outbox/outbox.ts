import { Logger } from '@nestjs/common';
import { context, ROOT_CONTEXT } from '@opentelemetry/api';
import type { EventPublisher } from '../event-publisher';
import { activeTraceHeaders } from '../tracing/message-tracing';
import type { DataSource, EntityManager } from 'typeorm';
import { createHash } from 'node:crypto';

/**
 * SQL of a service's outbox table: the one definition, used by every service's migration (the auth
 * service's revocations and the resource services' domain events).
 */
export function outboxTableSql(schema: string): string[] {
  return [
    `CREATE TABLE ${schema}.outbox (
      id uuid PRIMARY KEY,
      topic text NOT NULL,
      message_key text NOT NULL,
      payload jsonb NOT NULL,
      created_at timestamptz NOT NULL DEFAULT now(),
      published_at timestamptz,
      attempts integer NOT NULL DEFAULT 0,
      last_error text
    )`,
    `CREATE INDEX outbox_unpublished_idx ON ${schema}.outbox (created_at) WHERE published_at IS NULL`,
  ];
}

/**
 * The trace context column (ADR 0028), added to every service's outbox by a migration of its own:
 * the `traceparent` (and `tracestate`) active when the row was written, which the relay hands on with
 * the message so that its consumers join the trace of the request that wrote it, however late the
 * relay sends it. Null when tracing was off or no span was active.
 */
export function outboxTraceContextSql(schema: string): string[] {
  return [`ALTER TABLE ${schema}.outbox ADD COLUMN trace_context jsonb`];
}

/** The trace context to store with a row written now (null: none), as a jsonb parameter. */
function traceContextParam(): string | null {
  const headers = activeTraceHeaders();
  return headers ? JSON.stringify(headers) : null;
}

/** One event for a service's outbox. */
export interface OutboxEvent {
  id: string;
  topic: string;
  key: string;
  payload: unknown;
}

/**
 * The statement that adds `event` to the outbox, with its parameters numbered from `$first`: for a
 * caller that writes the event in the same statement as something else (a create writes its event and
 * its stored response together, as one data-modifying CTE).
 */
export function outboxInsert(schema: string, event: OutboxEvent, first = 1, from?: string): { text: string; values: unknown[] } {
  const p = (i: number) => `$${first + i}`;
  // `from`: a CTE name; the event is written only if that CTE returned a row (its change was made).
  const row = `${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, ${p(4)}, now()`;
  return {
    text: `INSERT INTO ${schema}.outbox (id, topic, message_key, payload, trace_context, created_at) ${from ? `SELECT ${row} FROM ${from}` : `VALUES (${row})`}
     ON CONFLICT (id) DO NOTHING`,
    values: [event.id, event.topic, event.key, JSON.stringify(event.payload), traceContextParam()],
  };
}

/** Adds an event to the outbox inside the caller's transaction: it commits with the change it announces. */
export async function enqueueEvent(tx: EntityManager | DataSource, schema: string, event: OutboxEvent): Promise<void> {
  const { text, values } = outboxInsert(schema, event);
  await tx.query(text, values);
}

/**
 * An outbox row's id derived from `name` (a UUID of version 8, RFC 9562: custom, from SHA-256): the
 * same change written again (a retried move, an attempt that reports a change another already wrote)
 * gets the same id, and the outbox's `ON CONFLICT (id) DO NOTHING` keeps one row, one event.
 */
export function nameBasedEventId(name: string): string {
  const b = createHash('sha256').update(name).digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x80;
  b[8] = (b[8] & 0x3f) | 0x80;
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Adds several events of one topic in one statement, inside the caller's transaction; they share
 * created_at (and the trace context) and are published in order of id. An id already there is left
 * as it is.
 */
export async function enqueueEvents(
  tx: EntityManager | DataSource,
  schema: string,
  topic: string,
  events: ReadonlyArray<{ id: string; key: string; payload: unknown }>,
): Promise<void> {
  await tx.query(
    `INSERT INTO ${schema}.outbox (id, topic, message_key, payload, trace_context, created_at)
     SELECT e.id, $1, e.message_key, e.payload, $5::jsonb, now()
       FROM unnest($2::uuid[], $3::text[], $4::jsonb[]) AS e(id, message_key, payload)
     ON CONFLICT (id) DO NOTHING`,
    [topic, events.map((e) => e.id), events.map((e) => e.key), events.map((e) => JSON.stringify(e.payload)), traceContextParam()],
  );
}

/**
 * Marks rows published that the caller sent itself, past the relay (a service that sends at once
 * and keeps the row for the relay only if that send fails). A row the relay already took stays as is.
 */
export async function markPublished(db: EntityManager | DataSource, schema: string, ids: readonly string[]): Promise<void> {
  await db.query(`UPDATE ${schema}.outbox SET published_at = now(), attempts = attempts + 1 WHERE id = ANY($1::uuid[]) AND published_at IS NULL`, [ids]);
}

interface OutboxRow {
  id: string;
  topic: string;
  message_key: string;
  payload: Record<string, unknown>;
  trace_context: Record<string, string> | null;
}

const BATCH = 100;
const POLL_MS = 1000;
const MAX_BACKOFF_MS = 2000;
/**
 * How long a kick waits by default before draining, so that the events of the commits of that moment
 * go out as one batch marked by one statement and one commit, not one drain per create (ADR 0036).
 * Well inside the second a payment may take to show on its invoice.
 */
export const OUTBOX_COALESCE_MS = 20;

/**
 * Publishes a schema's outbox to Kafka, oldest first, in batches of up to 100 rows, each batch marked
 * sent by one statement in the transaction that locked its rows (`FOR UPDATE SKIP LOCKED`: instances
 * share the work). Woken by `kick()` after a commit (by default 20 ms later, so that concurrent commits
 * share a batch), polls every second, backs off to at most 2 s while Kafka is down; a relay that fell
 * behind drains batch after batch. At least once: a crash between send and commit publishes a row
 * again with the same CloudEvents id, so the mark is committed without waiting for the disk
 * (`synchronous_commit = off`): a mark lost in a crash only means a duplicate, which every consumer
 * takes (ADR 0036). Each message's send span continues the trace stored with its row (ADR 0028).
 */
export class OutboxRelay {
  private readonly logger: Logger;
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;
  private again = false;
  private kicked = false;
  private stopped = true;
  private failures = 0;

  constructor(
    private readonly db: DataSource,
    private readonly schema: string,
    private readonly publisher: EventPublisher,
    /** How long a kick waits for more commits before draining; 0 drains at once (revocations: latency first). */
    private readonly coalesceMs = OUTBOX_COALESCE_MS,
  ) {
    this.logger = new Logger(`OutboxRelay(${schema})`);
  }

  start(): void {
    this.stopped = false;
    this.kick();
  }

  /** Nest lifecycle hooks, for when the relay is provided directly. */
  onApplicationBootstrap(): void {
    this.start();
  }

  onModuleDestroy(): Promise<void> {
    return this.stop();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.kicked = false;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    await this.publisher.close();
  }

  /** Drains in a moment (or right after the drain in progress), with whatever has committed by then. */
  kick(): void {
    if (this.stopped || this.kicked) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.coalesceMs === 0) {
      this.drainSoon();
      return;
    }
    this.kicked = true;
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.kicked = false;
      this.drainSoon();
    }, this.coalesceMs);
    this.timer.unref();
  }

  /** Drains now (or right after the drain in progress). */
  private drainSoon(): void {
    if (this.stopped) return;
    if (this.running) {
      this.again = true;
      return;
    }
    if (this.timer) clearTimeout(this.timer);
    // Out of the caller's trace: a kick comes from a request that has just committed, but a drain
    // publishes whatever is there (each row carries its own trace context) and its polls go on after
    // the request; its timers would otherwise inherit the request's context as well.
    this.running = context.with(ROOT_CONTEXT, () => this.drainAll()).finally(() => {
      this.running = null;
      if (this.stopped) return;
      if (this.again) {
        this.again = false;
        this.kick();
        return;
      }
      const delay = this.failures > 0 ? Math.min(MAX_BACKOFF_MS, 250 * 2 ** (this.failures - 1)) : POLL_MS;
      this.timer = setTimeout(() => this.drainSoon(), delay);
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
    const table = `${this.schema}.outbox`;
    const result = await this.db.transaction(async (tx): Promise<{ published: number; error?: unknown }> => {
      await tx.query('SET LOCAL synchronous_commit TO off');
      const rows: OutboxRow[] = await tx.query(
        `SELECT id, topic, message_key, payload, trace_context FROM ${table}
          WHERE published_at IS NULL ORDER BY created_at, id LIMIT $1 FOR UPDATE SKIP LOCKED`,
        [BATCH],
      );
      if (rows.length === 0) return { published: 0 };
      const ids = rows.map((r) => r.id);
      try {
        const byTopic = new Map<string, OutboxRow[]>();
        for (const row of rows) byTopic.set(row.topic, [...(byTopic.get(row.topic) ?? []), row]);
        for (const [topic, batch] of byTopic) {
          await this.publisher.publish(
            topic,
            batch.map((r) => ({
              key: r.message_key,
              value: JSON.stringify(r.payload),
              // The row's trace context: the publisher's send span becomes its child.
              headers: { 'content-type': 'application/cloudevents+json; charset=UTF-8', ...r.trace_context },
            })),
          );
        }
      } catch (e) {
        await tx.query(`UPDATE ${table} SET attempts = attempts + 1, last_error = $2 WHERE id = ANY($1::uuid[])`, [
          ids,
          String(e).slice(0, 500),
        ]);
        // Commit the attempt count; the rows stay unpublished and are unlocked.
        return { published: 0, error: e ?? new Error('publish failed') };
      }
      await tx.query(`UPDATE ${table} SET published_at = now(), attempts = attempts + 1 WHERE id = ANY($1::uuid[])`, [ids]);
      return { published: rows.length };
    });
    if (result.error !== undefined) throw result.error;
    return result.published;
  }
}

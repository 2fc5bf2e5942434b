import { Injectable, Logger, OnApplicationShutdown, OnModuleInit } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { newId, parsePublicId, toPublicId, WEBHOOK_ENDPOINTS_TOPIC, WEBHOOK_LIMITS } from '@invoicing/contracts';
import { enqueueEvents, OutboxRelay } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import { queryRows } from '../database/query';
import { WebhookConfig } from '../config';
import { SecretBox } from '../signing/secret-box';
import { SignatureScheme, signedHeaders, SigningSecret } from '../signing/standard-webhooks';
import { endpointDisabledEvent } from './endpoint-disabled-event';
import { AttemptResult, sendAttempt } from './sender';

/** A claimed delivery with what its attempt needs. */
interface Claimed {
  endpoint_id: string;
  event_id: string;
  organization_id: string;
  attempts: number;
  /** The hold this instance took (as Postgres prints it, to the microsecond): the result is recorded only while it is still this one. */
  lock_token: string;
  url: string;
  signature_scheme: SignatureScheme;
  secret: Buffer;
  previous_secret: Buffer | null;
  payload: string;
}

/** What the health update of a failed attempt returns. */
interface HealthRow {
  disabled: boolean;
  organization_id: string;
  url: string;
  failing_since: Date;
  disabled_at: Date;
}

/** Extra hold on a claimed delivery beyond its attempt's deadline (the result's write, a GC pause). */
const LOCK_MARGIN_MS = 30_000;
/** Endpoints looked at per claim: the oldest due first. */
const ENDPOINTS_PER_CLAIM = 500;
/** How often the retention purge runs (each instance). */
const PURGE_EVERY_MS = 10 * 60_000;

/**
 * Sends due deliveries. Any number of instances run it: a delivery is claimed with `FOR UPDATE SKIP
 * LOCKED` and held (`locked_until`) for its attempt, so no event is sent to an endpoint twice at once.
 * Fairness: at most WEBHOOK_CONCURRENCY_PER_ENDPOINT attempts of one endpoint are in flight on all
 * instances together (checked in the claim), so a slow or failing endpoint holds that many slots and
 * no more, and the oldest due endpoint is served first. Each failed attempt schedules the next from
 * WEBHOOK_RETRY_SCHEDULE; after the last, the delivery is `failed` (replayable). An endpoint whose
 * attempts have all failed for WEBHOOK_DISABLE_AFTER_MS is disabled (`disabled_reason: failing`),
 * and `webhook_endpoint_disabled.v1` goes to the outbox in the same transaction (the auth service
 * records it in the organization's audit log).
 */
@Injectable()
export class DeliveryWorker implements OnModuleInit, OnApplicationShutdown {
  private readonly logger = new Logger(DeliveryWorker.name);
  private inFlight = 0;
  private readonly running = new Set<Promise<void>>();
  private draining = false;
  private again = false;
  private stopped = true;
  private timer: NodeJS.Timeout | null = null;
  private purgeTimer: NodeJS.Timeout | null = null;
  private purging = false;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: WebhookConfig,
    private readonly box: SecretBox,
    private readonly relay: OutboxRelay,
  ) {}

  onModuleInit(): void {
    this.stopped = false;
    this.schedule(0);
    // The purge on a timer of its own: a long one never holds up the claims.
    this.purgeTimer = setInterval(() => void this.purgeExpired().catch((e: Error) => this.logger.warn(`purge: ${e.message}`)), PURGE_EVERY_MS);
    this.purgeTimer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    if (this.purgeTimer) clearInterval(this.purgeTimer);
    // Attempts in flight finish (each within its deadline) and record their result.
    await Promise.allSettled([...this.running]);
  }

  /** Something is due now (an event stored, a resend): look at once rather than at the next poll. */
  kick(): void {
    if (!this.stopped) this.schedule(0);
  }

  private schedule(delayMs: number): void {
    if (this.timer) clearTimeout(this.timer);
    this.timer = setTimeout(() => {
      this.timer = null;
      void this.drain();
    }, delayMs);
  }

  private async drain(): Promise<void> {
    if (this.draining) {
      this.again = true;
      return;
    }
    this.draining = true;
    try {
      do {
        this.again = false;
        const room = this.config.WEBHOOK_CONCURRENCY - this.inFlight;
        if (room <= 0 || this.stopped) break;
        const claimed = await this.claim(room);
        for (const delivery of claimed) this.track(this.attempt(delivery));
        if (claimed.length === room) this.again = true;
      } while (this.again && !this.stopped);
    } catch (e) {
      this.logger.warn(`delivery loop: ${(e as Error).message}`);
    } finally {
      this.draining = false;
      if (!this.stopped && !this.timer) this.schedule(this.config.WEBHOOK_POLL_MS);
    }
  }

  private track(work: Promise<void>): void {
    this.inFlight++;
    const done = work.finally(() => {
      this.inFlight--;
      this.running.delete(done);
      // A slot is free: anything due waits no longer than this.
      this.kick();
    });
    this.running.add(done);
  }

  /**
   * Claims up to `limit` due deliveries. Only enabled endpoints, and only those with room: fewer than
   * WEBHOOK_CONCURRENCY_PER_ENDPOINT attempts in flight (on every instance), in an organization with
   * fewer than WEBHOOK_CONCURRENCY_PER_ORGANIZATION: a tenant's dead endpoints can hold no more than
   * that, however many it registers. The oldest due endpoint first.
   */
  private claim(limit: number): Promise<Claimed[]> {
    return queryRows(
      this.db,
      `WITH RECURSIVE busy AS (
         SELECT endpoint_id, organization_id, count(*) AS n FROM webhooks.deliveries
         WHERE status = 'pending' AND locked_until IS NOT NULL AND locked_until > now() GROUP BY endpoint_id, organization_id
       ), busy_org AS (
         SELECT organization_id, sum(n) AS n FROM busy GROUP BY organization_id
       ), waiting AS (
         -- The endpoints with pending deliveries, one index probe each (a skip scan of the pending
         -- index): a backlog of thousands of rows costs no more than a few (grouping every pending
         -- row cost about 22 ms a claim with 20,000 of them).
         (SELECT endpoint_id FROM webhooks.deliveries WHERE status = 'pending' ORDER BY endpoint_id LIMIT 1)
         UNION ALL
         SELECT (SELECT d.endpoint_id FROM webhooks.deliveries d WHERE d.status = 'pending' AND d.endpoint_id > w.endpoint_id ORDER BY d.endpoint_id LIMIT 1)
         FROM waiting w WHERE w.endpoint_id IS NOT NULL
       ), due AS (
         SELECT w.endpoint_id, f.first_due
         FROM waiting w
         CROSS JOIN LATERAL (
           SELECT d.next_attempt_at AS first_due FROM webhooks.deliveries d
           WHERE d.endpoint_id = w.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= now()
             AND (d.locked_until IS NULL OR d.locked_until <= now())
           ORDER BY d.next_attempt_at LIMIT 1
         ) f
         WHERE w.endpoint_id IS NOT NULL
       ), candidates AS (
         SELECT due.endpoint_id, due.first_due, ep.organization_id, $2 - coalesce(b.n, 0) AS room, coalesce(bo.n, 0) AS org_busy
         FROM due
         JOIN webhooks.endpoints ep ON ep.id = due.endpoint_id AND ep.status = 'enabled' AND ep.deleted_at IS NULL
         LEFT JOIN busy b ON b.endpoint_id = due.endpoint_id
         LEFT JOIN busy_org bo ON bo.organization_id = ep.organization_id
         WHERE coalesce(b.n, 0) < $2 AND coalesce(bo.n, 0) < $5
         ORDER BY due.first_due LIMIT $4
       ), picked AS (
         SELECT p.endpoint_id, p.event_id, c.first_due, c.organization_id, c.org_busy, p.next_attempt_at
         FROM candidates c
         CROSS JOIN LATERAL (
           SELECT d.endpoint_id, d.event_id, d.next_attempt_at FROM webhooks.deliveries d
           WHERE d.endpoint_id = c.endpoint_id AND d.status = 'pending' AND d.next_attempt_at <= now()
             AND (d.locked_until IS NULL OR d.locked_until <= now())
           ORDER BY d.next_attempt_at
           LIMIT c.room
           FOR UPDATE OF d SKIP LOCKED
         ) p
       ), fair AS (
         SELECT endpoint_id, event_id, first_due, next_attempt_at,
           org_busy + row_number() OVER (PARTITION BY organization_id ORDER BY first_due, next_attempt_at) AS org_nth
         FROM picked
       ), chosen AS (
         SELECT endpoint_id, event_id FROM fair WHERE org_nth <= $5 ORDER BY first_due, next_attempt_at LIMIT $1
       )
       UPDATE webhooks.deliveries d SET locked_until = now() + make_interval(secs => $3::double precision / 1000)
       FROM chosen, webhooks.endpoints ep, webhooks.events ev
       WHERE d.endpoint_id = chosen.endpoint_id AND d.event_id = chosen.event_id AND ep.id = d.endpoint_id AND ev.id = d.event_id
         AND (d.locked_until IS NULL OR d.locked_until <= now())
       RETURNING d.endpoint_id, d.event_id, d.organization_id, d.attempts, d.locked_until::text AS lock_token, ep.url, ep.signature_scheme, ep.secret,
         CASE WHEN ep.previous_secret_expires_at > now() THEN ep.previous_secret END AS previous_secret, ev.payload`,
      [
        limit,
        this.config.WEBHOOK_CONCURRENCY_PER_ENDPOINT,
        this.config.WEBHOOK_ATTEMPT_TIMEOUT_MS + LOCK_MARGIN_MS,
        ENDPOINTS_PER_CLAIM,
        this.config.WEBHOOK_CONCURRENCY_PER_ORGANIZATION,
      ],
    );
  }

  private secretsOf(d: Claimed): SigningSecret[] {
    const secrets = [{ scheme: d.signature_scheme, key: this.box.open(d.secret, d.endpoint_id) }];
    if (d.previous_secret) secrets.push({ scheme: d.signature_scheme, key: this.box.open(d.previous_secret, d.endpoint_id) });
    return secrets;
  }

  private async attempt(d: Claimed): Promise<void> {
    let result: AttemptResult;
    try {
      const id = toPublicId('wev', d.event_id);
      const headers = signedHeaders(this.secretsOf(d), id, Math.floor(Date.now() / 1000), d.payload);
      result = await sendAttempt(new URL(d.url), d.payload, headers, {
        allowPrivate: this.config.WEBHOOK_ALLOW_PRIVATE_URLS,
        timeoutMs: this.config.WEBHOOK_ATTEMPT_TIMEOUT_MS,
      });
    } catch (e) {
      this.logger.error(`delivery attempt to endpoint ${toPublicId('wep', d.endpoint_id)}: ${(e as Error).message}`);
      result = { ok: false, status: null, latencyMs: 0, error: 'internal_error', body: null };
    }
    await this.record(d, result).catch((e: Error) => {
      // The delivery stays held until locked_until and is then attempted again: at least once.
      this.logger.warn(`could not record an attempt (it will be made again): ${e.message}`);
    });
  }

  /**
   * The attempt, the delivery's next state and the endpoint's health, in one statement. A failed
   * attempt may disable the endpoint: that statement then runs in a transaction that also puts
   * `webhook_endpoint_disabled.v1` in the outbox, so the event exists exactly when the endpoint was
   * disabled (a crash or a Postgres error leaves neither, and the attempt's result is recorded again
   * after its hold). A success never disables: it stays one statement.
   */
  private async record(d: Claimed, r: AttemptResult): Promise<void> {
    const attempt = d.attempts + 1;
    const schedule = this.config.retryScheduleMs;
    const exhausted = attempt >= schedule.length;
    const nextDelayMs = exhausted ? null : schedule[attempt];
    const sql = `WITH a AS (
         INSERT INTO webhooks.attempts (id, organization_id, endpoint_id, event_id, attempt, succeeded, response_status, latency_ms, error, response_body)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10)
       ), d AS (
         -- Only while the hold is still this attempt's: a delivery deleted, resent or replayed in
         -- the meantime (or, past the hold, claimed again elsewhere) is not overwritten.
         UPDATE webhooks.deliveries SET attempts = $5, locked_until = NULL,
           status = CASE WHEN $6 THEN 'succeeded' WHEN $11::double precision IS NULL THEN 'failed' ELSE 'pending' END,
           next_attempt_at = CASE WHEN $6 OR $11::double precision IS NULL THEN NULL ELSE now() + make_interval(secs => $11::double precision / 1000) END
         WHERE endpoint_id = $3 AND event_id = $4 AND status = 'pending' AND locked_until = $13::timestamptz
       ), health AS (
         UPDATE webhooks.endpoints SET
           failing_since = CASE WHEN $6 THEN NULL ELSE coalesce(failing_since, now()) END,
           status = CASE WHEN NOT $6 AND status = 'enabled' AND failing_since < now() - make_interval(secs => $12::double precision / 1000) THEN 'disabled' ELSE status END,
           disabled_reason = CASE WHEN NOT $6 AND status = 'enabled' AND failing_since < now() - make_interval(secs => $12::double precision / 1000) THEN 'failing' ELSE disabled_reason END
         WHERE id = $3
         -- Disabled for failing, by this attempt or by another one in flight beside it: the event's
         -- id comes from the endpoint and failing_since, so the outbox keeps one. Not for a failing
         -- streak started over meanwhile (a new URL): failing_since is then recent.
         RETURNING status = 'disabled' AND disabled_reason = 'failing' AND NOT $6
             AND failing_since < now() - make_interval(secs => $12::double precision / 1000) AS disabled,
           organization_id, url, failing_since, now() AS disabled_at
       ), paused AS (
         -- Disabled now: its other deliveries wait (no next attempt) until it is enabled again.
         UPDATE webhooks.deliveries SET next_attempt_at = NULL
         WHERE endpoint_id = $3 AND status = 'pending' AND locked_until IS NULL AND (SELECT disabled FROM health)
       )
       SELECT disabled, organization_id, url, failing_since, disabled_at FROM health`;
    const params = [
      parsePublicId('wat', newId('wat')),
      d.organization_id,
      d.endpoint_id,
      d.event_id,
      attempt,
      r.ok,
      r.status,
      r.latencyMs,
      r.error,
      r.body === null ? null : r.body.split(String.fromCharCode(0)).join(''),
      nextDelayMs,
      this.config.WEBHOOK_DISABLE_AFTER_MS,
      d.lock_token,
    ];
    if (r.ok) {
      await queryRows(this.db, sql, params);
      return;
    }
    const disabled = await this.db.transaction(async (tx) => {
      const [row] = await queryRows<HealthRow>(tx, sql, params);
      if (!row?.disabled) return false;
      const event = endpointDisabledEvent({
        endpointId: d.endpoint_id,
        organizationId: row.organization_id,
        url: row.url,
        failingSince: row.failing_since,
        disabledAt: row.disabled_at,
      });
      await enqueueEvents(tx, 'webhooks', WEBHOOK_ENDPOINTS_TOPIC, [{ id: event.id, key: event.subject, payload: event }]);
      return true;
    });
    if (disabled) {
      this.relay.kick();
      this.logger.warn(`endpoint ${toPublicId('wep', d.endpoint_id)} disabled: every attempt has failed for ${this.config.WEBHOOK_DISABLE_AFTER_MS} ms`);
    }
  }

  /**
   * Events past the retention go, with their deliveries and attempts: batches of 5,000 until none
   * is left or 20 s have gone by (the next run goes on), so that retention keeps up with any volume
   * without one long statement.
   */
  private async purgeExpired(): Promise<void> {
    if (this.purging) return;
    this.purging = true;
    try {
      const until = Date.now() + 20_000;
      while (Date.now() < until && !this.stopped) {
        const deleted = await queryRows<{ id: string }>(
          this.db,
          `DELETE FROM webhooks.events WHERE id IN (SELECT id FROM webhooks.events WHERE created_at < now() - make_interval(days => $1) LIMIT 5000) RETURNING id`,
          [WEBHOOK_LIMITS.eventRetentionDays],
        );
        if (deleted.length < 5000) break;
      }
    } finally {
      this.purging = false;
    }
  }
}

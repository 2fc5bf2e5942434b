import { Injectable, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { Clock } from '../common/clock';
import { RevocationOutbox } from '../revocation/revocation-outbox.service';
import { apiKeyExpired, apiKeyExpiring, apiKeysChanged } from './key-events';
import { AuditLog } from '../audit/audit-log';
import { toPublicId } from '@invoicing/contracts';

/**
 * Four times a second: within a second of the instant (the sweep's period, plus the relay and one fetch
 * of the resource services), every resource service refuses the key's access tokens, although
 * nobody asked the auth service anything. The query reads a small partial index of live keys that
 * expire, so it costs well under a millisecond when nothing is due.
 */
export const KEY_EXPIRY_SWEEP_MS = 250;
/** The notice (api_key_expiring.v1) goes out this long before the expiry. */
export const EXPIRY_NOTICE_MS = 7 * 24 * 3600 * 1000;
const BATCH = 100;

interface DueRow {
  id: string;
  organization_id: string;
  client_id: string;
  name: string;
  expires_at: Date;
}

/**
 * Announces expiries (ADR 0023). In one transaction per sweep it marks the keys whose
 * `expires_at` has passed `expired` and writes their api_key_revoked.v1 events (reason `expired`),
 * and marks the keys that expire within seven days as noticed and writes their
 * api_key_expiring.v1 events (and, for their owners' webhooks, api_key_changed.v1 on
 * auth.api-keys.v1); the outbox relay publishes them at commit. Rows are locked with SKIP
 * LOCKED, so several instances sweep side by side without announcing a key twice.
 *
 * The token endpoints do not wait for this: they compare `expires_at` with the clock on every
 * exchange and refresh (isUsable). The sweep is what reaches the resource services, which only
 * learn of an expiry from the event, and what the key list shows as `status`.
 */
@Injectable()
export class KeyExpirySweep implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(KeyExpirySweep.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<unknown> | null = null;

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly outbox: RevocationOutbox,
    private readonly clock: Clock,
    private readonly audit: AuditLog,
  ) {}

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.tick(), KEY_EXPIRY_SWEEP_MS);
    this.timer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.running;
  }

  /** One sweep at a time: a slow one (Postgres slow) is not overlapped by the next. */
  private tick(): void {
    this.running ??= this.sweep()
      .catch((e: unknown) => this.logger.warn({ msg: 'key expiry sweep failed; retrying at the next one', error: String(e) }))
      .finally(() => (this.running = null));
  }

  /**
   * Announces everything due now, a batch per transaction until none is full (so a thousand keys
   * expiring at once, in one organization or many, are all announced in this sweep).
   */
  async sweep(): Promise<{ expired: number; noticed: number }> {
    const total = { expired: 0, noticed: 0 };
    for (;;) {
      const batch = await this.sweepBatch();
      total.expired += batch.expired;
      total.noticed += batch.noticed;
      if (batch.expired < BATCH && batch.noticed < BATCH) return total;
    }
  }

  private async sweepBatch(): Promise<{ expired: number; noticed: number }> {
    const now = new Date(this.clock.now());
    const result = await this.db.transaction(async (tx) => {
      const expired = (await tx.query(
        `UPDATE auth.api_keys k SET status = 'expired'
           FROM (SELECT id FROM auth.api_keys
                  WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $1
                  ORDER BY expires_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) due
          WHERE k.id = due.id
          RETURNING k.id, k.organization_id, k.client_id, k.name, k.expires_at`,
        [now],
      )) as [DueRow[], number];
      const noticed = (await tx.query(
        `UPDATE auth.api_keys k SET expiry_notice_sent_at = $1
           FROM (SELECT id FROM auth.api_keys
                  WHERE status = 'active' AND expires_at IS NOT NULL AND expires_at <= $2 AND expiry_notice_sent_at IS NULL
                  ORDER BY expires_at LIMIT ${BATCH} FOR UPDATE SKIP LOCKED) due
          WHERE k.id = due.id
          RETURNING k.id, k.organization_id, k.client_id, k.name, k.expires_at`,
        [now, new Date(now.getTime() + EXPIRY_NOTICE_MS)],
      )) as [DueRow[], number];
      const ref = (r: DueRow) => ({ id: r.id, organizationId: r.organization_id, clientId: r.client_id });
      const events = [
        // The instant of the expiry, not of the sweep: the revocation covers every token issued before it.
        ...expired[0].map((r) => apiKeyExpired(ref(r), new Date(r.expires_at))),
        ...noticed[0].map((r) => apiKeyExpiring({ ...ref(r), name: r.name, expiresAt: new Date(r.expires_at) }, now)),
      ];
      if (events.length > 0) await this.outbox.enqueueInTransaction(tx, events);
      // The notice again, as the owner's webhook endpoints are told it (api_key.expiring), with the
      // key: on the key changes' own topic.
      await this.outbox.enqueueKeyChanges(tx, await apiKeysChanged(tx, noticed[0].map((r) => r.id), 'expiring', now));
      // Organization by organization in one order, so two instances' sweeps take the audit logs'
      // locks in the same order and never wait on each other in a cycle.
      for (const r of [...expired[0]].sort((a, b) => a.organization_id.localeCompare(b.organization_id))) {
        await this.audit.record(tx, {
          type: 'api_key.expired',
          organizationId: r.organization_id,
          actor: { kind: 'system', id: null },
          apiKeyId: toPublicId('key', r.id),
          occurredAt: new Date(r.expires_at),
          data: { expires_at: new Date(r.expires_at).toISOString() },
        });
      }
      return { expired: expired[0].length, noticed: noticed[0].length };
    });
    if (result.expired + result.noticed > 0) {
      this.outbox.committed();
      this.logger.log({ msg: 'key expiries announced', ...result });
    }
    return result;
  }
}

import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { bearerChallenge, CallerIdentity } from '@invoicing/auth-guard';
import { isWebhookEventType, parsePublicId, toPublicId, WEBHOOK_LIMITS, WEBHOOK_TEST_EVENT_TYPE } from '@invoicing/contracts';
import { compileBody, parseListQuery, ProblemException, toPage } from '@invoicing/service-kit';
import type { DataSource } from 'typeorm';
import { queryRows } from '../database/query';
import { DeliveryWorker } from '../delivery/delivery-worker';
import { ActionLimit } from '../endpoints/action-limit';
import { parseInstant } from './list-query';

const validateResend = compileBody<{ endpoint?: string }>({
  type: 'object',
  additionalProperties: false,
  properties: { endpoint: { type: 'string', pattern: '^wep_[0-9a-f]{32}$' } },
});

/**
 * What a token may read of the events: those whose scope (the resource of the object, or
 * `webhook_endpoints`) it holds `read:` of. A token with none of them is refused, naming the scope
 * a caller most likely lacks.
 */
function readableScopes(caller: CallerIdentity): string[] {
  const scopes = [...caller.scopes].filter((s) => s.startsWith('read:')).map((s) => s.slice('read:'.length));
  if (scopes.length === 0) {
    throw new ProblemException(403, 'The access token lacks a read: scope of any event (read:invoices, read:webhook_endpoints, ...).', undefined, {
      'WWW-Authenticate': bearerChallenge('insufficient_scope', undefined, 'read:webhook_endpoints'),
    });
  }
  return scopes;
}

@Injectable()
export class EventsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly worker: DeliveryWorker,
    private readonly actions: ActionLimit,
  ) {}

  /** Newest first, 30 days back at most; `type`, `created[gte]`, `created[lte]`. */
  async list(caller: CallerIdentity, query: unknown) {
    const scopes = readableScopes(caller);
    const { limit, startingAfter, filters } = parseListQuery(query, 'wev', {
      type: (v) => (isWebhookEventType(v) || v === WEBHOOK_TEST_EVENT_TYPE ? v : null),
      'created[gte]': parseInstant,
      'created[lte]': parseInstant,
    });
    const rows: Array<{ payload: string }> = await queryRows(this.db, 
      `SELECT payload FROM webhooks.events
       WHERE organization_id = $1 AND scope = ANY($2) AND ($3::uuid IS NULL OR id < $3) AND ($4::text IS NULL OR type = $4)
         AND created_at >= greatest(coalesce($5::timestamptz, '-infinity'), now() - make_interval(days => $7))
         AND ($6::timestamptz IS NULL OR created_at <= $6)
       ORDER BY id DESC LIMIT $8`,
      [caller.organizationId, scopes, startingAfter, filters.type ?? null, filters['created[gte]'] ?? null, filters['created[lte]'] ?? null, WEBHOOK_LIMITS.eventRetentionDays, limit + 1],
    );
    return toPage(rows, limit, (r) => JSON.parse(r.payload) as unknown);
  }

  private async find(caller: CallerIdentity, publicId: string): Promise<{ id: string; payload: string }> {
    const scopes = readableScopes(caller);
    const id = parsePublicId('wev', publicId);
    const rows = id
      ? await queryRows<{ id: string; payload: string }>(this.db, 
          `SELECT id, payload FROM webhooks.events WHERE id = $1 AND organization_id = $2 AND scope = ANY($3) AND created_at >= now() - make_interval(days => $4)`,
          [id, caller.organizationId, scopes, WEBHOOK_LIMITS.eventRetentionDays],
        )
      : [];
    if (rows.length === 0) throw ProblemException.notFound('event');
    return rows[0];
  }

  async get(caller: CallerIdentity, publicId: string) {
    return JSON.parse((await this.find(caller, publicId)).payload) as unknown;
  }

  /**
   * Sends an event again: to the endpoint named, or to every endpoint it was delivered to. A new
   * attempt at once and a fresh schedule; the same `webhook-id`, so a receiver that already has it
   * can tell.
   */
  async resend(caller: CallerIdentity, publicId: string, body: unknown) {
    const { endpoint } = validateResend(body ?? {});
    const event = await this.find(caller, publicId);
    this.actions.take(caller.organizationId);
    const endpointId = endpoint ? parsePublicId('wep', endpoint) : null;
    if (endpointId) {
      const found = await queryRows(this.db, `SELECT 1 FROM webhooks.endpoints WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL AND status = 'enabled'`, [
        endpointId,
        caller.organizationId,
      ]);
      if (found.length === 0) throw ProblemException.validation([{ field: 'endpoint', code: 'not_found', message: 'No enabled webhook endpoint of the organization has this id.' }]);
      await queryRows(this.db, 
        `INSERT INTO webhooks.deliveries (endpoint_id, event_id, organization_id, next_attempt_at) VALUES ($1, $2, $3, now())
         ON CONFLICT (endpoint_id, event_id) DO UPDATE SET status = 'pending', attempts = 0, next_attempt_at = now(), locked_until = NULL
           WHERE webhooks.deliveries.status <> 'pending'`,
        [endpointId, event.id, caller.organizationId],
      );
    } else {
      await queryRows(this.db, 
        `UPDATE webhooks.deliveries d SET status = 'pending', attempts = 0, next_attempt_at = now(), locked_until = NULL
         FROM webhooks.endpoints e
         WHERE d.event_id = $1 AND d.organization_id = $2 AND d.status <> 'pending' AND e.id = d.endpoint_id AND e.deleted_at IS NULL AND e.status = 'enabled'`,
        [event.id, caller.organizationId],
      );
    }
    this.worker.kick();
    const pending: Array<{ endpoint_id: string }> = await queryRows(this.db, `SELECT endpoint_id FROM webhooks.deliveries WHERE event_id = $1 AND status = 'pending'`, [event.id]);
    return { object: 'webhook_resend', event: publicId, endpoints: pending.map((p) => toPublicId('wep', p.endpoint_id)) };
  }
}

import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import type { CallerIdentity } from '@invoicing/auth-guard';
import {
  CREATE_WEBHOOK_ENDPOINT_SCHEMA,
  CreateWebhookEndpointRequest,
  newId,
  parsePublicId,
  REPLAY_WEBHOOK_DELIVERIES_SCHEMA,
  toPublicId,
  UPDATE_WEBHOOK_ENDPOINT_SCHEMA,
  UpdateWebhookEndpointRequest,
  WEBHOOK_LIMITS,
  WEBHOOK_PAYLOAD_VERSION,
  WEBHOOK_TEST_EVENT_TYPE,
} from '@invoicing/contracts';
import { compileBody, parseListQuery, ProblemException, toPage } from '@invoicing/service-kit';
import type { DataSource } from 'typeorm';
import { queryRows } from '../database/query';
import { WebhookConfig } from '../config';
import { DeliveryWorker } from '../delivery/delivery-worker';
import { checkUrl, UrlRefused } from '../delivery/url-policy';
import { SecretBox } from '../signing/secret-box';
import { newSigningSecret, publicKeyOf } from '../signing/standard-webhooks';
import { ActionLimit } from './action-limit';
import { ENDPOINT_COLUMNS, EndpointRow, endpointView } from './endpoint-view';

const validateCreate = compileBody<CreateWebhookEndpointRequest>(CREATE_WEBHOOK_ENDPOINT_SCHEMA);
const validateUpdate = compileBody<UpdateWebhookEndpointRequest>(UPDATE_WEBHOOK_ENDPOINT_SCHEMA);
const validateReplay = compileBody<{ since: string }>(REPLAY_WEBHOOK_DELIVERIES_SCHEMA);

/** How long a rolled secret keeps signing beside its successor. */
export const SECRET_OVERLAP_MS = 24 * 3600_000;

/** Stored form: ['*'] alone when "all" is asked for, otherwise the types as given. */
function normaliseTypes(types: string[]): string[] {
  return types.includes('*') ? ['*'] : types;
}

@Injectable()
export class EndpointsService {
  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly config: WebhookConfig,
    private readonly box: SecretBox,
    private readonly worker: DeliveryWorker,
    private readonly actions: ActionLimit,
  ) {}

  private async checkedUrl(url: string): Promise<string> {
    try {
      return (await checkUrl(url, { allowPrivate: this.config.WEBHOOK_ALLOW_PRIVATE_URLS })).toString();
    } catch (e) {
      if (e instanceof UrlRefused) throw ProblemException.validation([{ field: 'url', code: 'invalid_url', message: `The url ${e.message}.` }]);
      throw e;
    }
  }

  async create(caller: CallerIdentity, body: unknown) {
    const request = validateCreate(body);
    const url = await this.checkedUrl(request.url);
    const id = parsePublicId('wep', newId('wep'))!;
    const { secret, shown } = newSigningSecret(request.signature_scheme ?? 'v1');
    // The ceiling is checked in the insert itself, under a per-organization advisory lock: two
    // concurrent creates cannot both take the last place.
    const rows: EndpointRow[] = await this.db.transaction(async (tx) => {
      await queryRows(tx, `SELECT pg_advisory_xact_lock(hashtextextended('webhook-endpoints:' || $1, 0))`, [caller.organizationId]);
      return queryRows(tx, 
        `INSERT INTO webhooks.endpoints (id, organization_id, url, description, enabled_events, signature_scheme, secret)
         SELECT $1, $2, $3, $4, $5, $6, $7
         WHERE (SELECT count(*) FROM webhooks.endpoints WHERE organization_id = $2 AND deleted_at IS NULL) < $8
         RETURNING ${ENDPOINT_COLUMNS}`,
        [
          id,
          caller.organizationId,
          url,
          request.description ?? null,
          normaliseTypes(request.enabled_events),
          secret.scheme,
          this.box.seal(secret.key, id),
          WEBHOOK_LIMITS.endpointsPerOrganization,
        ],
      );
    });
    if (rows.length === 0) {
      throw new ProblemException(409, `An organization may register at most ${WEBHOOK_LIMITS.endpointsPerOrganization} webhook endpoints; delete one first.`);
    }
    return endpointView(rows[0], shown);
  }

  async list(caller: CallerIdentity, query: unknown) {
    const { limit, startingAfter } = parseListQuery(query, 'wep', {});
    const rows: EndpointRow[] = await queryRows(this.db, 
      `SELECT ${ENDPOINT_COLUMNS} FROM webhooks.endpoints
       WHERE organization_id = $1 AND deleted_at IS NULL AND ($2::uuid IS NULL OR id < $2)
       ORDER BY id DESC LIMIT $3`,
      [caller.organizationId, startingAfter, limit + 1],
    );
    return toPage(rows, limit, (r) => endpointView(r));
  }

  /** The caller's endpoint, or a 404 (another organization's id, a malformed one and a deleted one alike). */
  async find(caller: CallerIdentity, publicId: string): Promise<EndpointRow> {
    const id = parsePublicId('wep', publicId);
    const rows: EndpointRow[] = id
      ? await queryRows(this.db, `SELECT ${ENDPOINT_COLUMNS} FROM webhooks.endpoints WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL`, [
          id,
          caller.organizationId,
        ])
      : [];
    if (rows.length === 0) throw ProblemException.notFound('webhook endpoint');
    return rows[0];
  }

  async get(caller: CallerIdentity, publicId: string) {
    const row = await this.find(caller, publicId);
    return endpointView(row, row.signature_scheme === 'v1a' ? (await this.publicKey(row)) ?? undefined : undefined);
  }

  private async publicKey(row: EndpointRow): Promise<string | null> {
    const [{ secret }] = await queryRows<{ secret: Buffer }>(this.db, `SELECT secret FROM webhooks.endpoints WHERE id = $1`, [row.id]);
    return publicKeyOf({ scheme: 'v1a', key: this.box.open(secret, row.id) });
  }

  async update(caller: CallerIdentity, publicId: string, body: unknown) {
    const request = validateUpdate(body);
    const row = await this.find(caller, publicId);
    const url = request.url === undefined ? null : await this.checkedUrl(request.url);
    const [updated]: EndpointRow[] = await queryRows(this.db, 
      `UPDATE webhooks.endpoints SET
         url = coalesce($3, url),
         description = CASE WHEN $4::boolean THEN $5 ELSE description END,
         enabled_events = coalesce($6, enabled_events),
         status = coalesce($7, status),
         disabled_reason = CASE WHEN $7 = 'disabled' THEN 'requested' WHEN $7 = 'enabled' THEN NULL ELSE disabled_reason END,
         -- A new URL, or enabled again: its failures so far say nothing about what comes next.
         failing_since = CASE WHEN $7 = 'enabled' OR $3::text IS NOT NULL THEN NULL ELSE failing_since END,
         updated_at = now()
       WHERE id = $1 AND organization_id = $2 AND deleted_at IS NULL
       RETURNING ${ENDPOINT_COLUMNS}`,
      [
        row.id,
        caller.organizationId,
        url,
        request.description !== undefined,
        request.description ?? null,
        request.enabled_events ? normaliseTypes(request.enabled_events) : null,
        request.status ?? null,
      ],
    );
    if (!updated) throw ProblemException.notFound('webhook endpoint');
    if (request.status === 'disabled') {
      // Paused: no next attempt, so they neither go out nor weigh on the claims, until enabled again.
      await queryRows(this.db, `UPDATE webhooks.deliveries SET next_attempt_at = NULL WHERE endpoint_id = $1 AND status = 'pending' AND locked_until IS NULL`, [row.id]);
    } else if (request.status === 'enabled') {
      await queryRows(this.db, `UPDATE webhooks.deliveries SET next_attempt_at = now() WHERE endpoint_id = $1 AND status = 'pending' AND next_attempt_at IS NULL`, [row.id]);
      this.worker.kick();
    }
    return endpointView(updated);
  }

  /** Deleted: never sent anything again; its pending deliveries are dropped, its history kept 30 days. */
  async remove(caller: CallerIdentity, publicId: string) {
    const row = await this.find(caller, publicId);
    await this.db.transaction(async (tx) => {
      await queryRows(tx, `UPDATE webhooks.endpoints SET deleted_at = now(), status = 'disabled', disabled_reason = 'requested', updated_at = now() WHERE id = $1`, [row.id]);
      await queryRows(tx, `UPDATE webhooks.deliveries SET status = 'failed', next_attempt_at = NULL WHERE endpoint_id = $1 AND status = 'pending'`, [row.id]);
    });
    return { object: 'webhook_endpoint' as const, id: toPublicId('wep', row.id), deleted: true };
  }

  /**
   * A new secret; the old one keeps signing beside it for 24 hours (both signatures in the header),
   * so a receiver can switch without losing a delivery. Rolling again within the overlap ends the
   * oldest at once (two secrets sign at most).
   */
  async rollSecret(caller: CallerIdentity, publicId: string) {
    const row = await this.find(caller, publicId);
    const { secret, shown } = newSigningSecret(row.signature_scheme);
    const [updated]: EndpointRow[] = await queryRows(this.db, 
      `UPDATE webhooks.endpoints SET previous_secret = secret, previous_secret_expires_at = now() + make_interval(secs => $3::double precision / 1000),
         secret = $2, updated_at = now()
       WHERE id = $1 AND deleted_at IS NULL RETURNING ${ENDPOINT_COLUMNS}`,
      [row.id, this.box.seal(secret.key, row.id), SECRET_OVERLAP_MS],
    );
    // Deleted between the read and the roll.
    if (!updated) throw ProblemException.notFound('webhook endpoint');
    return endpointView(updated, shown);
  }

  /** A `webhook_endpoint.test` event, delivered to this endpoint only (whatever its types). */
  async sendTest(caller: CallerIdentity, publicId: string) {
    const row = await this.find(caller, publicId);
    this.actions.take(caller.organizationId);
    const eventId = newId('wev');
    const createdAt = new Date().toISOString();
    const payload = JSON.stringify({
      object: 'event',
      id: eventId,
      type: WEBHOOK_TEST_EVENT_TYPE,
      api_version: WEBHOOK_PAYLOAD_VERSION,
      created_at: createdAt,
      data: { object: endpointView(row) },
    });
    const uuid = parsePublicId('wev', eventId)!;
    await this.db.transaction(async (tx) => {
      await queryRows(tx, `INSERT INTO webhooks.events (id, organization_id, source_id, type, scope, payload, created_at) VALUES ($1, $2, $3, $4, 'webhook_endpoints', $5, $6)`, [
        uuid,
        caller.organizationId,
        `test:${eventId}`,
        WEBHOOK_TEST_EVENT_TYPE,
        payload,
        createdAt,
      ]);
      await queryRows(tx, `INSERT INTO webhooks.deliveries (endpoint_id, event_id, organization_id, next_attempt_at) VALUES ($1, $2, $3, now())`, [row.id, uuid, caller.organizationId]);
    });
    this.worker.kick();
    return JSON.parse(payload) as unknown;
  }

  /** The attempts made to deliver to this endpoint, newest first. */
  async attempts(caller: CallerIdentity, publicId: string, query: unknown) {
    const row = await this.find(caller, publicId);
    const { limit, startingAfter, filters } = parseListQuery(query, 'wat', { event: (v) => parsePublicId('wev', v) });
    const rows: AttemptRow[] = await queryRows(this.db, 
      `SELECT id, event_id, attempt, succeeded, response_status, latency_ms, error, created_at FROM webhooks.attempts
       WHERE endpoint_id = $1 AND organization_id = $2 AND ($3::uuid IS NULL OR id < $3) AND ($4::uuid IS NULL OR event_id = $4)
       ORDER BY id DESC LIMIT $5`,
      [row.id, caller.organizationId, startingAfter, filters.event ?? null, limit + 1],
    );
    return toPage(rows, limit, attemptView);
  }

  /**
   * Every failed delivery to this endpoint of an event created since `since` is sent again (at
   * once, with a fresh schedule; the same `webhook-id`). At most WEBHOOK_LIMITS.replayMaxDeliveries.
   */
  async replay(caller: CallerIdentity, publicId: string, body: unknown) {
    const { since } = validateReplay(body);
    const row = await this.find(caller, publicId);
    if (row.status !== 'enabled') throw new ProblemException(409, 'The endpoint is disabled; enable it before replaying deliveries to it.');
    this.actions.take(caller.organizationId);
    const result: Array<{ event_id: string }> = await queryRows(this.db, 
      `UPDATE webhooks.deliveries d SET status = 'pending', attempts = 0, next_attempt_at = now(), locked_until = NULL
       FROM (SELECT d2.event_id FROM webhooks.deliveries d2 JOIN webhooks.events e ON e.id = d2.event_id
             WHERE d2.endpoint_id = $1 AND d2.status = 'failed' AND e.created_at >= $2
             ORDER BY e.created_at LIMIT $3) picked
       WHERE d.endpoint_id = $1 AND d.event_id = picked.event_id
       RETURNING d.event_id`,
      [row.id, since, WEBHOOK_LIMITS.replayMaxDeliveries],
    );
    this.worker.kick();
    return { object: 'webhook_replay', endpoint: toPublicId('wep', row.id), deliveries_queued: result.length };
  }
}

interface AttemptRow {
  id: string;
  event_id: string;
  attempt: number;
  succeeded: boolean;
  response_status: number | null;
  latency_ms: number;
  error: string | null;
  created_at: Date;
}

function attemptView(r: AttemptRow) {
  return {
    object: 'webhook_attempt' as const,
    id: toPublicId('wat', r.id),
    event: toPublicId('wev', r.event_id),
    attempt: r.attempt,
    outcome: r.succeeded ? ('succeeded' as const) : ('failed' as const),
    response_status: r.response_status,
    latency_ms: r.latency_ms,
    error: r.error,
    created_at: r.created_at.toISOString(),
  };
}

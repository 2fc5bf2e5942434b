import { isDependencyFailure, ProblemException } from '@invoicing/service-kit';
import { createHash } from 'node:crypto';
import type { DataSource, EntityManager } from 'typeorm';
import type { OrgScope } from '../tenancy/org-scope';

/** A response worth replaying: what a create returned. */
export interface StoredResponse {
  status: number;
  body: unknown;
  location?: string;
}

export interface IdempotentResult extends StoredResponse {
  replayed: boolean;
}

const KEY = /^[\x21-\x7e]{1,255}$/;
const RETENTION_HOURS = 24;
/** An in-flight claim older than this is treated as abandoned (its process died) and taken over. */
const CLAIM_SECONDS = 60;

/** SQL of the table (one per service schema); used by each service's migration. */
export function idempotencyTableSql(schema: string): string[] {
  return [
    `CREATE TABLE ${schema}.idempotency_keys (
      organization_id uuid NOT NULL,
      key text NOT NULL,
      request_hash text NOT NULL,
      state text NOT NULL CHECK (state IN ('in_flight', 'done')),
      response_status integer,
      response_body jsonb,
      response_location text,
      created_at timestamptz NOT NULL DEFAULT now(),
      claimed_until timestamptz NOT NULL,
      PRIMARY KEY (organization_id, key)
    )`,
    `CREATE INDEX idempotency_keys_created_idx ON ${schema}.idempotency_keys (created_at)`,
  ];
}

/** Canonical JSON (sorted keys) so that the same body in another key order counts as the same. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map(canonical).join(',')}]`;
  if (value && typeof value === 'object') {
    const entries = Object.keys(value as Record<string, unknown>)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical((value as Record<string, unknown>)[k])}`);
    return `{${entries.join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}

/**
 * `Idempotency-Key` for creates (docs/api.md section 7), stored in the service's own Postgres schema:
 * the same key and body within 24 hours replays the first response; another body is 422; while the
 * first request is still running, 409. A claim is committed before the work starts, so of parallel
 * requests with one key exactly one runs.
 */
export class IdempotencyStore {
  constructor(
    private readonly db: DataSource,
    private readonly schema: string,
  ) {}

  async run(
    scope: OrgScope,
    key: string | undefined,
    endpoint: string,
    body: unknown,
    create: (tx: EntityManager) => Promise<StoredResponse>,
  ): Promise<IdempotentResult> {
    if (key === undefined) {
      return { ...(await this.db.transaction(create)), replayed: false };
    }
    if (!KEY.test(key)) throw new ProblemException(400, 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.');
    const org = scope.organizationId;
    const hash = createHash('sha256').update(`${endpoint}\n${canonical(body)}`).digest('hex');
    const table = `${this.schema}.idempotency_keys`;

    const claimed: unknown[] = await this.db.query(
      `INSERT INTO ${table} AS k (organization_id, key, request_hash, state, claimed_until)
       VALUES ($1, $2, $3, 'in_flight', now() + make_interval(secs => $4))
       ON CONFLICT (organization_id, key) DO UPDATE
         SET request_hash = EXCLUDED.request_hash, state = 'in_flight', response_status = NULL,
             response_body = NULL, response_location = NULL, created_at = now(), claimed_until = EXCLUDED.claimed_until
       WHERE k.created_at < now() - make_interval(hours => $5)
          OR (k.state = 'in_flight' AND k.claimed_until < now() AND k.request_hash = EXCLUDED.request_hash)
       RETURNING 1`,
      [org, key, hash, CLAIM_SECONDS, RETENTION_HOURS],
    );
    if (claimed.length === 0) return this.replay(org, key, hash);

    try {
      const response = await this.db.transaction(async (tx) => {
        const result = await create(tx);
        await tx.query(
          `UPDATE ${table} SET state = 'done', response_status = $3, response_body = $4, response_location = $5
            WHERE organization_id = $1 AND key = $2`,
          [org, key, result.status, JSON.stringify(result.body), result.location ?? null],
        );
        return result;
      });
      return { ...response, replayed: false };
    } catch (e) {
      if (e instanceof ProblemException && e.status < 500 && e.status !== 409) {
        // A validation failure is the answer to this body: remember it like a success.
        await this.db.query(
          `UPDATE ${table} SET state = 'done', response_status = $3, response_body = $4 WHERE organization_id = $1 AND key = $2`,
          [org, key, e.status, JSON.stringify({ detail: e.detail, errors: e.errors ?? null })],
        );
      } else {
        // Nothing was created: free the key so that a retry can run.
        await this.db
          .query(`DELETE FROM ${table} WHERE organization_id = $1 AND key = $2 AND state = 'in_flight'`, [org, key])
          .catch((cleanup: unknown) => {
            if (!isDependencyFailure(cleanup)) throw cleanup;
          });
      }
      throw e;
    }
  }

  private async replay(org: string, key: string, hash: string): Promise<IdempotentResult> {
    const rows: Array<{
      request_hash: string;
      state: string;
      response_status: number | null;
      response_body: unknown;
      response_location: string | null;
    }> = await this.db.query(
      `SELECT request_hash, state, response_status, response_body, response_location
         FROM ${this.schema}.idempotency_keys WHERE organization_id = $1 AND key = $2`,
      [org, key],
    );
    const row = rows[0];
    if (!row) throw new ProblemException(409, 'A request with this Idempotency-Key is being processed; retry shortly.');
    if (row.request_hash !== hash) {
      throw new ProblemException(422, 'This Idempotency-Key was used with a different request body.');
    }
    if (row.state !== 'done' || row.response_status === null) {
      throw new ProblemException(409, 'A request with this Idempotency-Key is still in progress; retry shortly.');
    }
    if (row.response_status >= 400) {
      const stored = row.response_body as { detail: string; errors: ProblemException['errors'] | null };
      throw new ProblemException(row.response_status, stored.detail, stored.errors ?? undefined, { 'Idempotent-Replayed': 'true' });
    }
    return {
      status: row.response_status,
      body: row.response_body,
      location: row.response_location ?? undefined,
      replayed: true,
    };
  }

  /**
   * Deletes keys past their 24 hours in batches of `batchSize`, each batch one short statement of
   * its own (no lock held across the table; rows another purger holds are skipped), until a batch
   * comes back short or `maxBatches` ran. Returns how many rows went.
   */
  async purgeExpired(batchSize = 1000, maxBatches = 100): Promise<number> {
    const table = `${this.schema}.idempotency_keys`;
    let total = 0;
    for (let batch = 0; batch < maxBatches; batch++) {
      // TypeORM answers a DELETE with [rows, rowCount] on Postgres.
      const [, count]: [unknown[], number] = await this.db.query(
        `DELETE FROM ${table} WHERE ctid IN (
           SELECT ctid FROM ${table} WHERE created_at < now() - make_interval(hours => $1)
            LIMIT $2 FOR UPDATE SKIP LOCKED)`,
        [RETENTION_HOURS, batchSize],
      );
      total += count;
      if (count < batchSize) break;
    }
    return total;
  }
}

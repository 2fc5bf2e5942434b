import { OutboxEvent, outboxInsert } from '@invoicing/event-bus';
import { ProblemException } from '@invoicing/service-kit';
import { createHash } from 'node:crypto';
import type { Pool, QueryResult } from 'pg';
import type { DataSource } from 'typeorm';
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

/** What a create's work produced: its answer, and the event announcing it (written with it). */
export interface CreateOutcome {
  response: StoredResponse;
  event?: OutboxEvent;
  /**
   * The row itself, when the work left it to be written here, in the statement that writes the event
   * and the response: `INSERT ... ON CONFLICT DO NOTHING RETURNING 1` with parameters from `$1`
   * (renumbered here). A row that conflicts writes nothing else and throws `conflict()`.
   */
  row?: { text: string; values: unknown[]; conflict(): Error };
}

/**
 * The statements of a create's transaction, on its own connection: rows back, whatever the
 * statement (no driver in between: a create is a handful of statements and each costs a round trip).
 */
export interface Sql {
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- rows are typed by the caller, as with TypeORM's query()
  query<R = any>(text: string, values?: unknown[]): Promise<R[]>;
  /** A named prepared statement: parsed and planned once per connection. */
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as above
  prepared<R = any>(name: string, text: string, values: unknown[]): Promise<R[]>;
}

const KEY = /^[\x21-\x7e]{1,255}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;
const RETENTION_HOURS = 24;

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

/** Another request with the key committed first: roll back and replay it. */
class CommittedElsewhere extends Error {}

/** A 409 answer for a key whose first request is still running. */
const IN_FLIGHT = 'A request with this Idempotency-Key is still in progress; retry shortly.';

interface StoredRow {
  request_hash: string;
  response_status: number | null;
  response_body: unknown;
  response_location: string | null;
  live: boolean;
}

/**
 * A create, under its `Idempotency-Key` when it has one (docs/api.md section 7), in **one
 * transaction with one commit**: the row, its domain event and the stored response commit together,
 * or nothing does (ADR 0036). Stored in the service's own Postgres schema:
 * - the same key and body within 24 hours replays the first response; another body is 422;
 * - while the first request runs, 409: it holds a transaction-scoped advisory lock on (organization,
 *   key), taken without waiting (`pg_try_advisory_xact_lock`), released by its commit or rollback
 *   (a process that dies mid-way leaves nothing behind: no claim to expire);
 * - the primary key of `idempotency_keys` is the final word: a request that read no stored response
 *   in the instant another committed (it took the lock just after that commit) finds the row there
 *   when it writes its own, rolls everything back and replays the first;
 * - a failure found while the work runs (an unknown reference, a duplicate: a 4xx other than 409) is
 *   stored like a success, in the same transaction, after rolling the work back to a savepoint; a
 *   server failure stores nothing, so a retry runs again.
 *
 * Four round trips for a create that references nothing: the start (BEGIN, the lock, the stored
 * response and the savepoint in one simple query), the row, its event with the response, COMMIT.
 * Each is a system call on each side and, on machines like ours, the largest share of a create's CPU
 * (docs/perf.md).
 */
export class IdempotencyStore {
  constructor(
    private readonly db: DataSource,
    private readonly schema: string,
  ) {}

  async run(scope: OrgScope, key: string | undefined, endpoint: string, body: unknown, work: (sql: Sql) => Promise<CreateOutcome>): Promise<IdempotentResult> {
    if (key !== undefined && !KEY.test(key)) throw new ProblemException(400, 'The Idempotency-Key header must be 1 to 255 visible ASCII characters.');
    const org = scope.organizationId;
    // Inlined below (a simple query has no parameters): only a uuid may be.
    if (!UUID.test(org)) throw new Error('organization id is not a uuid');
    const client = await this.pool().connect();
    const sql: Sql = {
      query: async (text, values) => (await client.query(text, values)).rows,
      prepared: async (name, text, values) => (await client.query({ name, text, values })).rows,
    };
    let broken: Error | undefined;
    try {
      if (key === undefined) {
        await client.query('BEGIN');
        const outcome = await work(sql);
        await this.write(sql, outcome, null);
        await client.query('COMMIT');
        return { ...outcome.response, replayed: false };
      }
      const hash = createHash('sha256').update(`${endpoint}\n${canonical(body)}`).digest('hex');
      // One round trip: each statement of a simple query sees what committed before it ran, so the
      // read after the lock sees the response of a request that released the lock by committing.
      const results = (await client.query(
        `BEGIN; SELECT pg_try_advisory_xact_lock(${idempotencyLockKey(this.schema, org, key)}) AS locked; ` +
          `${this.readSql(`'${org}'`, client.escapeLiteral(key))}; SAVEPOINT create_work`,
      )) as unknown as QueryResult[];
      if (results[1].rows[0]?.locked !== true) throw new ProblemException(409, IN_FLIGHT);
      const stored = liveRow(results[2].rows[0] as StoredRow | undefined);
      if (stored) {
        await client.query('ROLLBACK');
        return replay(stored, hash);
      }
      let outcome: CreateOutcome;
      try {
        outcome = await work(sql);
      } catch (e) {
        if (!(e instanceof ProblemException && e.status < 500 && e.status !== 409)) throw e;
        // A failure of this body found while working: the answer to it, kept like a success (the
        // work rolled back, the answer committed), and then given.
        await client.query('ROLLBACK TO SAVEPOINT create_work');
        await this.write(sql, { response: { status: e.status, body: { detail: e.detail, errors: e.errors ?? null } } }, { org, key, hash });
        await client.query('COMMIT');
        throw e;
      }
      await this.write(sql, outcome, { org, key, hash });
      await client.query('COMMIT');
      return { ...outcome.response, replayed: false };
    } catch (e) {
      // Whatever failed, nothing of this create stays (a no-op after COMMIT or ROLLBACK).
      await client.query('ROLLBACK').catch((rollback: unknown) => {
        broken = rollback instanceof Error ? rollback : new Error(String(rollback));
      });
      if (!(e instanceof CommittedElsewhere)) throw e;
      const rows: StoredRow[] = await this.db.query(this.readSql('$1', '$2'), [org, key]);
      const stored = liveRow(rows[0]);
      if (!stored) throw new ProblemException(409, IN_FLIGHT);
      return replay(stored, createHash('sha256').update(`${endpoint}\n${canonical(body)}`).digest('hex'));
    } finally {
      // A connection whose rollback failed is not handed to the next request.
      client.release(broken);
    }
  }

  private pool(): Pool {
    // TypeORM's Postgres driver keeps its pg Pool here: same connections, timeouts and search_path.
    return (this.db.driver as unknown as { master: Pool }).master;
  }

  private readSql(org: string, key: string): string {
    return `SELECT request_hash, response_status, response_body, response_location, created_at >= now() - make_interval(hours => ${RETENTION_HOURS}) AS live
      FROM ${this.schema}.idempotency_keys WHERE organization_id = ${org} AND key = ${key}`;
  }

  /**
   * What the create writes besides what its work wrote, in one statement (one round trip before the
   * commit): the row when the work left it here, the event, and the response under the key. The
   * event and the response are written only with the row (data-modifying CTEs reading `row`); a row
   * that conflicts throws its conflict. A row of the key still live means another request committed
   * first.
   */
  private async write(sql: Sql, outcome: CreateOutcome, under: { org: string; key: string; hash: string } | null): Promise<void> {
    const values: unknown[] = [];
    const param = (value: unknown) => `$${values.push(value)}`;
    const parts: string[] = [];
    let from: string | undefined;
    if (outcome.row) {
      const first = values.length + 1;
      values.push(...outcome.row.values);
      parts.push(`row AS (${outcome.row.text.replace(/\$(\d+)/g, (_, n: string) => `$${Number(n) + first - 1}`)})`);
      from = 'row';
    }
    if (outcome.event) {
      const outbox = outboxInsert(this.schema, outcome.event, values.length + 1, from);
      values.push(...outbox.values);
      parts.push(`event AS (${outbox.text})`);
    }
    if (under) {
      const response = outcome.response;
      const row = [param(under.org), param(under.key), param(under.hash), `'done'`, param(response.status), param(JSON.stringify(response.body)), param(response.location ?? null), 'now()', 'now()'].join(', ');
      parts.push(`kept AS (INSERT INTO ${this.schema}.idempotency_keys AS k
          (organization_id, key, request_hash, state, response_status, response_body, response_location, created_at, claimed_until)
        ${from ? `SELECT ${row} FROM ${from}` : `VALUES (${row})`}
        ON CONFLICT (organization_id, key) DO UPDATE
          SET request_hash = EXCLUDED.request_hash, state = 'done', response_status = EXCLUDED.response_status,
              response_body = EXCLUDED.response_body, response_location = EXCLUDED.response_location, created_at = now(), claimed_until = now()
        WHERE k.created_at < now() - make_interval(hours => ${RETENTION_HOURS}) OR k.response_status IS NULL
        RETURNING 1)`);
    }
    if (parts.length === 0) return;
    const counts = [from ? `(SELECT count(*) FROM row)::int AS inserted` : `1 AS inserted`, under ? `(SELECT count(*) FROM kept)::int AS kept` : `1 AS kept`];
    const text = `WITH ${parts.join(', ')} SELECT ${counts.join(', ')}`;
    // One prepared statement per resource and shape (a handful): the text is the same for every create of them.
    const [written] = await sql.prepared<{ inserted: number; kept: number }>(`w_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text, values);
    if (written.inserted === 0) throw outcome.row!.conflict();
    if (written.kept === 0) throw new CommittedElsewhere();
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

/**
 * The advisory lock of (organization, key) in this schema: 64 bits of a SHA-256. Two pairs sharing it
 * would only make one wait for the other's 409 to pass, never share a response (the row is read by
 * organization and key).
 */
export function idempotencyLockKey(schema: string, org: string, key: string): string {
  return createHash('sha256').update(`${schema}\n${org}\n${key}`).digest().readBigInt64BE(0).toString();
}

/** The stored response when it is within its 24 hours and complete (not an older version's claim). */
function liveRow(row: StoredRow | undefined): StoredRow | null {
  return row?.live && row.response_status !== null ? row : null;
}

function replay(row: StoredRow, hash: string): IdempotentResult {
  if (row.request_hash !== hash) {
    throw new ProblemException(422, 'This Idempotency-Key was used with a different request body.');
  }
  if (row.response_status! >= 400) {
    const stored = row.response_body as { detail: string; errors: ProblemException['errors'] | null };
    throw new ProblemException(row.response_status!, stored.detail, stored.errors ?? undefined, { 'Idempotent-Replayed': 'true' });
  }
  return { status: row.response_status!, body: row.response_body, location: row.response_location ?? undefined, replayed: true };
}

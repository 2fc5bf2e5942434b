import { createHash } from 'node:crypto';
import type { Pool, QueryResult } from 'pg';
import type { DataSource, ObjectLiteral } from 'typeorm';
import type { Sql } from '../idempotency/idempotency';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

type Row = Record<string, unknown>;

/**
 * A named prepared statement, shared by every query with its text (pg copies it before use); without
 * a name, an unnamed one (parsed and planned again each time).
 */
interface Statement {
  readonly name?: string;
  readonly text: string;
}

/**
 * Distinct SQL texts a reader prepares by name, at most. A list's text depends on which of its filters
 * the query gives and an insert's on which optional fields the body has: thousands of combinations,
 * which a caller could walk through, and Postgres keeps every statement prepared on a connection
 * until it closes (a plan each, per connection, in every service instance). Past the cap, a new text
 * runs unnamed: correct, a parse and plan slower, and nobody else's memory grows. The shapes an
 * instance serves first (its steady traffic) keep their names.
 */
export const MAX_NAMED_STATEMENTS = 100;

/** Column types whose hydrated value is the value pg parsed (TypeORM's prepareHydratedValue is a no-op). */
const AS_PARSED = new Set(['uuid', 'text', 'varchar', 'character varying', 'json', 'jsonb', 'integer', 'int', 'int4', 'smallint', 'int2', 'bigint', 'int8']);

/** One column's hydration: the property it fills and how. */
interface Hydration {
  column: ColumnMetadata;
  /** Set when the value can be assigned as pg parsed it (no transformer, no conversion, plain property). */
  property: string | null;
}

/** A get by id waiting for its batch (see {@link EntityReader.byIdInOrganization}). */
interface Waiter<E> {
  resolve(entity: E | null): void;
  reject(error: unknown): void;
}

/** At most this many distinct (id, organization) pairs per batched statement. */
const BATCH_MAX = 100;

/**
 * A column filled, when the row leaves it null, from the organization's gapless sequence: a counter
 * row per organization in `table` (`organization_id`, `last_value`), formatted `prefix` + the value
 * padded to `digits` (more when it outgrows them).
 */
export interface RowSequence {
  column: string;
  table: string;
  prefix: string;
  digits: number;
}

/**
 * Plain reads of one entity: one parameterised SELECT straight on the DataSource's pg pool, as a
 * named prepared statement, hydrated with TypeORM's own per-column conversion (types and
 * transformers, `driver.prepareHydratedValue`) from the entity's metadata. TypeORM's `findOneBy` and
 * query builder rebuilt the SQL, aliases and a result transformer on every call: ~300 µs of CPU per
 * GET in the profile (docs/perf.md). No transaction, one round trip. Callers write the WHERE clause;
 * every one of them includes the organization (tenancy is the caller's, as before).
 */
export class EntityReader<E> {
  private readonly hydrations: Hydration[];
  private readonly table: string;
  private readonly columns: string;
  private readonly selectFrom: string;
  private readonly statements = new Map<string, Statement>();
  /** Database names of the id and organization columns, when both are uuids (batched gets). */
  private readonly keyColumns: { id: string; organization: string } | null;
  private readonly byIdStatement: Statement | null;
  private pending: Map<string, Array<Waiter<E>>> | null = null;
  /** Columns an insert writes (not those Postgres generates), and their names in SQL. */
  private readonly insertable: ColumnMetadata[];
  /** Whether Postgres computes a column of the row (generated, or not written by an insert). */
  private readonly computed: boolean;

  constructor(
    private readonly db: DataSource,
    private readonly entity: new () => E,
  ) {
    const meta = db.getMetadata(entity);
    this.hydrations = meta.columns.map((column) => ({
      column,
      property:
        !column.transformer &&
        !column.embeddedMetadata &&
        !column.referencedColumn &&
        typeof column.type === 'string' &&
        AS_PARSED.has(column.type)
          ? column.propertyName
          : null,
    }));
    const table = meta.schema ? `"${meta.schema}"."${meta.tableName}"` : `"${meta.tableName}"`;
    const columns = meta.columns.map((c) => `"${c.databaseName}"`).join(', ');
    this.table = table;
    this.columns = columns;
    this.selectFrom = `SELECT ${columns} FROM ${table}`;
    const id = meta.findColumnWithPropertyName('id');
    const organization = meta.findColumnWithPropertyName('organizationId');
    this.keyColumns = id?.type === 'uuid' && organization?.type === 'uuid' ? { id: id.databaseName, organization: organization.databaseName } : null;
    this.insertable = meta.columns.filter((c) => c.isInsert && !c.isGenerated);
    this.computed = this.insertable.length !== meta.columns.length;
    this.byIdStatement = this.keyColumns
      ? this.statement(
          // The (id, organization) pairs of concurrent gets: a row is returned only for the very pair
          // that asked for it, so every row is matched on its organization in SQL (and again below).
          `SELECT ${meta.columns.map((c) => `t."${c.databaseName}"`).join(', ')} FROM ${table} t ` +
            `JOIN unnest($1::uuid[], $2::uuid[]) AS k(id, organization_id) ` +
            `ON t."${this.keyColumns.id}" = k.id AND t."${this.keyColumns.organization}" = k.organization_id`,
        )
      : null;
  }

  /**
   * Inserts `entity` in `sql` (the create's transaction) and answers the row as stored, generated
   * columns included (`RETURNING`, no second read), or null when it conflicts with a unique
   * constraint (`ON CONFLICT DO NOTHING`: no error, so the transaction goes on). With `sequence` and
   * the entity's column null, the value is taken from the organization's counter in this very
   * statement, so that the counter row stays locked only from here to the commit; a value another row
   * already holds (one a caller chose) conflicts, and the caller inserts again with the next.
   */
  /**
   * The statement that inserts `entity` (parameters from `$first`, `ON CONFLICT DO NOTHING RETURNING 1`)
   * for a caller that writes it in one statement with its event and response (IdempotencyStore): only
   * when the row as built is the row as stored, so that its view can be made before it is written: no
   * column Postgres computes (generated, or a sequence's), and every column given a value. Otherwise
   * null, and the row goes through {@link insert}.
   */
  insertStatement(entity: E, sequence: RowSequence | undefined, first: number): { text: string; values: unknown[] } | null {
    if (this.computed || sequence !== undefined) return null;
    const record = entity as Record<string, unknown>;
    if (this.insertable.some((c) => record[c.propertyName] === undefined)) return null;
    const driver = this.db.driver;
    return {
      text:
        `INSERT INTO ${this.table} (${this.insertable.map((c) => `"${c.databaseName}"`).join(', ')}) ` +
        `VALUES (${this.insertable.map((_, i) => `$${first + i}`).join(', ')}) ON CONFLICT DO NOTHING RETURNING 1`,
      values: this.insertable.map((c) => driver.preparePersistentValue(c.getEntityValue(entity as ObjectLiteral), c)),
    };
  }

  async insert(sql: Sql, entity: E, sequence?: RowSequence): Promise<E | null> {
    const driver = this.db.driver;
    const record = entity as Record<string, unknown>;
    const numbered = sequence !== undefined && (record[sequence.column] === null || record[sequence.column] === undefined);
    // A column the definition left undefined takes its default in the table.
    const columns = this.insertable.filter((c) => !(numbered && c.propertyName === sequence!.column) && record[c.propertyName] !== undefined);
    const values = columns.map((c) => driver.preparePersistentValue(c.getEntityValue(entity as ObjectLiteral), c));
    const names = columns.map((c) => `"${c.databaseName}"`);
    const params = columns.map((_, i) => `$${i + 1}`);
    let text: string;
    if (numbered) {
      const organization = columns.findIndex((c) => c.propertyName === 'organizationId');
      const column = this.insertable.find((c) => c.propertyName === sequence!.column)!;
      text =
        `WITH seq AS (INSERT INTO ${sequence!.table} AS c (organization_id, last_value) VALUES ($${organization + 1}, 1) ` +
        `ON CONFLICT (organization_id) DO UPDATE SET last_value = c.last_value + 1 RETURNING last_value::text AS v) ` +
        `INSERT INTO ${this.table} (${[...names, `"${column.databaseName}"`].join(', ')}) ` +
        `SELECT ${params.join(', ')}, $${columns.length + 1} || lpad(seq.v, greatest(${sequence!.digits}, length(seq.v)), '0') FROM seq ` +
        `ON CONFLICT DO NOTHING RETURNING ${this.columns}`;
      values.push(sequence!.prefix);
    } else {
      text = `INSERT INTO ${this.table} (${names.join(', ')}) VALUES (${params.join(', ')}) ON CONFLICT DO NOTHING RETURNING ${this.columns}`;
    }
    const statement = this.statement(text);
    const rows = statement.name ? await sql.prepared<Row>(statement.name, statement.text, values) : await sql.query<Row>(statement.text, values);
    return rows[0] ? this.hydrate(rows[0]) : null;
  }

  /** Rows matching `where` (SQL after WHERE, `$1`... placeholders), in `suffix` order and limit. */
  async many(where: string, values: unknown[], suffix = ''): Promise<E[]> {
    const rows = await this.query(this.statement(`${this.selectFrom} WHERE ${where}${suffix ? ` ${suffix}` : ''}`), values);
    return rows.map((row) => this.hydrate(row));
  }

  /**
   * Up to `limit` rows matching `where`, newest first (`id` descending), cut short before the first
   * row whose predecessors already hold `maxBytes` by `sizeColumn`: at least one row, and only the
   * last row can take the page past the budget. The cut is made in SQL, so rows past it are neither
   * sent nor parsed: the window reads only the size column, and a row's TOASTed values (the large
   * ones) are fetched and decompressed only when the row is sent. `more`: whether a row follows the last one returned
   * (`lead` looks one row past it; no `limit + 1` sentinel row is transferred).
   */
  async pageBySize(where: string, values: unknown[], limit: number, sizeColumn: string, maxBytes: number): Promise<{ rows: E[]; more: boolean }> {
    const n = values.length;
    const size = `"${sizeColumn}"`;
    const rows = await this.query(
      this.statement(
        `SELECT ${this.columns}, _more FROM (` +
          `SELECT ${this.columns}, sum(${size}) OVER w - ${size} AS _bytes_before, lead(true) OVER w IS NOT NULL AS _more ` +
          `FROM ${this.table} WHERE ${where} ` +
          `WINDOW w AS (ORDER BY id DESC ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW) ORDER BY id DESC LIMIT $${n + 1}` +
          `) page WHERE _bytes_before < $${n + 2} ORDER BY id DESC`,
      ),
      [...values, limit, maxBytes],
    );
    return { rows: rows.map((row) => this.hydrate(row)), more: rows.length > 0 && rows[rows.length - 1]._more === true };
  }

  async one(where: string, values: unknown[]): Promise<E | null> {
    return (await this.many(where, values, 'LIMIT 1'))[0] ?? null;
  }

  /**
   * The row with this id in this organization, or null. Gets that arrive in the same turn of the
   * event loop (one poll of the sockets) are answered by one statement, `JOIN unnest(ids, orgs)`:
   * under load a guarded GET was as much a pg round trip as anything (a `writev` of 45 µs on this
   * machine, RowDescription parsing, Postgres's per-statement work on the same cores; docs/perf.md),
   * and this pays it once per batch. The batch is sent from `setImmediate`, i.e. right after the
   * I/O callbacks of the turn, so a lone request waits for nothing. Each caller gets only the row of
   * its own (id, organization) pair, as its own entity; a failed query fails every caller of the
   * batch, as it would have failed each of them.
   */
  byIdInOrganization(id: string, organizationId: string): Promise<E | null> {
    if (!this.keyColumns) return this.one('id = $1 AND organization_id = $2', [id, organizationId]);
    return new Promise<E | null>((resolve, reject) => {
      if (this.pending === null) {
        this.pending = new Map();
        setImmediate(() => this.sendPending());
      }
      const key = `${id}/${organizationId}`;
      const waiters = this.pending.get(key);
      if (waiters) waiters.push({ resolve, reject });
      else this.pending.set(key, [{ resolve, reject }]);
    });
  }

  private sendPending(): void {
    const pending = this.pending;
    this.pending = null;
    if (!pending) return;
    let batch = new Map<string, Array<Waiter<E>>>();
    for (const [key, waiters] of pending) {
      batch.set(key, waiters);
      if (batch.size === BATCH_MAX) {
        void this.sendBatch(batch);
        batch = new Map();
      }
    }
    if (batch.size > 0) void this.sendBatch(batch);
  }

  /**
   * Every waiter of the batch is settled on every path, each with its own outcome: a row that cannot
   * be hydrated (a value out of the entity's range) fails the callers of that row alone, and a
   * failed query fails the batch as it would have failed each of them. Callers of other
   * organizations never share another row's failure.
   */
  private async sendBatch(batch: Map<string, Array<Waiter<E>>>): Promise<void> {
    const keys = this.keyColumns!;
    const ids: string[] = [];
    const organizations: string[] = [];
    for (const key of batch.keys()) {
      const slash = key.indexOf('/');
      ids.push(key.slice(0, slash));
      organizations.push(key.slice(slash + 1));
    }
    let rows: Row[];
    try {
      rows = await this.query(this.byIdStatement!, [ids, organizations]);
    } catch (e) {
      for (const waiters of batch.values()) for (const w of waiters) w.reject(e);
      return;
    }
    for (const row of rows) {
      const key = `${String(row[keys.id])}/${String(row[keys.organization])}`;
      const waiters = batch.get(key);
      if (!waiters) continue;
      batch.delete(key);
      // Each caller its own entity (one cannot change another's copy), and its own failure.
      for (const w of waiters) {
        try {
          w.resolve(this.hydrate(row));
        } catch (e) {
          w.reject(e);
        }
      }
    }
    for (const waiters of batch.values()) for (const w of waiters) w.resolve(null);
  }

  private async query(statement: Statement, values: unknown[]): Promise<Row[]> {
    // TypeORM's Postgres driver keeps its pg Pool here: same connections, timeouts and search_path.
    const pool = (this.db.driver as unknown as { master: Pool }).master;
    // pg copies the config before adding values and its callback: the statement object is shared.
    const result: QueryResult<Row> = await pool.query(statement, values);
    return result.rows;
  }

  /** One prepared statement per distinct SQL text, for the first {@link MAX_NAMED_STATEMENTS} texts. */
  private statement(text: string): Statement {
    let statement = this.statements.get(text);
    if (!statement) {
      if (this.statements.size >= MAX_NAMED_STATEMENTS) return { text };
      statement = { name: `r_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`, text };
      this.statements.set(text, statement);
    }
    return statement;
  }

  private hydrate(row: Row): E {
    const entity = new this.entity() as Record<string, unknown>;
    const driver = this.db.driver;
    for (const { column, property } of this.hydrations) {
      const value = row[column.databaseName];
      if (property !== null) entity[property] = value;
      else column.setEntityValue(entity, driver.prepareHydratedValue(value, column));
    }
    return entity as E;
  }
}


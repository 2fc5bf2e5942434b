import { createHash } from 'node:crypto';
import type { Pool, QueryResult } from 'pg';
import type { DataSource } from 'typeorm';
import type { ColumnMetadata } from 'typeorm/metadata/ColumnMetadata';

/**
 * Plain reads of one entity: one parameterised SELECT straight on the DataSource's pg pool, as a
 * named prepared statement, hydrated with TypeORM's own per-column conversion (types and
 * transformers, `driver.prepareHydratedValue`) from the entity's metadata. TypeORM's `findOneBy` and
 * query builder rebuilt the SQL, aliases and a result transformer on every call: ~300 µs of CPU per
 * GET in the profile (docs/perf.md). No transaction, one round trip. Callers write the WHERE clause;
 * every one of them includes the organization (tenancy is the caller's, as before).
 */
export class EntityReader<E> {
  private readonly columns: ColumnMetadata[];
  private readonly selectFrom: string;
  private readonly statementNames = new Map<string, string>();

  constructor(
    private readonly db: DataSource,
    private readonly entity: new () => E,
  ) {
    const meta = db.getMetadata(entity);
    this.columns = meta.columns;
    const table = meta.schema ? `"${meta.schema}"."${meta.tableName}"` : `"${meta.tableName}"`;
    this.selectFrom = `SELECT ${this.columns.map((c) => `"${c.databaseName}"`).join(', ')} FROM ${table}`;
  }

  /** Rows matching `where` (SQL after WHERE, `$1`... placeholders), in `suffix` order and limit. */
  async many(where: string, values: unknown[], suffix = ''): Promise<E[]> {
    const text = `${this.selectFrom} WHERE ${where}${suffix ? ` ${suffix}` : ''}`;
    const result: QueryResult<Record<string, unknown>> = await this.pool().query({ name: this.statementName(text), text, values });
    return result.rows.map((row) => this.hydrate(row));
  }

  async one(where: string, values: unknown[]): Promise<E | null> {
    return (await this.many(where, values, 'LIMIT 1'))[0] ?? null;
  }

  private pool(): Pool {
    // TypeORM's Postgres driver keeps its pg Pool here: same connections, timeouts and search_path.
    return (this.db.driver as unknown as { master: Pool }).master;
  }

  /** One prepared statement per distinct SQL text (a handful per resource: filters x paging). */
  private statementName(text: string): string {
    let name = this.statementNames.get(text);
    if (!name) {
      name = `r_${createHash('sha1').update(text).digest('hex').slice(0, 16)}`;
      this.statementNames.set(text, name);
    }
    return name;
  }

  private hydrate(row: Record<string, unknown>): E {
    const entity = new this.entity();
    for (const column of this.columns) {
      column.setEntityValue(entity as never, this.db.driver.prepareHydratedValue(row[column.databaseName], column));
    }
    return entity;
  }
}

import type { DataSource, EntityManager } from 'typeorm';

/**
 * The rows of a statement. TypeORM's postgres driver answers an UPDATE or DELETE (a CTE ending in
 * one included) with `[rows, affectedCount]` and every other statement with the rows: this takes
 * either apart, so no caller has to know which kind of statement it sent.
 */
export async function queryRows<T>(db: Pick<DataSource | EntityManager, 'query'>, sql: string, params: unknown[] = []): Promise<T[]> {
  const result: unknown = await db.query(sql, params);
  if (Array.isArray(result) && result.length === 2 && Array.isArray(result[0]) && typeof result[1] === 'number') return result[0] as T[];
  return result as T[];
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Each invoice's content size in bytes (its line items' JSON text and its notes), kept by Postgres,
 * so a list page can stop at LIST_PAGE_MAX_BYTES in SQL before any large row is sent (resource-api
 * `sizeColumn`). Stored, not measured per list: pg_column_size counts compressed bytes (1,000
 * repeated characters compress to almost nothing) and octet_length(line_items::text) per list would
 * decompress and print every row it looks at. Generated, so every row is right without application
 * code: existing rows are filled as the column is added (a table rewrite under an exclusive lock:
 * seconds per GB of invoices), later rows by Postgres on insert. An update that leaves line_items and
 * notes alone (a payment's amount_paid, the only update today) does not recompute it.
 */
export class InvoiceContentBytes1763700600000 implements MigrationInterface {
  name = 'InvoiceContentBytes1763700600000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE invoices.invoices ADD COLUMN content_bytes integer NOT NULL
        GENERATED ALWAYS AS (octet_length(line_items::text) + coalesce(octet_length(notes), 0)) STORED`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invoices.invoices DROP COLUMN content_bytes`);
  }
}

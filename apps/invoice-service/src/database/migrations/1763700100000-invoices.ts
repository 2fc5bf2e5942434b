import { idempotencyTableSql } from '@invoicing/resource-api';
import { MigrationInterface, QueryRunner } from 'typeorm';

export class Invoices1763700100000 implements MigrationInterface {
  name = 'Invoices1763700100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE invoices.invoices (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        client_id uuid NOT NULL,
        number text NOT NULL,
        currency char(3) NOT NULL,
        issue_date date NOT NULL,
        due_date date,
        notes text,
        line_items jsonb NOT NULL,
        subtotal bigint NOT NULL CHECK (subtotal >= 0),
        tax_total bigint NOT NULL CHECK (tax_total >= 0),
        total bigint NOT NULL CHECK (total = subtotal + tax_total),
        amount_paid bigint NOT NULL DEFAULT 0 CHECK (amount_paid >= 0),
        status text GENERATED ALWAYS AS (
          CASE WHEN amount_paid >= total THEN 'paid' WHEN amount_paid > 0 THEN 'partially_paid' ELSE 'open' END
        ) STORED,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT invoices_number_unique UNIQUE (organization_id, number),
        CONSTRAINT invoices_due_after_issue CHECK (due_date IS NULL OR due_date >= issue_date)
      )`);
    await q.query(`CREATE INDEX invoices_org_id_idx ON invoices.invoices (organization_id, id DESC)`);
    await q.query(`CREATE INDEX invoices_org_client_idx ON invoices.invoices (organization_id, client_id, id DESC)`);
    await q.query(`CREATE INDEX invoices_org_status_idx ON invoices.invoices (organization_id, status, id DESC)`);
    await q.query(`
      CREATE TABLE invoices.invoice_number_counters (
        organization_id uuid PRIMARY KEY,
        last_value bigint NOT NULL
      )`);
    for (const sql of idempotencyTableSql('invoices')) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE invoices.idempotency_keys`);
    await q.query(`DROP TABLE invoices.invoice_number_counters`);
    await q.query(`DROP TABLE invoices.invoices`);
  }
}

import { outboxTableSql } from '@invoicing/event-bus';
import { knownObjectsTableSql } from '@invoicing/resource-api';
import { MigrationInterface, QueryRunner } from 'typeorm';

export class ReferencesAndEvents1763700300000 implements MigrationInterface {
  name = 'ReferencesAndEvents1763700300000';

  async up(q: QueryRunner): Promise<void> {
    for (const sql of [...outboxTableSql('invoices'), ...knownObjectsTableSql('invoices')]) await q.query(sql);
    await q.query(`
      CREATE TABLE invoices.applied_payments (
        payment_id uuid PRIMARY KEY,
        invoice_id uuid NOT NULL,
        organization_id uuid NOT NULL,
        amount bigint NOT NULL CHECK (amount > 0),
        applied_at timestamptz NOT NULL DEFAULT now()
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE invoices.applied_payments`);
    await q.query(`DROP TABLE invoices.known_objects`);
    await q.query(`DROP TABLE invoices.outbox`);
  }
}

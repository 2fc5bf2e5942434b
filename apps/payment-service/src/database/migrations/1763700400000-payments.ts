import { resourceInfrastructureSql } from '@invoicing/resource-api';
import { MigrationInterface, QueryRunner } from 'typeorm';

export class Payments1763700400000 implements MigrationInterface {
  name = 'Payments1763700400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE payments.payments (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        invoice_id uuid NOT NULL,
        amount bigint NOT NULL CHECK (amount > 0),
        currency char(3) NOT NULL,
        method text CHECK (method IN ('card', 'bank_transfer', 'cash', 'check', 'other')),
        paid_at timestamptz NOT NULL,
        reference text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX payments_org_id_idx ON payments.payments (organization_id, id DESC)`);
    await q.query(`CREATE INDEX payments_org_invoice_idx ON payments.payments (organization_id, invoice_id, id DESC)`);
    for (const sql of resourceInfrastructureSql('payments')) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['known_objects', 'outbox', 'idempotency_keys', 'payments']) await q.query(`DROP TABLE payments.${t}`);
  }
}

import { resourceInfrastructureSql } from '@invoicing/resource-api';
import { MigrationInterface, QueryRunner } from 'typeorm';

export class Expenses1763700400000 implements MigrationInterface {
  name = 'Expenses1763700400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE expenses.expenses (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        description text NOT NULL,
        amount bigint NOT NULL CHECK (amount > 0),
        currency char(3) NOT NULL,
        category text,
        vendor text,
        incurred_on date NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX expenses_org_id_idx ON expenses.expenses (organization_id, id DESC)`);
    for (const sql of resourceInfrastructureSql('expenses')) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['known_objects', 'outbox', 'idempotency_keys', 'expenses']) await q.query(`DROP TABLE expenses.${t}`);
  }
}

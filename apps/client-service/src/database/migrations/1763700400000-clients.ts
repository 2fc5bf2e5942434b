import { resourceInfrastructureSql } from '@invoicing/resource-api';
import { MigrationInterface, QueryRunner } from 'typeorm';

export class Clients1763700400000 implements MigrationInterface {
  name = 'Clients1763700400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE clients.clients (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        name text NOT NULL,
        email text,
        phone text,
        tax_id text,
        address jsonb,
        currency char(3),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX clients_org_id_idx ON clients.clients (organization_id, id DESC)`);
    for (const sql of resourceInfrastructureSql('clients')) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['known_objects', 'outbox', 'idempotency_keys', 'clients']) await q.query(`DROP TABLE clients.${t}`);
  }
}

import { resourceInfrastructureSql } from '@invoicing/resource-api';
import { MigrationInterface, QueryRunner } from 'typeorm';

export class Products1763700400000 implements MigrationInterface {
  name = 'Products1763700400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE products.products (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        name text NOT NULL,
        description text,
        sku text,
        unit_price bigint NOT NULL CHECK (unit_price >= 0),
        currency char(3) NOT NULL,
        tax_rate_bps integer NOT NULL DEFAULT 0 CHECK (tax_rate_bps BETWEEN 0 AND 10000),
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT products_sku_unique UNIQUE (organization_id, sku)
      )`);
    await q.query(`CREATE INDEX products_org_id_idx ON products.products (organization_id, id DESC)`);
    for (const sql of resourceInfrastructureSql('products')) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['known_objects', 'outbox', 'idempotency_keys', 'products']) await q.query(`DROP TABLE products.${t}`);
  }
}

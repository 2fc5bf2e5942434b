import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The `created[gte|gt|lte|lt]` list filters (ADR 0041): an organization's products by creation time,
 * so that a sync asking for what was created since its last run reads that range only.
 */
export class ListFilterIndexes1764400000000 implements MigrationInterface {
  name = 'ListFilterIndexes1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX products_org_created_idx ON products.products (organization_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX products.products_org_created_idx`);
  }
}

import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The key list shows live keys by default, and the ceiling of live keys counts them at every
 * creation (ADR 0035): both read only an organization's active rows, however many revoked and
 * expired keys it has piled up, through this partial index.
 */
export class LiveApiKeysIndex1763701100000 implements MigrationInterface {
  name = 'LiveApiKeysIndex1763701100000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX api_keys_live_idx ON auth.api_keys (organization_id, id DESC) WHERE status = 'active'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX auth.api_keys_live_idx`);
  }
}

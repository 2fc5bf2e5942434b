import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Leaked-secret reports (ADR 0025): where and when a key's secret was reported public, and
 * the look-up by secret hash a report needs (a report names secrets, not Client IDs).
 */
export class KeyExposure1763700900000 implements MigrationInterface {
  name = 'KeyExposure1763700900000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE auth.api_keys ADD COLUMN exposed_at timestamptz, ADD COLUMN exposed_url text CHECK (length(exposed_url) <= 2048)`);
    await q.query(`CREATE INDEX api_keys_secret_hash_idx ON auth.api_keys (secret_hash)`);
    await q.query(`CREATE INDEX api_keys_previous_secret_hash_idx ON auth.api_keys (previous_secret_hash) WHERE previous_secret_hash IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX auth.api_keys_previous_secret_hash_idx`);
    await q.query(`DROP INDEX auth.api_keys_secret_hash_idx`);
    await q.query(`ALTER TABLE auth.api_keys DROP COLUMN exposed_at, DROP COLUMN exposed_url`);
  }
}

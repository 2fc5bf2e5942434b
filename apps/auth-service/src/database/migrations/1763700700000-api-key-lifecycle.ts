import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * A key's whole life (ADR 0023): an expiry, a previous secret that keeps working until the
 * end of a roll's overlap, an IP allowlist, and when each secret was last used.
 */
export class ApiKeyLifecycle1763700700000 implements MigrationInterface {
  name = 'ApiKeyLifecycle1763700700000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      ALTER TABLE auth.api_keys
        ADD COLUMN expires_at timestamptz,
        ADD COLUMN allowed_ips text[] NOT NULL DEFAULT '{}' CHECK (cardinality(allowed_ips) <= 100),
        ADD COLUMN previous_secret_hash bytea CHECK (length(previous_secret_hash) = 32),
        ADD COLUMN previous_secret_expires_at timestamptz,
        ADD COLUMN secret_last_used_at timestamptz,
        ADD COLUMN previous_secret_last_used_at timestamptz,
        ADD COLUMN expiry_notice_sent_at timestamptz,
        ADD COLUMN secret_generation integer NOT NULL DEFAULT 0,
        ADD COLUMN allowed_ips_version integer NOT NULL DEFAULT 0,
        DROP CONSTRAINT api_keys_status_check,
        ADD CONSTRAINT api_keys_status_check CHECK (status IN ('active', 'revoked', 'expired')),
        ADD CONSTRAINT api_keys_previous_secret_check CHECK ((previous_secret_hash IS NULL) = (previous_secret_expires_at IS NULL))`);
    // Until now a key had one secret: its last use is the key's.
    await q.query(`UPDATE auth.api_keys SET secret_last_used_at = last_used_at`);
    // The expiry sweep (four times a second) reads only live keys that expire: a small index.
    await q.query(`CREATE INDEX api_keys_expiry_idx ON auth.api_keys (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL`);
    // ...and those still owed their seven-day notice, without walking every key that had one.
    await q.query(
      `CREATE INDEX api_keys_expiry_notice_idx ON auth.api_keys (expires_at) WHERE status = 'active' AND expires_at IS NOT NULL AND expiry_notice_sent_at IS NULL`,
    );
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX auth.api_keys_expiry_notice_idx`);
    await q.query(`DROP INDEX auth.api_keys_expiry_idx`);
    await q.query(`UPDATE auth.api_keys SET status = 'revoked', revoked_at = COALESCE(revoked_at, expires_at) WHERE status = 'expired'`);
    await q.query(`
      ALTER TABLE auth.api_keys
        DROP CONSTRAINT api_keys_previous_secret_check,
        DROP CONSTRAINT api_keys_status_check,
        ADD CONSTRAINT api_keys_status_check CHECK (status IN ('active', 'revoked')),
        DROP COLUMN expires_at,
        DROP COLUMN allowed_ips,
        DROP COLUMN previous_secret_hash,
        DROP COLUMN previous_secret_expires_at,
        DROP COLUMN secret_last_used_at,
        DROP COLUMN previous_secret_last_used_at,
        DROP COLUMN expiry_notice_sent_at,
        DROP COLUMN secret_generation,
        DROP COLUMN allowed_ips_version`);
  }
}

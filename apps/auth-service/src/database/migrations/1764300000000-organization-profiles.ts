import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * Settings → Organization (ADR 0039): one profile per organization, created by its first change.
 * The checks repeat the API's (organization/profile-fields.ts) for what is stored normalized, so a
 * value that slipped past the code (or was written by hand) cannot reach an invoice. `version`
 * counts the changes; it is 0 only until the first, which sets `updated_at`.
 */
export class OrganizationProfiles1764300000000 implements MigrationInterface {
  name = 'OrganizationProfiles1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE auth.organization_profiles (
        organization_id uuid PRIMARY KEY REFERENCES auth.organizations(id),
        legal_name text CHECK (length(legal_name) BETWEEN 1 AND 200),
        address jsonb CHECK (jsonb_typeof(address) = 'object'),
        vat_id text CHECK (vat_id ~ '^[A-Z]{2}[A-Z0-9]{2,13}$'),
        email text CHECK (length(email) BETWEEN 3 AND 254),
        iban text CHECK (iban ~ '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$'),
        bic text CHECK (bic ~ '^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$'),
        payment_terms text CHECK (length(payment_terms) BETWEEN 1 AND 1000),
        version integer NOT NULL DEFAULT 0 CHECK (version >= 0),
        updated_at timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT organization_profiles_changed CHECK ((version = 0) = (updated_at IS NULL))
      )`);
    // The bootstrap (deploy/k8s/base/platform/postgres/bootstrap.sql) keeps tables so marked without DELETE when it re-grants.
    await q.query(`COMMENT ON TABLE auth.organization_profiles IS 'no-delete: an organization''s profile (ADR 0039); the runtime role may read, insert and update it, never delete it'`);
    // Least privilege: the service reads, creates and changes a profile, and never deletes one (a
    // profile lives as long as its organization, and a cleared field is an UPDATE). The runtime
    // role, granted DML on the schema's tables by default, loses DELETE and TRUNCATE here.
    await q.query(`
      DO $$
      DECLARE grantee_role text;
      BEGIN
        FOR grantee_role IN
          SELECT DISTINCT grantee FROM information_schema.role_table_grants
           WHERE table_schema = 'auth' AND table_name = 'organization_profiles'
             AND privilege_type IN ('DELETE', 'TRUNCATE') AND grantee <> current_user
        LOOP
          EXECUTE format('REVOKE DELETE, TRUNCATE ON auth.organization_profiles FROM %I', grantee_role);
        END LOOP;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE auth.organization_profiles`);
  }
}

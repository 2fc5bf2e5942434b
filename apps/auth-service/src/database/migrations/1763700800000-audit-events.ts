import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The per-organization audit log (ADR 0024): append-only, one hash chain per organization.
 * Column types are chosen so each gives back exactly the value that was hashed (audit-chain.ts):
 * text for addresses (inet would rewrite them), timestamptz (milliseconds round-trip), jsonb for data
 * (the hash is over its canonical form, so key order does not matter).
 */
export class AuditEvents1763700800000 implements MigrationInterface {
  name = 'AuditEvents1763700800000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE auth.audit_events (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES auth.organizations(id),
        seq bigint NOT NULL CHECK (seq >= 1),
        type text NOT NULL,
        occurred_at timestamptz NOT NULL,
        actor_kind text NOT NULL CHECK (actor_kind IN ('user', 'api_key', 'system')),
        actor_id text,
        api_key_id text,
        client_address text,
        data jsonb NOT NULL,
        prev_hash text NOT NULL,
        hash text NOT NULL,
        CONSTRAINT audit_events_chain UNIQUE (organization_id, seq)
      )`);
    // The list reads newest first, per organization, optionally for one key or one type.
    await q.query(`CREATE INDEX audit_events_key_idx ON auth.audit_events (organization_id, api_key_id, seq DESC)`);
    await q.query(`CREATE INDEX audit_events_type_idx ON auth.audit_events (organization_id, type, seq DESC)`);
    // The bootstrap (deploy/k8s/base/platform/postgres/bootstrap.sql) keeps tables so marked append-only when it re-grants.
    await q.query(`COMMENT ON TABLE auth.audit_events IS 'append-only: the audit log (ADR 0024); the runtime role may insert and read, never change'`);
    // Append-only for everyone but the table's owner (the migration role): the runtime role, granted
    // SELECT, INSERT, UPDATE, DELETE on the schema's tables by default, loses UPDATE and DELETE here.
    // The owner can still change rows; the chain is what makes that visible (verify-audit).
    await q.query(`
      DO $$
      DECLARE grantee_role text;
      BEGIN
        FOR grantee_role IN
          SELECT DISTINCT grantee FROM information_schema.role_table_grants
           WHERE table_schema = 'auth' AND table_name = 'audit_events'
             AND privilege_type IN ('UPDATE', 'DELETE', 'TRUNCATE') AND grantee <> current_user
        LOOP
          EXECUTE format('REVOKE UPDATE, DELETE, TRUNCATE ON auth.audit_events FROM %I', grantee_role);
        END LOOP;
      END $$`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE auth.audit_events`);
  }
}

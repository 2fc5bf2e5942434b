import { outboxTableSql } from '@invoicing/event-bus';
import { MigrationInterface, QueryRunner } from 'typeorm';

export class InitialSchema1763700000000 implements MigrationInterface {
  name = 'InitialSchema1763700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE auth.organizations (
        id uuid PRIMARY KEY,
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 200),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE auth.api_keys (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES auth.organizations(id),
        name text NOT NULL CHECK (length(name) BETWEEN 1 AND 100),
        client_id text NOT NULL UNIQUE,
        secret_hash bytea NOT NULL CHECK (length(secret_hash) = 32),
        scopes text[] NOT NULL,
        status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'revoked')),
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz,
        last_used_at timestamptz
      )`);
    await q.query(`CREATE INDEX api_keys_organization_idx ON auth.api_keys (organization_id, id DESC)`);
    // The outbox table as every service's migration creates it (event-bus holds its one definition).
    for (const sql of outboxTableSql('auth')) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE auth.outbox`);
    await q.query(`DROP TABLE auth.api_keys`);
    await q.query(`DROP TABLE auth.organizations`);
  }
}

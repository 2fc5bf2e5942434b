import { MigrationInterface, QueryRunner } from 'typeorm';

export class Users1763700200000 implements MigrationInterface {
  name = 'Users1763700200000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE auth.users (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL REFERENCES auth.organizations(id),
        email text NOT NULL CHECK (email = lower(email) AND length(email) BETWEEN 3 AND 254),
        password_hash text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT users_email_unique UNIQUE (email)
      )`);
    await q.query(`CREATE INDEX users_organization_idx ON auth.users (organization_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE auth.users`);
  }
}

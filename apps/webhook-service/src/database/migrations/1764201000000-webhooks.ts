import { MigrationInterface, QueryRunner } from 'typeorm';

export class Webhooks1764201000000 implements MigrationInterface {
  name = 'Webhooks1764201000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE webhooks.endpoints (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        url text NOT NULL,
        description text,
        enabled_events text[] NOT NULL,
        status text NOT NULL DEFAULT 'enabled' CHECK (status IN ('enabled', 'disabled')),
        disabled_reason text CHECK (disabled_reason IN ('requested', 'failing')),
        signature_scheme text NOT NULL CHECK (signature_scheme IN ('v1', 'v1a')),
        -- Sealed (AES-256-GCM under WEBHOOK_SECRETS_KEY, bound to the id): the service signs with it.
        secret bytea NOT NULL,
        -- After a roll, the old secret signs beside the new one until it expires.
        previous_secret bytea,
        previous_secret_expires_at timestamptz,
        -- Since when every attempt has failed (null after a success); disabled past WEBHOOK_DISABLE_AFTER_MS.
        failing_since timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE INDEX endpoints_org_idx ON webhooks.endpoints (organization_id, id DESC) WHERE deleted_at IS NULL`);
    await q.query(`
      CREATE TABLE webhooks.events (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        -- The id of the message it was made from: a message delivered twice makes one event.
        source_id text NOT NULL UNIQUE,
        type text NOT NULL,
        -- The resource whose read: scope lets a token list it.
        scope text NOT NULL,
        -- The exact body every delivery sends (signatures cover these bytes; a retry sends them again).
        payload text NOT NULL,
        created_at timestamptz NOT NULL
      )`);
    await q.query(`CREATE INDEX events_org_idx ON webhooks.events (organization_id, id DESC)`);
    await q.query(`CREATE INDEX events_created_idx ON webhooks.events (created_at)`);
    await q.query(`
      CREATE TABLE webhooks.deliveries (
        endpoint_id uuid NOT NULL REFERENCES webhooks.endpoints (id),
        event_id uuid NOT NULL REFERENCES webhooks.events (id) ON DELETE CASCADE,
        organization_id uuid NOT NULL,
        status text NOT NULL DEFAULT 'pending' CHECK (status IN ('pending', 'succeeded', 'failed')),
        attempts integer NOT NULL DEFAULT 0,
        next_attempt_at timestamptz,
        -- Held by the instance attempting it until then: no delivery is attempted twice at once.
        locked_until timestamptz,
        created_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (endpoint_id, event_id)
      )`);
    await q.query(`CREATE INDEX deliveries_due_idx ON webhooks.deliveries (endpoint_id, next_attempt_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX deliveries_next_idx ON webhooks.deliveries (next_attempt_at) WHERE status = 'pending'`);
    await q.query(`CREATE INDEX deliveries_event_idx ON webhooks.deliveries (event_id)`);
    await q.query(`
      CREATE TABLE webhooks.attempts (
        id uuid PRIMARY KEY,
        organization_id uuid NOT NULL,
        endpoint_id uuid NOT NULL,
        event_id uuid NOT NULL REFERENCES webhooks.events (id) ON DELETE CASCADE,
        attempt integer NOT NULL,
        succeeded boolean NOT NULL,
        response_status integer,
        latency_ms integer NOT NULL,
        error text,
        response_body text,
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`CREATE INDEX attempts_endpoint_idx ON webhooks.attempts (endpoint_id, id DESC)`);
    await q.query(`CREATE INDEX attempts_event_idx ON webhooks.attempts (event_id)`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const t of ['attempts', 'deliveries', 'events', 'endpoints']) await q.query(`DROP TABLE webhooks.${t}`);
  }
}

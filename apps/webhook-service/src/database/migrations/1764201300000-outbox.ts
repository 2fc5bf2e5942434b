import { outboxTableSql, outboxTraceContextSql } from '@invoicing/event-bus';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The webhook service's outbox (the event bus's one definition, trace context included): events
 * other services act on, written in the transaction of the change they announce and published on
 * webhooks.endpoints.v1 by the relay. Today, an endpoint disabled for failing (the auth service
 * records it in the organization's audit log). webhook_app gets SELECT, INSERT, UPDATE and DELETE on
 * it through webhook_owner's default privileges (the bootstrap), as on every table of the schema.
 */
export class Outbox1764201300000 implements MigrationInterface {
  name = 'Outbox1764201300000';

  async up(q: QueryRunner): Promise<void> {
    for (const sql of [...outboxTableSql('webhooks'), ...outboxTraceContextSql('webhooks')]) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE webhooks.outbox`);
  }
}

import { outboxTraceContextSql } from '@invoicing/event-bus';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The trace context of each outbox row (ADR 0028): the relay sends it with the message, so the
 * consumers join the trace of the request that wrote the row. Nullable with no default: adding it
 * rewrites nothing.
 */
export class OutboxTraceContext1763701000000 implements MigrationInterface {
  name = 'OutboxTraceContext1763701000000';

  async up(q: QueryRunner): Promise<void> {
    for (const sql of outboxTraceContextSql('products')) await q.query(sql);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE products.outbox DROP COLUMN trace_context`);
  }
}

import { outboxTableSql } from '@invoicing/event-bus';
import { idempotencyTableSql } from '../idempotency/idempotency';
import { knownObjectsTableSql } from '../references/known-objects';

/** The tables every resource service has besides its own: idempotency keys, outbox, read model. */
export function resourceInfrastructureSql(schema: string): string[] {
  return [...idempotencyTableSql(schema), ...outboxTableSql(schema), ...knownObjectsTableSql(schema)];
}

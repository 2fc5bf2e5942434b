import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The claim reads the deliveries held in flight (to bound each endpoint and organization) on every
 * pass: with only the pending index it counted them by scanning every pending row, a backlog of
 * 20,000 rows cost about 5 ms a claim. Held rows are few (the attempts in flight, and the holds of an
 * instance that died until they lapse): a partial index of them makes the count that small.
 */
export class ClaimIndexes1764201400000 implements MigrationInterface {
  name = 'ClaimIndexes1764201400000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX deliveries_held_idx ON webhooks.deliveries (endpoint_id) WHERE status = 'pending' AND locked_until IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX webhooks.deliveries_held_idx`);
  }
}

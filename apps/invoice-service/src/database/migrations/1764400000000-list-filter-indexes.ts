import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * The list filters of invoices (ADR 0041): an organization's invoices by creation time, issue date
 * and due date, and its unpaid ones. The unpaid index is partial, on the very condition the
 * `unpaid=true` filter writes (`total - amount_paid > 0`, amount_due as the API computes it, from
 * the stored columns): Postgres uses a partial index only for a query whose condition implies the
 * index's, and it proves that for the same expression, not for an equivalent one. It holds the
 * invoices still to be paid, in list order, whatever the number of paid ones.
 */
export class ListFilterIndexes1764400000000 implements MigrationInterface {
  name = 'ListFilterIndexes1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX invoices_org_created_idx ON invoices.invoices (organization_id, created_at)`);
    await q.query(`CREATE INDEX invoices_org_issue_date_idx ON invoices.invoices (organization_id, issue_date)`);
    await q.query(`CREATE INDEX invoices_org_due_date_idx ON invoices.invoices (organization_id, due_date)`);
    await q.query(`CREATE INDEX invoices_org_unpaid_idx ON invoices.invoices (organization_id, id DESC) WHERE total - amount_paid > 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    for (const index of ['invoices_org_unpaid_idx', 'invoices_org_due_date_idx', 'invoices_org_issue_date_idx', 'invoices_org_created_idx']) {
      await q.query(`DROP INDEX invoices.${index}`);
    }
  }
}

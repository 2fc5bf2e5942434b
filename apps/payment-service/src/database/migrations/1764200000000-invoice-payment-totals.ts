import { MONEY_MAX } from '@invoicing/contracts';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * What the payments of each invoice add up to, kept beside the payments so that a new payment is
 * checked against the money range in one row update (docs/api.md section 7): one row per invoice,
 * locked by the payment's transaction, so concurrent payments of one invoice cannot both pass the
 * bound. Filled from the payments already recorded (a sum already past the bound stays at the bound:
 * no further payment of that invoice is accepted).
 */
export class InvoicePaymentTotals1764200000000 implements MigrationInterface {
  name = 'InvoicePaymentTotals1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE payments.invoice_payment_totals (
        organization_id uuid NOT NULL,
        invoice_id uuid NOT NULL,
        amount_paid bigint NOT NULL CHECK (amount_paid > 0 AND amount_paid <= ${MONEY_MAX}),
        PRIMARY KEY (organization_id, invoice_id)
      )`);
    await q.query(`
      INSERT INTO payments.invoice_payment_totals (organization_id, invoice_id, amount_paid)
      SELECT organization_id, invoice_id, LEAST(sum(amount), ${MONEY_MAX}) FROM payments.payments GROUP BY organization_id, invoice_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE payments.invoice_payment_totals`);
  }
}

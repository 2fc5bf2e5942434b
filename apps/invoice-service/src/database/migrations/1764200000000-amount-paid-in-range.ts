import { MONEY_MAX } from '@invoicing/contracts';
import { MigrationInterface, QueryRunner } from 'typeorm';

/**
 * `amount_paid` within the money range (docs/api.md section 2): the payment service refuses a
 * payment that would take an invoice's payments past it, and the table holds the bound too. A row
 * already past it (written before the bound existed) is brought back to it, so that every invoice
 * can be read again.
 */
export class AmountPaidInRange1764200000000 implements MigrationInterface {
  name = 'AmountPaidInRange1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE invoices.invoices SET amount_paid = ${MONEY_MAX} WHERE amount_paid > ${MONEY_MAX}`);
    await q.query(`ALTER TABLE invoices.invoices ADD CONSTRAINT invoices_amount_paid_in_range CHECK (amount_paid <= ${MONEY_MAX})`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE invoices.invoices DROP CONSTRAINT invoices_amount_paid_in_range`);
  }
}

import type { OrgScope } from '@invoicing/resource-api';
import type { EntityManager } from 'typeorm';

/**
 * Next number of the organization's sequence (INV-000001, ...). The counter row stays locked until
 * the transaction ends, so concurrent creates in one organization get distinct numbers; numbers a
 * caller chose explicitly are skipped.
 */
export async function nextInvoiceNumber(tx: EntityManager, scope: OrgScope): Promise<string> {
  for (;;) {
    const rows: Array<{ last_value: string }> = await tx.query(
      `INSERT INTO invoices.invoice_number_counters AS c (organization_id, last_value) VALUES ($1, 1)
       ON CONFLICT (organization_id) DO UPDATE SET last_value = c.last_value + 1
       RETURNING last_value`,
      [scope.organizationId],
    );
    const candidate = `INV-${rows[0].last_value.padStart(6, '0')}`;
    if (!(await invoiceNumberTaken(tx, scope, candidate))) return candidate;
  }
}

export async function invoiceNumberTaken(tx: EntityManager, scope: OrgScope, number: string): Promise<boolean> {
  const rows: unknown[] = await tx.query(`SELECT 1 FROM invoices.invoices WHERE organization_id = $1 AND number = $2`, [
    scope.organizationId,
    number,
  ]);
  return rows.length > 0;
}

/**
 * Records a payment received for an invoice, safely repeatable: the Idempotency-Key is derived from
 * the bank transaction's reference, so running this twice for one transfer (a crash, a retry by a
 * job runner) records it once. The server replays the first answer for 24 hours.
 *
 *   INVOICING_BASE_URL=https://api.example.com INVOICING_CLIENT_ID=ak_live_... \
 *   INVOICING_CLIENT_SECRET=sk_live_... \
 *   npx tsx libs/sdk/examples/record-payment.ts inv_... 12500 BANK-TX-2030-0042
 *
 * Arguments: invoice id, amount in minor units (12500 = 125.00), the bank's reference.
 * Needs the scopes read:invoices and write:payments.
 */
// Written as an integrator writes it, against the package name (mapped to src/ in this repository).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { Invoicing, InvoicingApiError } from '@invoicing/sdk';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name}`);
  return value;
}

async function main(): Promise<void> {
  const [invoiceId, amountText, bankReference] = process.argv.slice(2);
  const amount = Number(amountText);
  if (!invoiceId || !bankReference || !Number.isSafeInteger(amount) || amount <= 0) {
    throw new Error('Usage: record-payment.ts <invoice id> <amount in minor units> <bank reference>');
  }

  const api = new Invoicing({
    baseUrl: env('INVOICING_BASE_URL'),
    clientId: env('INVOICING_CLIENT_ID'),
    clientSecret: env('INVOICING_CLIENT_SECRET'),
    scope: 'read:invoices write:payments',
  });

  const invoice = await api.invoices.get(invoiceId);
  const payment = await api.payments.create(
    { invoice_id: invoice.id, amount, currency: invoice.currency, method: 'bank_transfer', reference: bankReference },
    { idempotencyKey: `payment:${bankReference}` },
  );
  console.log(`recorded ${payment.id}: ${payment.amount} ${payment.currency} on ${invoice.number}`);

  // The invoice's amount_paid and status follow within a second (docs/api.md section 7).
  await new Promise((resolve) => setTimeout(resolve, 1000));
  const updated = await api.invoices.get(invoice.id);
  console.log(`${updated.number}: ${updated.status}, ${updated.amount_due} ${updated.currency} still due`);
}

main().catch((error: unknown) => {
  if (error instanceof InvoicingApiError && error.status === 422) {
    for (const e of error.errors) console.error(`${e.field}: ${e.message}`);
  } else if (error instanceof InvoicingApiError && error.status === 404) {
    console.error('No such invoice in this organization.');
  } else {
    console.error(error instanceof Error ? error.message : error);
  }
  process.exitCode = 1;
});

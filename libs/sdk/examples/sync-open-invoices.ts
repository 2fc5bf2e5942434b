/**
 * Walks every open invoice of the organization and prints what is still due, per currency.
 *
 *   INVOICING_BASE_URL=https://api.example.com INVOICING_CLIENT_ID=ak_live_... \
 *   INVOICING_CLIENT_SECRET=sk_live_... npx tsx libs/sdk/examples/sync-open-invoices.ts
 *
 * Needs the scope read:invoices.
 */
// Written as an integrator writes it, against the package name (mapped to src/ in this repository).
// eslint-disable-next-line @nx/enforce-module-boundaries
import { Invoicing, InvoicingApiError, InvoicingOAuthError, type Invoice } from '@invoicing/sdk';

function env(name: string): string {
  const value = process.env[name];
  if (!value) throw new Error(`Set ${name}`);
  return value;
}

async function main(): Promise<void> {
  // One client for the whole run: it keeps one session and renews it by itself.
  const api = new Invoicing({
    baseUrl: env('INVOICING_BASE_URL'),
    clientId: env('INVOICING_CLIENT_ID'),
    clientSecret: env('INVOICING_CLIENT_SECRET'),
    scope: 'read:invoices',
  });

  const dueByCurrency = new Map<string, number>();
  let count = 0;
  // Fetches page after page (newest first) as the loop goes; `status` is kept on every page.
  for await (const invoice of api.invoices.list({ status: 'open', limit: 100 })) {
    count++;
    dueByCurrency.set(invoice.currency, (dueByCurrency.get(invoice.currency) ?? 0) + invoice.amount_due);
    console.log(describe(invoice));
  }

  console.log(`${count} open invoice(s)`);
  for (const [currency, due] of dueByCurrency) console.log(`due in ${currency}: ${formatMinor(due)}`);
}

function describe(invoice: Invoice): string {
  return [invoice.number, invoice.client_id, invoice.due_date ?? '-', `${formatMinor(invoice.amount_due)} ${invoice.currency}`].join('\t');
}

/** Money is integer minor units: format without floating-point arithmetic. */
function formatMinor(amount: number): string {
  const sign = amount < 0 ? '-' : '';
  const digits = String(Math.abs(amount)).padStart(3, '0');
  return `${sign}${digits.slice(0, -2)}.${digits.slice(-2)}`;
}

main().catch((error: unknown) => {
  if (error instanceof InvoicingOAuthError) {
    console.error(`Authentication failed (${error.error}): check INVOICING_CLIENT_ID and INVOICING_CLIENT_SECRET.`);
  } else if (error instanceof InvoicingApiError) {
    console.error(`${error.message} (request ${error.requestId ?? 'unknown'})`);
  } else {
    console.error(error);
  }
  process.exitCode = 1;
});

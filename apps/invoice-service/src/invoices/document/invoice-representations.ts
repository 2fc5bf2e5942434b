import type { EInvoiceSyntaxName, OrganizationProfile } from '@invoicing/contracts';
import type { OrganizationProfileChange, RenderContext, Renderer } from '@invoicing/resource-api';
import { ProblemException } from '@invoicing/service-kit';
import type { EntityManager } from 'typeorm';
import type { InvoiceEntity } from '../invoice.entity';
import { eInvoiceGaps } from './e-invoice';
import { buildInvoiceDocument, ClientLike, InvoiceDocument } from './invoice-document';
import { render } from './render-pool';

/**
 * The invoice's documents (the manifest's representations of invoices: representations.ts in
 * @invoicing/contracts), rendered on a worker thread (render-pool.ts) from the invoice and the parties
 * recorded when it was created (the migration InvoiceParties1764500000000).
 */
export const INVOICE_RENDERERS: Readonly<Record<string, Renderer<InvoiceEntity>>> = {
  'application/pdf': async (invoice, context) => render({ format: 'pdf', document: await documentOf(invoice, context) }, context.wanted),
  'application/xml': async (invoice, context) => {
    const document = await documentOf(invoice, context);
    // What EN 16931 needs and the data lacks is a 422 before any render is queued.
    const gaps = eInvoiceGaps(document);
    if (gaps.length > 0) {
      throw ProblemException.validation(
        gaps.map((gap) => ({ field: gap.field, code: 'required_for_e_invoice', message: gap.reason })),
        'The invoice lacks what an EN 16931 e-invoice needs.',
      );
    }
    return render({ format: 'xml', syntax: (context.query.syntax ?? 'cii') as EInvoiceSyntaxName, document }, context.wanted);
  },
};

/**
 * The invoice with its seller and buyer as recorded at its creation; a buyer not recorded (an
 * invoice older than the record, whose client the read model did not hold) is the client as the
 * read model holds it now.
 */
async function documentOf(invoice: InvoiceEntity, { db }: RenderContext): Promise<InvoiceDocument> {
  const [parties]: Array<{ seller: OrganizationProfile | null; buyer: ClientLike | null }> = await db.query(
    'SELECT seller, buyer FROM invoices.invoice_parties WHERE invoice_id = $1 AND organization_id = $2',
    [invoice.id, invoice.organizationId],
  );
  let buyer = parties?.buyer ?? null;
  if (!buyer) {
    const [known]: Array<{ data: ClientLike }> = await db.query(
      "SELECT data FROM invoices.known_objects WHERE kind = 'client' AND id = $1 AND organization_id = $2",
      [invoice.clientId, invoice.organizationId],
    );
    buyer = known?.data ?? { name: '' };
  }
  return buildInvoiceDocument(invoice, parties?.seller ?? null, buyer);
}

/**
 * Keeps each organization's latest profile (Settings → Organization) for the invoices created from
 * now on. The highest version of the batch per organization, written only over a lower one (events
 * come at least once, and the compacted topic may hand an older one after a newer); rows in the
 * order of organization ids, so that two instances' batches never deadlock.
 */
export async function keepOrganizationProfiles(changes: readonly OrganizationProfileChange[], tx: EntityManager): Promise<void> {
  const latest = new Map<string, OrganizationProfileChange>();
  for (const change of changes) {
    if ((latest.get(change.organizationId)?.version ?? 0) < change.version) latest.set(change.organizationId, change);
  }
  const rows = [...latest.values()].sort((a, b) => (a.organizationId < b.organizationId ? -1 : 1));
  await tx.query(
    `INSERT INTO invoices.organization_profiles (organization_id, version, profile, changed_at)
     SELECT * FROM unnest($1::uuid[], $2::integer[], $3::jsonb[], $4::timestamptz[])
     ON CONFLICT (organization_id) DO UPDATE SET version = EXCLUDED.version, profile = EXCLUDED.profile, changed_at = EXCLUDED.changed_at
       WHERE organization_profiles.version < EXCLUDED.version`,
    [rows.map((r) => r.organizationId), rows.map((r) => r.version), rows.map((r) => JSON.stringify(r.profile)), rows.map((r) => r.changedAt)],
  );
}

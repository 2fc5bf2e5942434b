import type { EInvoiceSyntaxName } from '@invoicing/contracts';
import { renderEInvoice } from './e-invoice';
import type { InvoiceDocument } from './invoice-document';
import { renderInvoicePdf } from './invoice-pdf';

/** One document to make: plain data, so that it can cross to a worker thread. */
export type RenderJob = { format: 'pdf'; document: InvoiceDocument } | { format: 'xml'; syntax: EInvoiceSyntaxName; document: InvoiceDocument };

/** The job's bytes: the PDF, or the e-invoice's XML in UTF-8. */
export async function renderDocument(job: RenderJob): Promise<Buffer> {
  return job.format === 'pdf' ? renderInvoicePdf(job.document) : Buffer.from(renderEInvoice(job.document, job.syntax), 'utf8');
}

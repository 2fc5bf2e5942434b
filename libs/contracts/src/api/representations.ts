/**
 * Representations of one object besides its JSON: `GET /api/v1/<resource>/{id}` with an `Accept`
 * naming one of them (content negotiation, RFC 9110 section 12.5.1). Declared once here, in the
 * resource's manifest entry: the OpenAPI document lists them as the operation's responses, the
 * service checks at start that it renders exactly these, and the SDK's methods come from them.
 */
export interface ObjectRepresentation {
  /** What the answer is, for the API reference. */
  description: string;
  /** The file name's extension in `Content-Disposition` (`INV-000042.pdf`). */
  extension: string;
  /** Whether the body is binary (a PDF) rather than text (XML): the OpenAPI schema's format. */
  binary: boolean;
  /**
   * Query parameters this representation reads (name → JSON Schema of the value, with a
   * description). A value outside its schema is 400 whichever representation is asked for.
   */
  parameters?: Readonly<Record<string, Readonly<Record<string, unknown>>>>;
}

/** `?syntax=` of an invoice's e-invoice: UN/CEFACT CII (the default) or OASIS UBL 2.1. */
export const E_INVOICE_SYNTAXES = ['cii', 'ubl'] as const;
export type EInvoiceSyntaxName = (typeof E_INVOICE_SYNTAXES)[number];

const SELLER_AND_BUYER =
  "The seller is the organization's profile (Settings → Organization) as the invoice service knew it when the invoice was created, and the buyer the client as it was then: a later change of either does not change the document. " +
  'An invoice created before the organization saved a profile prints without a seller block.';

export const INVOICE_REPRESENTATIONS = {
  'application/pdf': {
    description:
      'The invoice as a PDF (A4): seller and buyer, number and dates, the lines (the table continues across pages), tax per rate, totals, amount paid and due, and the payment details. ' +
      `${SELLER_AND_BUYER} ` +
      'Text is printed with the embedded DejaVu Sans: Latin, Greek, Cyrillic, Hebrew and Arabic (right to left, shaped) print as given; a character the font lacks (CJK, most emoji) prints as U+FFFD (�). ' +
      'The same invoice always gives the same bytes until its payments change it.',
    extension: 'pdf',
    binary: true,
  },
  'application/xml': {
    description:
      'The invoice as an EN 16931 e-invoice (guideline urn:cen.eu:en16931:2017): UN/CEFACT Cross Industry Invoice D16B by default, OASIS UBL 2.1 with syntax=ubl. ' +
      `${SELLER_AND_BUYER} ` +
      "422 names what the standard needs and the data lacks (the seller's legal name, VAT id and address with its country, the buyer's country, a due date or payment terms...): complete the organization profile or the client, for invoices created after that.",
    extension: 'xml',
    binary: false,
    parameters: {
      syntax: { type: 'string', enum: [...E_INVOICE_SYNTAXES], default: 'cii', description: 'Of application/xml: cii (UN/CEFACT CII D16B, the default) or ubl (OASIS UBL 2.1).' },
    },
  },
} as const satisfies Record<string, ObjectRepresentation>;

/**
 * Documents of one organization rendered at once per server, and waiting behind them (its own
 * only); past both, 429 with Retry-After: 1. A document is CPU work (a 500-line PDF: seconds), so an
 * organization's burst must not take every render slot of a server from the others.
 */
export const DOCUMENT_RENDERS_PER_ORGANIZATION = 1;
export const DOCUMENT_QUEUE_PER_ORGANIZATION = 8;

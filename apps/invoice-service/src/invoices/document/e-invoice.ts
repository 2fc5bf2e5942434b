import { COUNTRY_CODES } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';
import { create } from 'xmlbuilder2';
import { type DocumentAddress, type DocumentSeller, decimalOf, type InvoiceDocument, minorUnitsOf, percentOf, taxBreakdown } from './invoice-document';

/**
 * The invoice as an EN 16931 e-invoice (the European standard's core, `urn:cen.eu:en16931:2017`):
 * UN/CEFACT Cross Industry Invoice D16B by default, or UBL 2.1 Invoice. What it writes:
 *
 * - a commercial invoice (type 380) in the invoice's currency (BT-5), with its notes (BT-22);
 * - seller (BT-27 name, BT-31 VAT id, BT-34 email, BG-5 address) and buyer (BT-44, BT-48 when the
 *   client's tax id is a VAT number, BT-49 email, BG-8 address);
 * - each line: quantity in unit C62 ("one"), net price, net amount, VAT category S (standard rate)
 *   for a rate above 0 and Z (zero rated) for 0 %;
 * - a VAT breakdown per rate (BG-23). The taxable amount is the sum of the lines' net amounts; the
 *   tax is taxable × rate rounded once (what BR-CO-17 checks), while the invoice's own tax is the
 *   sum of the taxes rounded per line. Where the two differ, the difference is the rounding amount
 *   (BT-114), so that the amount due (BT-115) is the invoice's to the minor unit;
 * - the paid amount as prepaid (BT-113), at most the total: an overpayment is not carried (the amount
 *   due is 0, as the API's amount_due);
 * - payment: SEPA credit transfer (code 58) to the seller's IBAN (and BIC) when it has one, else
 *   "not defined" (1); the invoice number as remittance information (BT-83); the due date (BT-9)
 *   and the seller's payment terms (BT-20).
 *
 * Not supported: credit notes, allowances and charges, VAT categories other than S and Z (AE, K, E,
 * O, G, L, M), CIUS rules such as XRechnung's or Peppol BIS's, Factur-X/ZUGFeRD PDF embedding.
 */
export type EInvoiceSyntax = 'cii' | 'ubl';

export const EN16931_GUIDELINE = 'urn:cen.eu:en16931:2017';

/** One thing EN 16931 needs that the document lacks: the field (a path in InvoiceDocument) and why. */
export interface EInvoiceGap {
  field: string;
  reason: string;
}

/** The fields an EN 16931 invoice needs and the document lacks (empty when it can be written). */
export function missingForEInvoice(doc: InvoiceDocument): string[] {
  return eInvoiceGaps(doc).map((gap) => gap.field);
}

/** {@link missingForEInvoice} with the reason of each: for a 422 that names what to fill in. */
export function eInvoiceGaps(doc: InvoiceDocument): EInvoiceGap[] {
  const gaps: EInvoiceGap[] = [];
  const { invoice, seller, buyer } = doc;
  const need = (field: string, reason: string) => gaps.push({ field, reason });

  if (xmlText(invoice.number) === '') need('invoice.number', 'an invoice number is required (BT-1)');
  if (invoice.lines.length === 0) need('invoice.lines', 'at least one line is required (BG-25)');
  if (!seller || xmlText(seller.legal_name) === '') need('seller.legal_name', "the seller's name is required (BT-27)");
  if (!seller?.vat_id) {
    need('seller.vat_id', "the seller's VAT identifier is required for standard-rated and zero-rated invoices (BT-31, BR-S-02, BR-Z-02)");
  } else if (!isVatId(seller.vat_id)) {
    need('seller.vat_id', "the seller's VAT identifier must start with its country's 2-letter prefix (BR-CO-09)");
  }
  if (!isCountry(seller?.address)) need('seller.address.country', "the seller's country is required (BT-40)");
  if (xmlText(buyer.name) === '') need('buyer.name', "the buyer's name is required (BT-44)");
  if (!isCountry(buyer.address)) need('buyer.address.country', "the buyer's country is required (BT-55)");
  if (invoice.amount_due > 0 && !invoice.due_date && !seller?.payment_terms) {
    need('invoice.due_date', 'an amount due needs a due date (BT-9) or payment terms (BT-20) (BR-CO-25)');
  }
  invoice.lines.forEach((line, i) => {
    if (xmlText(line.description) === '') need(`invoice.lines[${i}].description`, 'each line needs an item name (BT-153)');
  });

  // EN 16931 writes amounts with at most 2 decimals (BR-DEC-*): a currency of 3 or 4 decimals fits
  // only when its last digits are 0.
  const decimals = minorUnitsOf(invoice.currency);
  if (decimals > 2) {
    const fits = (amount: number) => isRepresentable(amount, decimals);
    const reason = `EN 16931 amounts have at most 2 decimals; ${invoice.currency} has ${decimals}`;
    invoice.lines.forEach((line, i) => {
      if (!fits(line.amount)) need(`invoice.lines[${i}].amount`, reason);
    });
    if (!fits(invoice.tax_total)) need('invoice.tax_total', reason);
    if (!fits(invoice.amount_paid)) need('invoice.amount_paid', reason);
  }
  return gaps;
}

/**
 * The e-invoice's XML (UTF-8). Throws a 422 ProblemException naming each missing field
 * ({@link eInvoiceGaps}) rather than writing a document that EN 16931 would reject.
 */
export function renderEInvoice(doc: InvoiceDocument, syntax: EInvoiceSyntax = 'cii'): string {
  const gaps = eInvoiceGaps(doc);
  if (gaps.length > 0) {
    throw ProblemException.validation(
      gaps.map((gap) => ({ field: gap.field, code: 'required_for_e_invoice', message: gap.reason })),
      'The invoice lacks what an EN 16931 e-invoice needs.',
    );
  }
  const figures = figuresOf(doc);
  const parties = partiesOf(doc);
  const tree = syntax === 'ubl' ? ublInvoice(doc, parties, figures) : ciiInvoice(doc, parties, figures);
  return create({ version: '1.0', encoding: 'UTF-8' }, tree).end({ prettyPrint: true });
}

// ---------------------------------------------------------------------------------------------
// The figures both syntaxes write
// ---------------------------------------------------------------------------------------------

interface VatGroup {
  category: 'S' | 'Z';
  percent: string;
  taxable: string;
  tax: string;
}

/** Every amount the XML holds, as text, and the codes. */
export interface EInvoiceFigures {
  currency: string;
  lineTotal: string;
  taxBasis: string;
  /** BT-110: Σ of the VAT breakdown's tax amounts. */
  taxTotal: string;
  /** BT-112 */
  grandTotal: string;
  /** BT-114, absent when 0. */
  rounding: string | null;
  /** BT-113, absent when nothing was paid. */
  prepaid: string | null;
  /** BT-115 */
  duePayable: string;
  vat: VatGroup[];
  lines: Array<{ id: string; name: string; quantity: string; price: string; amount: string; category: 'S' | 'Z'; percent: string }>;
  paymentMeans: '58' | '1';
}

/** The amounts of the document as EN 16931 states them (exported for the specs). */
export function figuresOf(doc: InvoiceDocument): EInvoiceFigures {
  const { invoice } = doc;
  const decimals = minorUnitsOf(invoice.currency);
  // EN 16931 rounds the tax of a rate to 2 decimals: in minor units, to a step of 10^(decimals − 2).
  const step = 10n ** BigInt(Math.max(decimals - 2, 0));
  const amount = (minor: number | bigint) => amountText(minor, decimals);
  const groups = taxBreakdown(invoice.lines).map((g) => {
    const taxAtRate = roundHalfUp(BigInt(g.taxable) * BigInt(g.tax_rate_bps), 10000n * step) * step;
    return { ...g, taxAtRate };
  });
  const taxTotal = groups.reduce((sum, g) => sum + g.taxAtRate, 0n);
  const grandTotal = BigInt(invoice.subtotal) + taxTotal;
  const rounding = BigInt(invoice.total) - grandTotal;
  const prepaid = BigInt(Math.min(invoice.amount_paid, invoice.total));
  const due = grandTotal - prepaid + rounding;
  return {
    currency: invoice.currency,
    lineTotal: amount(invoice.subtotal),
    taxBasis: amount(invoice.subtotal),
    taxTotal: amount(taxTotal),
    grandTotal: amount(grandTotal),
    rounding: rounding === 0n ? null : amount(rounding),
    prepaid: prepaid === 0n ? null : amount(prepaid),
    duePayable: amount(due),
    vat: groups.map((g) => ({ category: categoryOf(g.tax_rate_bps), percent: percentOf(g.tax_rate_bps), taxable: amount(g.taxable), tax: amount(g.taxAtRate) })),
    lines: invoice.lines.map((l, i) => ({
      id: String(i + 1),
      name: xmlText(l.description),
      quantity: l.quantity,
      // The price (BT-146) has no decimal limit: the currency's own.
      price: decimalOf(l.unit_price, decimals),
      amount: amount(l.amount),
      category: categoryOf(l.tax_rate_bps),
      percent: percentOf(l.tax_rate_bps),
    })),
    paymentMeans: doc.seller?.iban ? '58' : '1',
  };
}

const categoryOf = (bps: number): 'S' | 'Z' => (bps > 0 ? 'S' : 'Z');

/** What eInvoiceGaps made sure of: a seller, both addresses (each with a country). */
interface Parties {
  seller: DocumentSeller;
  sellerAddress: DocumentAddress;
  buyerAddress: DocumentAddress;
}

function partiesOf(doc: InvoiceDocument): Parties {
  const { seller } = doc;
  if (!seller?.address || !doc.buyer.address) throw new Error('eInvoiceGaps lets no document without a seller and both addresses through');
  return { seller, sellerAddress: seller.address, buyerAddress: doc.buyer.address };
}

function roundHalfUp(n: bigint, d: bigint): bigint {
  return n >= 0n ? (2n * n + d) / (2n * d) : -((2n * -n + d) / (2n * d));
}

/** Minor units as EN 16931 writes an amount: the currency's decimals, trailing zeros past the second dropped. */
function amountText(minor: number | bigint, decimals: number): string {
  let text = decimalOf(minor, decimals);
  for (let extra = decimals - 2; extra > 0 && text.endsWith('0'); extra--) text = text.slice(0, -1);
  return text;
}

function isRepresentable(minor: number, decimals: number): boolean {
  return BigInt(minor) % 10n ** BigInt(decimals - 2) === 0n;
}

/**
 * The prefixes BR-CO-09 accepts for a VAT identifier: ISO 3166-1 alpha-2 as the EN 16931 code list
 * has it (South Sudan's SS is not in it), plus EL (Greece), XI (Northern Ireland), 1A (Kosovo) and AN.
 */
const VAT_PREFIXES = new Set([...COUNTRY_CODES].filter((c) => c !== 'SS').concat(['EL', 'XI', '1A', 'AN']));

function isVatId(value: string): boolean {
  return /^[A-Z0-9]{2}[A-Z0-9+*.]{1,}$/.test(value) && VAT_PREFIXES.has(value.slice(0, 2));
}

function isCountry(address: DocumentAddress | null | undefined): boolean {
  return !!address?.country && COUNTRY_CODES.has(address.country);
}

const XML_INVALID = /[^\t\n\r\u0020-\uD7FF\uE000-\uFFFD\u{10000}-\u{10FFFF}]/gu;
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

/**
 * Text as XML 1.0 can hold it: lone surrogates become U+FFFD; characters XML forbids (most C0
 * controls, U+FFFE, U+FFFF) and the C1 controls are removed; NFC; trimmed. With `multiline` line
 * breaks stay, else they become spaces.
 */
export function xmlText(value: string | null | undefined, multiline = false): string {
  const text = (value ?? '')
    .replace(LONE_SURROGATE, '\uFFFD')
    .replace(XML_INVALID, '')
    .replace(/[\u007F-\u009F]/g, '')
    .normalize('NFC')
    .replace(/\r\n?/g, '\n');
  return (multiline ? text : text.replace(/[\n\t]/g, ' ')).trim();
}

/** Keys of value undefined are left out of the XML; so are empty optional parts built as undefined. */
type Tree = { [name: string]: string | Tree | Tree[] | undefined };

const optional = (value: string | null | undefined, build: (v: string) => Tree | string): Tree | string | undefined =>
  value === null || value === undefined || value === '' ? undefined : build(value);

// ---------------------------------------------------------------------------------------------
// UN/CEFACT CII D16B (the Factur-X/ZUGFeRD EN 16931 profile's schema)
// ---------------------------------------------------------------------------------------------

function ciiInvoice(doc: InvoiceDocument, { seller, sellerAddress, buyerAddress }: Parties, f: EInvoiceFigures): Tree {
  const { invoice, buyer } = doc;
  const date = (iso: string) => ({ 'udt:DateTimeString': { '@format': '102', '#': iso.replace(/-/g, '') } });
  const vatId = (id: string | null) => optional(id, (v) => ({ 'ram:ID': { '@schemeID': 'VA', '#': v } }));
  const notes = xmlText(invoice.notes, true);
  const terms = xmlText(seller.payment_terms, true);
  return {
    'rsm:CrossIndustryInvoice': {
      '@xmlns:rsm': 'urn:un:unece:uncefact:data:standard:CrossIndustryInvoice:100',
      '@xmlns:ram': 'urn:un:unece:uncefact:data:standard:ReusableAggregateBusinessInformationEntity:100',
      '@xmlns:qdt': 'urn:un:unece:uncefact:data:standard:QualifiedDataType:100',
      '@xmlns:udt': 'urn:un:unece:uncefact:data:standard:UnqualifiedDataType:100',
      'rsm:ExchangedDocumentContext': { 'ram:GuidelineSpecifiedDocumentContextParameter': { 'ram:ID': EN16931_GUIDELINE } },
      'rsm:ExchangedDocument': {
        'ram:ID': xmlText(invoice.number),
        'ram:TypeCode': '380',
        'ram:IssueDateTime': date(invoice.issue_date),
        'ram:IncludedNote': optional(notes, (content) => ({ 'ram:Content': content })),
      },
      'rsm:SupplyChainTradeTransaction': {
        'ram:IncludedSupplyChainTradeLineItem': f.lines.map((l) => ({
          'ram:AssociatedDocumentLineDocument': { 'ram:LineID': l.id },
          'ram:SpecifiedTradeProduct': { 'ram:Name': l.name },
          'ram:SpecifiedLineTradeAgreement': { 'ram:NetPriceProductTradePrice': { 'ram:ChargeAmount': l.price } },
          'ram:SpecifiedLineTradeDelivery': { 'ram:BilledQuantity': { '@unitCode': 'C62', '#': l.quantity } },
          'ram:SpecifiedLineTradeSettlement': {
            'ram:ApplicableTradeTax': { 'ram:TypeCode': 'VAT', 'ram:CategoryCode': l.category, 'ram:RateApplicablePercent': l.percent },
            'ram:SpecifiedTradeSettlementLineMonetarySummation': { 'ram:LineTotalAmount': l.amount },
          },
        })),
        'ram:ApplicableHeaderTradeAgreement': {
          'ram:SellerTradeParty': {
            'ram:Name': xmlText(seller.legal_name),
            'ram:PostalTradeAddress': ciiAddress(sellerAddress),
            'ram:URIUniversalCommunication': optional(xmlText(seller.email), (email) => ({ 'ram:URIID': { '@schemeID': 'EM', '#': email } })),
            'ram:SpecifiedTaxRegistration': vatId(seller.vat_id),
          },
          'ram:BuyerTradeParty': {
            'ram:Name': xmlText(buyer.name),
            'ram:PostalTradeAddress': ciiAddress(buyerAddress),
            'ram:URIUniversalCommunication': optional(xmlText(buyer.email), (email) => ({ 'ram:URIID': { '@schemeID': 'EM', '#': email } })),
            'ram:SpecifiedTaxRegistration': vatId(buyerVatId(doc)),
          },
        },
        'ram:ApplicableHeaderTradeDelivery': {},
        'ram:ApplicableHeaderTradeSettlement': {
          'ram:PaymentReference': xmlText(invoice.number),
          'ram:InvoiceCurrencyCode': f.currency,
          'ram:SpecifiedTradeSettlementPaymentMeans': {
            'ram:TypeCode': f.paymentMeans,
            'ram:PayeePartyCreditorFinancialAccount': optional(seller.iban, (iban) => ({ 'ram:IBANID': iban })),
            'ram:PayeeSpecifiedCreditorFinancialInstitution': seller.iban ? optional(seller.bic, (bic) => ({ 'ram:BICID': bic })) : undefined,
          },
          'ram:ApplicableTradeTax': f.vat.map((g) => ({
            'ram:CalculatedAmount': g.tax,
            'ram:TypeCode': 'VAT',
            'ram:BasisAmount': g.taxable,
            'ram:CategoryCode': g.category,
            'ram:RateApplicablePercent': g.percent,
          })),
          'ram:SpecifiedTradePaymentTerms':
            terms || invoice.due_date
              ? {
                  'ram:Description': optional(terms, (t) => t),
                  'ram:DueDateDateTime': optional(invoice.due_date, date),
                }
              : undefined,
          'ram:SpecifiedTradeSettlementHeaderMonetarySummation': {
            'ram:LineTotalAmount': f.lineTotal,
            'ram:TaxBasisTotalAmount': f.taxBasis,
            'ram:TaxTotalAmount': { '@currencyID': f.currency, '#': f.taxTotal },
            'ram:RoundingAmount': optional(f.rounding, (r) => r),
            'ram:GrandTotalAmount': f.grandTotal,
            'ram:TotalPrepaidAmount': optional(f.prepaid, (p) => p),
            'ram:DuePayableAmount': f.duePayable,
          },
        },
      },
    },
  };
}

function ciiAddress(a: DocumentAddress): Tree {
  return {
    'ram:PostcodeCode': optional(xmlText(a.postal_code), (v) => v),
    'ram:LineOne': optional(xmlText(a.line1), (v) => v),
    'ram:LineTwo': optional(xmlText(a.line2), (v) => v),
    'ram:CityName': optional(xmlText(a.city), (v) => v),
    'ram:CountryID': a.country ?? '',
    'ram:CountrySubDivisionName': optional(xmlText(a.region), (v) => v),
  };
}

/** The client's tax id as the buyer's VAT identifier (BT-48) only when it is one (a country prefix). */
function buyerVatId(doc: InvoiceDocument): string | null {
  const id = doc.buyer.vat_id?.replace(/[\s.-]+/g, '').toUpperCase() ?? null;
  return id && isVatId(id) ? id : null;
}

// ---------------------------------------------------------------------------------------------
// UBL 2.1 Invoice
// ---------------------------------------------------------------------------------------------

function ublInvoice(doc: InvoiceDocument, { seller, sellerAddress, buyerAddress }: Parties, f: EInvoiceFigures): Tree {
  const { invoice, buyer } = doc;
  const money = (value: string) => ({ '@currencyID': f.currency, '#': value });
  const category = (id: 'S' | 'Z', percent: string) => ({ 'cbc:ID': id, 'cbc:Percent': percent, 'cac:TaxScheme': { 'cbc:ID': 'VAT' } });
  const party = (p: { name: string; email: string | null; address: DocumentAddress; vatId: string | null }) => ({
    'cac:Party': {
      'cbc:EndpointID': optional(xmlText(p.email), (email) => ({ '@schemeID': 'EM', '#': email })),
      'cac:PostalAddress': ublAddress(p.address),
      'cac:PartyTaxScheme': optional(p.vatId, (id) => ({ 'cbc:CompanyID': id, 'cac:TaxScheme': { 'cbc:ID': 'VAT' } })),
      'cac:PartyLegalEntity': { 'cbc:RegistrationName': xmlText(p.name) },
    },
  });
  const notes = xmlText(invoice.notes, true);
  const terms = xmlText(seller.payment_terms, true);
  return {
    Invoice: {
      '@xmlns': 'urn:oasis:names:specification:ubl:schema:xsd:Invoice-2',
      '@xmlns:cac': 'urn:oasis:names:specification:ubl:schema:xsd:CommonAggregateComponents-2',
      '@xmlns:cbc': 'urn:oasis:names:specification:ubl:schema:xsd:CommonBasicComponents-2',
      'cbc:CustomizationID': EN16931_GUIDELINE,
      'cbc:ID': xmlText(invoice.number),
      'cbc:IssueDate': invoice.issue_date,
      'cbc:DueDate': optional(invoice.due_date, (d) => d),
      'cbc:InvoiceTypeCode': '380',
      'cbc:Note': optional(notes, (n) => n),
      'cbc:DocumentCurrencyCode': f.currency,
      'cac:AccountingSupplierParty': party({ name: seller.legal_name, email: seller.email, address: sellerAddress, vatId: seller.vat_id }),
      'cac:AccountingCustomerParty': party({ name: buyer.name, email: buyer.email, address: buyerAddress, vatId: buyerVatId(doc) }),
      'cac:PaymentMeans': {
        'cbc:PaymentMeansCode': f.paymentMeans,
        'cbc:PaymentID': xmlText(invoice.number),
        'cac:PayeeFinancialAccount': optional(seller.iban, (iban) => ({
          'cbc:ID': iban,
          'cac:FinancialInstitutionBranch': optional(seller.bic, (bic) => ({ 'cbc:ID': bic })),
        })),
      },
      'cac:PaymentTerms': optional(terms, (t) => ({ 'cbc:Note': t })),
      'cac:TaxTotal': {
        'cbc:TaxAmount': money(f.taxTotal),
        'cac:TaxSubtotal': f.vat.map((g) => ({
          'cbc:TaxableAmount': money(g.taxable),
          'cbc:TaxAmount': money(g.tax),
          'cac:TaxCategory': category(g.category, g.percent),
        })),
      },
      'cac:LegalMonetaryTotal': {
        'cbc:LineExtensionAmount': money(f.lineTotal),
        'cbc:TaxExclusiveAmount': money(f.taxBasis),
        'cbc:TaxInclusiveAmount': money(f.grandTotal),
        'cbc:PrepaidAmount': optional(f.prepaid, money),
        'cbc:PayableRoundingAmount': optional(f.rounding, money),
        'cbc:PayableAmount': money(f.duePayable),
      },
      'cac:InvoiceLine': f.lines.map((l) => ({
        'cbc:ID': l.id,
        'cbc:InvoicedQuantity': { '@unitCode': 'C62', '#': l.quantity },
        'cbc:LineExtensionAmount': money(l.amount),
        'cac:Item': { 'cbc:Name': l.name, 'cac:ClassifiedTaxCategory': category(l.category, l.percent) },
        'cac:Price': { 'cbc:PriceAmount': money(l.price) },
      })),
    },
  };
}

function ublAddress(a: DocumentAddress): Tree {
  return {
    'cbc:StreetName': optional(xmlText(a.line1), (v) => v),
    'cbc:AdditionalStreetName': optional(xmlText(a.line2), (v) => v),
    'cbc:CityName': optional(xmlText(a.city), (v) => v),
    'cbc:PostalZone': optional(xmlText(a.postal_code), (v) => v),
    'cbc:CountrySubentity': optional(xmlText(a.region), (v) => v),
    'cac:Country': { 'cbc:IdentificationCode': a.country ?? '' },
  };
}

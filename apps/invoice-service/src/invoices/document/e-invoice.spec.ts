import { ProblemException } from '@invoicing/service-kit';
import { create } from 'xmlbuilder2';
import { CLIENT, invoiceDocument, THREE_LINES } from '../../testing/invoice-documents';
import { eInvoiceGaps, figuresOf, missingForEInvoice, renderEInvoice, xmlText } from './e-invoice';

type Xml = { [key: string]: Xml | Xml[] | string | undefined };

function parse(xml: string): Xml {
  return create(xml).end({ format: 'object' }) as unknown as Xml;
}

/** The node at a path of element names; a list where the element repeats. */
function at(node: Xml | Xml[] | string | undefined, ...path: string[]): Xml | Xml[] | string | undefined {
  return path.reduce<Xml | Xml[] | string | undefined>((n, key) => (n && typeof n === 'object' && !Array.isArray(n) ? n[key] : undefined), node);
}
const list = (node: unknown): Xml[] => (Array.isArray(node) ? node : node === undefined ? [] : [node as Xml]);
const text = (node: unknown): string | undefined => (typeof node === 'string' ? node : ((node as Xml | undefined)?.['#'] as string | undefined));

const CII = 'rsm:CrossIndustryInvoice';
const TRANSACTION = [CII, 'rsm:SupplyChainTradeTransaction'];
const SETTLEMENT = [...TRANSACTION, 'ram:ApplicableHeaderTradeSettlement'];
const SUMMATION = [...SETTLEMENT, 'ram:SpecifiedTradeSettlementHeaderMonetarySummation'];

describe(renderEInvoice.name, () => {
  const doc = invoiceDocument({ lines: [...THREE_LINES, { description: 'Exported spare part', quantity: 1, unit_price: 1000, tax_rate_bps: 0 }], paid: 10000 });

  it('writes CII D16B by default with the EN 16931 guideline, the parties, lines and totals', () => {
    const xml = parse(renderEInvoice(doc));
    expect(at(xml, CII, 'rsm:ExchangedDocumentContext', 'ram:GuidelineSpecifiedDocumentContextParameter', 'ram:ID')).toBe('urn:cen.eu:en16931:2017');
    expect(at(xml, CII, 'rsm:ExchangedDocument', 'ram:ID')).toBe('INV-000042');
    expect(at(xml, CII, 'rsm:ExchangedDocument', 'ram:TypeCode')).toBe('380');
    expect(text(at(xml, CII, 'rsm:ExchangedDocument', 'ram:IssueDateTime', 'udt:DateTimeString'))).toBe('20250301');
    const agreement = [...TRANSACTION, 'ram:ApplicableHeaderTradeAgreement'];
    expect(at(xml, ...agreement, 'ram:SellerTradeParty', 'ram:Name')).toBe('Nordlicht Software GmbH');
    expect(text(at(xml, ...agreement, 'ram:SellerTradeParty', 'ram:SpecifiedTaxRegistration', 'ram:ID'))).toBe('DE123456789');
    expect(at(xml, ...agreement, 'ram:SellerTradeParty', 'ram:PostalTradeAddress', 'ram:CountryID')).toBe('DE');
    expect(at(xml, ...agreement, 'ram:BuyerTradeParty', 'ram:Name')).toBe('Acme Analytics Ltd');
    expect(at(xml, ...agreement, 'ram:BuyerTradeParty', 'ram:PostalTradeAddress', 'ram:PostcodeCode')).toBe('E14 5AB');
    expect(text(at(xml, ...agreement, 'ram:BuyerTradeParty', 'ram:URIUniversalCommunication', 'ram:URIID'))).toBe('accounts@acme.example');

    const lines = list(at(xml, ...TRANSACTION, 'ram:IncludedSupplyChainTradeLineItem'));
    expect(lines).toHaveLength(4);
    expect(lines.map((l) => at(l, 'ram:SpecifiedTradeProduct', 'ram:Name'))).toEqual(doc.invoice.lines.map((l) => l.description));
    expect(lines.map((l) => at(l, 'ram:SpecifiedLineTradeDelivery', 'ram:BilledQuantity'))).toEqual([
      { '@unitCode': 'C62', '#': '12.5' },
      { '@unitCode': 'C62', '#': '1' },
      { '@unitCode': 'C62', '#': '2' },
      { '@unitCode': 'C62', '#': '1' },
    ]);
    expect(lines.map((l) => at(l, 'ram:SpecifiedLineTradeSettlement', 'ram:ApplicableTradeTax'))).toEqual([
      { 'ram:TypeCode': 'VAT', 'ram:CategoryCode': 'S', 'ram:RateApplicablePercent': '19' },
      { 'ram:TypeCode': 'VAT', 'ram:CategoryCode': 'S', 'ram:RateApplicablePercent': '19' },
      { 'ram:TypeCode': 'VAT', 'ram:CategoryCode': 'S', 'ram:RateApplicablePercent': '7' },
      { 'ram:TypeCode': 'VAT', 'ram:CategoryCode': 'Z', 'ram:RateApplicablePercent': '0' },
    ]);
    expect(lines.map((l) => at(l, 'ram:SpecifiedLineTradeAgreement', 'ram:NetPriceProductTradePrice', 'ram:ChargeAmount'))).toEqual(['120.00', '49.99', '29.90', '10.00']);

    expect(at(xml, ...SETTLEMENT, 'ram:InvoiceCurrencyCode')).toBe('EUR');
    expect(at(xml, ...SETTLEMENT, 'ram:PaymentReference')).toBe('INV-000042');
    expect(list(at(xml, ...SETTLEMENT, 'ram:ApplicableTradeTax'))).toEqual([
      { 'ram:CalculatedAmount': '294.50', 'ram:TypeCode': 'VAT', 'ram:BasisAmount': '1549.99', 'ram:CategoryCode': 'S', 'ram:RateApplicablePercent': '19' },
      { 'ram:CalculatedAmount': '4.19', 'ram:TypeCode': 'VAT', 'ram:BasisAmount': '59.80', 'ram:CategoryCode': 'S', 'ram:RateApplicablePercent': '7' },
      { 'ram:CalculatedAmount': '0.00', 'ram:TypeCode': 'VAT', 'ram:BasisAmount': '10.00', 'ram:CategoryCode': 'Z', 'ram:RateApplicablePercent': '0' },
    ]);
    expect(at(xml, ...SUMMATION)).toEqual({
      'ram:LineTotalAmount': '1619.79',
      'ram:TaxBasisTotalAmount': '1619.79',
      'ram:TaxTotalAmount': { '@currencyID': 'EUR', '#': '298.69' },
      'ram:GrandTotalAmount': '1918.48',
      'ram:TotalPrepaidAmount': '100.00',
      'ram:DuePayableAmount': '1818.48',
    });
    const terms = at(xml, ...SETTLEMENT, 'ram:SpecifiedTradePaymentTerms');
    expect(at(terms, 'ram:Description')).toBe('Payable within 30 days of the invoice date without deduction.');
    expect(text(at(terms, 'ram:DueDateDateTime', 'udt:DateTimeString'))).toBe('20250331');
  });

  it('pays by SEPA credit transfer (58) to the IBAN and BIC when the seller has an IBAN, else "not defined" (1)', () => {
    const means = at(parse(renderEInvoice(doc)), ...SETTLEMENT, 'ram:SpecifiedTradeSettlementPaymentMeans');
    expect(means).toEqual({
      'ram:TypeCode': '58',
      'ram:PayeePartyCreditorFinancialAccount': { 'ram:IBANID': 'DE89370400440532013000' },
      'ram:PayeeSpecifiedCreditorFinancialInstitution': { 'ram:BICID': 'COBADEFFXXX' },
    });
    const withoutIban = invoiceDocument({ lines: THREE_LINES, seller: { iban: null, bic: null } });
    expect(at(parse(renderEInvoice(withoutIban)), ...SETTLEMENT, 'ram:SpecifiedTradeSettlementPaymentMeans')).toEqual({ 'ram:TypeCode': '1' });
    const ubl = parse(renderEInvoice(withoutIban, 'ubl'));
    expect(at(ubl, 'Invoice', 'cac:PaymentMeans')).toEqual({ 'cbc:PaymentMeansCode': '1', 'cbc:PaymentID': 'INV-000042' });
  });

  it('writes UBL 2.1 with the same figures, each amount with its currency', () => {
    const xml = parse(renderEInvoice(doc, 'ubl'));
    const invoice = at(xml, 'Invoice') as Xml;
    expect(invoice['@xmlns']).toBe('urn:oasis:names:specification:ubl:schema:xsd:Invoice-2');
    expect(invoice['cbc:CustomizationID']).toBe('urn:cen.eu:en16931:2017');
    expect(invoice['cbc:DueDate']).toBe('2025-03-31');
    expect(invoice['cbc:DocumentCurrencyCode']).toBe('EUR');
    expect(at(invoice, 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyLegalEntity', 'cbc:RegistrationName')).toBe('Nordlicht Software GmbH');
    expect(at(invoice, 'cac:AccountingSupplierParty', 'cac:Party', 'cac:PartyTaxScheme', 'cbc:CompanyID')).toBe('DE123456789');
    expect(at(invoice, 'cac:AccountingCustomerParty', 'cac:Party', 'cac:PostalAddress', 'cac:Country', 'cbc:IdentificationCode')).toBe('GB');
    expect(at(invoice, 'cac:LegalMonetaryTotal')).toEqual({
      'cbc:LineExtensionAmount': { '@currencyID': 'EUR', '#': '1619.79' },
      'cbc:TaxExclusiveAmount': { '@currencyID': 'EUR', '#': '1619.79' },
      'cbc:TaxInclusiveAmount': { '@currencyID': 'EUR', '#': '1918.48' },
      'cbc:PrepaidAmount': { '@currencyID': 'EUR', '#': '100.00' },
      'cbc:PayableAmount': { '@currencyID': 'EUR', '#': '1818.48' },
    });
    const lines = list(invoice['cac:InvoiceLine']);
    expect(lines).toHaveLength(4);
    expect(lines[0]).toEqual({
      'cbc:ID': '1',
      'cbc:InvoicedQuantity': { '@unitCode': 'C62', '#': '12.5' },
      'cbc:LineExtensionAmount': { '@currencyID': 'EUR', '#': '1500.00' },
      'cac:Item': {
        'cbc:Name': 'Consulting, March (senior engineer)',
        'cac:ClassifiedTaxCategory': { 'cbc:ID': 'S', 'cbc:Percent': '19', 'cac:TaxScheme': { 'cbc:ID': 'VAT' } },
      },
      'cac:Price': { 'cbc:PriceAmount': { '@currencyID': 'EUR', '#': '120.00' } },
    });
    expect(list(at(invoice, 'cac:TaxTotal', 'cac:TaxSubtotal')).map((s) => at(s, 'cac:TaxCategory', 'cbc:ID'))).toEqual(['S', 'S', 'Z']);
  });

  it('states the tax of a rate as taxable × rate and puts the per-line rounding into BT-114, so the amount due stays exact', () => {
    // 60 lines of 0.05 at 19 %: each line's tax is 0.0095 → 0.01 (0.60 in all); the rate's is 3.00 × 19 % = 0.57.
    const lines = Array.from({ length: 60 }, (_, i) => ({ description: `Item ${i + 1}`, quantity: 1, unit_price: 5, tax_rate_bps: 1900 }));
    const rounded = invoiceDocument({ lines, paid: 100 });
    expect(rounded.invoice).toMatchObject({ subtotal: 300, tax_total: 60, total: 360, amount_due: 260 });
    const xml = parse(renderEInvoice(rounded));
    expect(at(xml, ...SETTLEMENT, 'ram:ApplicableTradeTax')).toMatchObject({ 'ram:CalculatedAmount': '0.57', 'ram:BasisAmount': '3.00' });
    expect(at(xml, ...SUMMATION)).toEqual({
      'ram:LineTotalAmount': '3.00',
      'ram:TaxBasisTotalAmount': '3.00',
      'ram:TaxTotalAmount': { '@currencyID': 'EUR', '#': '0.57' },
      'ram:RoundingAmount': '0.03',
      'ram:GrandTotalAmount': '3.57',
      'ram:TotalPrepaidAmount': '1.00',
      'ram:DuePayableAmount': '2.60',
    });
    expect(at(parse(renderEInvoice(rounded, 'ubl')), 'Invoice', 'cac:LegalMonetaryTotal', 'cbc:PayableRoundingAmount')).toEqual({ '@currencyID': 'EUR', '#': '0.03' });
    // Where the two agree there is no rounding amount.
    expect(figuresOf(doc).rounding).toBeNull();
  });

  it('takes the paid amount as prepaid, at most the total (an overpayment leaves 0 due)', () => {
    const full = figuresOf(invoiceDocument({ lines: THREE_LINES, paid: 'full' }));
    expect(full).toMatchObject({ grandTotal: '1908.48', prepaid: '1908.48', duePayable: '0.00' });
    const over = figuresOf(invoiceDocument({ lines: THREE_LINES, paid: 'over' }));
    expect(over).toMatchObject({ grandTotal: '1908.48', prepaid: '1908.48', duePayable: '0.00' });
    expect(figuresOf(invoiceDocument({ lines: THREE_LINES })).prepaid).toBeNull();
  });

  it("writes amounts in the currency's decimals: none for JPY, BHD's third only when it is not 0", () => {
    const jpy = figuresOf(invoiceDocument({ currency: 'JPY', lines: [{ description: 'Hours', quantity: '1.5', unit_price: 333, tax_rate_bps: 1000 }] }));
    expect(jpy).toMatchObject({ lineTotal: '500', taxTotal: '50', grandTotal: '550', duePayable: '550' });
    expect(jpy.lines[0]).toMatchObject({ price: '333', amount: '500', quantity: '1.5' });
    const bhd = figuresOf(invoiceDocument({ currency: 'BHD', lines: [{ description: 'Parts', quantity: 10, unit_price: 1234, tax_rate_bps: 1000 }] }));
    expect(bhd).toMatchObject({ lineTotal: '12.34', taxTotal: '1.23', grandTotal: '13.57', rounding: '0.004' });
    expect(bhd.lines[0]).toMatchObject({ price: '1.234', amount: '12.34' });
  });

  it('keeps any text the API accepts well-formed: controls and lone surrogates out, markup escaped', () => {
    const hostile = invoiceDocument({
      lines: [{ description: 'a\u0000b <c> & "d" \uD800 \uFFFF', quantity: 1, unit_price: 100, tax_rate_bps: 1900 }],
      client: { name: 'Acme <Evil> & Co' },
      notes: 'one\r\ntwo\u0001',
    });
    const xml = renderEInvoice(hostile);
    expect(xml).toContain('<ram:Name>ab &lt;c&gt; &amp; "d" \uFFFD</ram:Name>');
    expect(xml).toContain('Acme &lt;Evil&gt; &amp; Co');
    expect(at(parse(xml), CII, 'rsm:ExchangedDocument', 'ram:IncludedNote', 'ram:Content')).toBe('one\ntwo');
    expect(xmlText('\u0085x\u009f')).toBe('x');
  });

  it('refuses with a 422 naming each missing field instead of writing an invalid document', () => {
    const incomplete = invoiceDocument({ lines: THREE_LINES, seller: null, client: { address: null }, due_date: null });
    try {
      renderEInvoice(incomplete);
      throw new Error('expected a 422');
    } catch (e) {
      expect(e).toBeInstanceOf(ProblemException);
      expect((e as ProblemException).status).toBe(422);
      expect((e as ProblemException).errors?.map((x) => x.field)).toEqual([
        'seller.legal_name',
        'seller.vat_id',
        'seller.address.country',
        'buyer.address.country',
        'invoice.due_date',
      ]);
    }
  });
});

describe(missingForEInvoice.name, () => {
  it('is empty for a complete invoice', () => {
    expect(missingForEInvoice(invoiceDocument({ lines: THREE_LINES }))).toEqual([]);
  });

  it('names the seller profile fields EN 16931 needs', () => {
    const doc = invoiceDocument({ lines: THREE_LINES, seller: { vat_id: null, address: null } });
    expect(missingForEInvoice(doc)).toEqual(['seller.vat_id', 'seller.address.country']);
  });

  it('needs a VAT identifier with a country prefix (BR-CO-09), and a buyer country', () => {
    const doc = invoiceDocument({ lines: THREE_LINES, seller: { vat_id: '123456789' }, client: { ...CLIENT, address: { line1: 'x', city: 'y' } } });
    expect(eInvoiceGaps(doc)).toEqual([
      { field: 'seller.vat_id', reason: expect.stringContaining('BR-CO-09') },
      { field: 'buyer.address.country', reason: expect.stringContaining('BT-55') },
    ]);
  });

  it('needs a due date or payment terms while an amount is due (BR-CO-25), not once paid', () => {
    const open = invoiceDocument({ lines: THREE_LINES, due_date: null, seller: { payment_terms: null } });
    expect(missingForEInvoice(open)).toEqual(['invoice.due_date']);
    const paid = invoiceDocument({ lines: THREE_LINES, due_date: null, seller: { payment_terms: null }, paid: 'full' });
    expect(missingForEInvoice(paid)).toEqual([]);
  });

  it('names a line whose description holds nothing printable, and amounts of 3 decimals EN 16931 cannot write', () => {
    const blank = invoiceDocument({ lines: [{ description: '\u0000\u0001', quantity: 1, unit_price: 100 }] });
    expect(missingForEInvoice(blank)).toEqual(['invoice.lines[0].description']);
    const bhd = invoiceDocument({
      currency: 'BHD',
      lines: [
        { description: 'fits', quantity: 1, unit_price: 1230, tax_rate_bps: 1000 },
        { description: 'needs the third decimal', quantity: 1, unit_price: 1235 },
      ],
    });
    expect(missingForEInvoice(bhd)).toEqual(['invoice.lines[1].amount', 'invoice.tax_total']);
  });
});

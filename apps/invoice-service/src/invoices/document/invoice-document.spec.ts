import type { InvoiceEntity } from '../invoice.entity';
import { CLIENT, SELLER } from '../../testing/invoice-documents';
import { addressLines, buildInvoiceDocument, decimalOf, percentOf, postalAddressOf, taxBreakdown } from './invoice-document';

describe(buildInvoiceDocument.name, () => {
  // An entity as TypeORM loads it (only the columns the view reads).
  const entity = {
    id: '0190f2a0-0000-7000-8000-000000000001',
    organizationId: '0190f2a0-0000-7000-8000-0000000000aa',
    createdAt: new Date('2025-03-01T09:00:00Z'),
    clientId: '0190f2a0-0000-7000-8000-0000000000cc',
    number: 'INV-000001',
    currency: 'EUR',
    issueDate: '2025-03-01',
    dueDate: null,
    notes: '  ',
    lineItems: [{ description: 'Hours', quantity_milli: '1500', unit_price: 10001, tax_rate_bps: 2000, product_id: null, amount: 15002, tax: 3000 }],
    subtotal: 15002,
    taxTotal: 3000,
    total: 18002,
    amountPaid: 20000,
    status: 'paid',
    contentBytes: 0,
  } as InvoiceEntity;

  it('builds the document from a stored invoice, its seller profile and its client', () => {
    const doc = buildInvoiceDocument(entity, { ...SELLER, iban: 'de89 3704 0044 0532 0130 00', vat_id: 'de 123456789' }, CLIENT);
    expect(doc.invoice).toEqual({
      number: 'INV-000001',
      issue_date: '2025-03-01',
      due_date: null,
      currency: 'EUR',
      status: 'paid',
      lines: [{ description: 'Hours', quantity: '1.5', unit_price: 10001, tax_rate_bps: 2000, amount: 15002, tax: 3000 }],
      subtotal: 15002,
      tax_total: 3000,
      total: 18002,
      amount_paid: 20000,
      amount_due: 0,
      notes: null,
    });
    expect(doc.seller).toMatchObject({ legal_name: 'Nordlicht Software GmbH', iban: 'DE89370400440532013000', vat_id: 'DE123456789' });
    expect(doc.buyer).toEqual({
      name: 'Acme Analytics Ltd',
      email: 'accounts@acme.example',
      vat_id: 'GB123456789',
      address: { line1: '1 Canada Square', line2: null, city: 'London', postal_code: 'E14 5AB', region: null, country: 'GB' },
    });
  });

  it('has no seller for an organization that never set its profile (every field null)', () => {
    const empty = { legal_name: null, address: null, vat_id: null, email: null, iban: null, bic: null, payment_terms: null };
    expect(buildInvoiceDocument(entity, empty, CLIENT).seller).toBeNull();
    expect(buildInvoiceDocument(entity, null, { name: 'Bare' }).buyer).toEqual({ name: 'Bare', email: null, address: null, vat_id: null });
  });
});

describe(taxBreakdown.name, () => {
  it('sums the net amounts and the per-line taxes of each rate, highest rate first, and the tax of the rate computed once', () => {
    const lines = [
      { tax_rate_bps: 700, amount: 5980, tax: 419 },
      { tax_rate_bps: 1900, amount: 5, tax: 1 },
      { tax_rate_bps: 1900, amount: 5, tax: 1 },
      { tax_rate_bps: 0, amount: 1000, tax: 0 },
      { tax_rate_bps: 1900, amount: 5, tax: 1 },
    ];
    expect(taxBreakdown(lines)).toEqual([
      { tax_rate_bps: 1900, taxable: 15, tax: 3, tax_at_rate: 3 }, // 2.85 → 3
      { tax_rate_bps: 700, taxable: 5980, tax: 419, tax_at_rate: 419 },
      { tax_rate_bps: 0, taxable: 1000, tax: 0, tax_at_rate: 0 },
    ]);
    const many = Array.from({ length: 60 }, () => ({ tax_rate_bps: 1900, amount: 5, tax: 1 }));
    expect(taxBreakdown(many)).toEqual([{ tax_rate_bps: 1900, taxable: 300, tax: 60, tax_at_rate: 57 }]);
  });

  it('stays exact past 2^53 of intermediate products', () => {
    const big = [{ tax_rate_bps: 2500, amount: 999_999_999_999, tax: 250_000_000_000 }];
    expect(taxBreakdown(big)[0].tax_at_rate).toBe(250_000_000_000);
  });
});

describe(postalAddressOf.name, () => {
  it('fills every key, blank as null, the country upper case; nothing at all is null', () => {
    expect(postalAddressOf({ line1: 'Main St 1', city: 'Paris', country: 'fr', postal_code: ' ' })).toEqual({
      line1: 'Main St 1',
      line2: null,
      city: 'Paris',
      postal_code: null,
      region: null,
      country: 'FR',
    });
    expect(postalAddressOf({ line1: '', city: null })).toBeNull();
    expect(postalAddressOf(undefined)).toBeNull();
    expect(addressLines(postalAddressOf({ line1: 'Main St 1', city: 'Paris', postal_code: '75001', country: 'FR' }))).toEqual(['Main St 1', '75001 Paris', 'FR']);
  });
});

describe(decimalOf.name, () => {
  it('writes minor units exactly with the currency decimals', () => {
    expect(decimalOf(12345, 2)).toBe('123.45');
    expect(decimalOf(5, 2)).toBe('0.05');
    expect(decimalOf(-5, 3)).toBe('-0.005');
    expect(decimalOf(1000, 0)).toBe('1000');
    expect(decimalOf(1_000_000_000_000, 2)).toBe('10000000000.00');
    expect([2000, 1950, 725, 0, 10000].map(percentOf)).toEqual(['20', '19.5', '7.25', '0', '100']);
  });
});

import { FieldErrors } from '@invoicing/service-kit';
import { calculateInvoice, quantityForDisplay } from '../invoices/invoice-calculation';
import type { InvoiceView } from '../invoices/invoice.view';
import { buildInvoiceDocument, type ClientLike, type InvoiceDocument, type SellerProfile } from '../invoices/document/invoice-document';

/** Test documents for the document renderers' specs and the validator tier: built as the service builds them. */

export const SELLER: SellerProfile = {
  legal_name: 'Nordlicht Software GmbH',
  address: { line1: 'Friedrichstraße 123', line2: 'Aufgang B', city: 'Berlin', postal_code: '10117', region: null, country: 'DE' },
  vat_id: 'DE123456789',
  email: 'billing@nordlicht.example',
  iban: 'DE89370400440532013000',
  bic: 'COBADEFFXXX',
  payment_terms: 'Payable within 30 days of the invoice date without deduction.',
};

export const CLIENT: ClientLike = {
  name: 'Acme Analytics Ltd',
  email: 'accounts@acme.example',
  tax_id: 'GB123456789',
  address: { line1: '1 Canada Square', line2: null, city: 'London', postal_code: 'E14 5AB', region: null, country: 'GB' },
};

export interface LineSpec {
  description: string;
  quantity: number | string;
  unit_price: number;
  tax_rate_bps?: number;
}

export interface DocumentSpec {
  number?: string;
  currency?: string;
  issue_date?: string;
  due_date?: string | null;
  notes?: string | null;
  lines: LineSpec[];
  /** Minor units, or 'full' (the total) or 'over' (the total and 1,000 minor units more). Default 0. */
  paid?: number | 'full' | 'over';
  seller?: Partial<SellerProfile> | null;
  client?: Partial<ClientLike>;
}

/** A document through calculateInvoice, the public view and buildInvoiceDocument. */
export function invoiceDocument(spec: DocumentSpec): InvoiceDocument {
  const errors = new FieldErrors();
  const totals = calculateInvoice(spec.lines, errors);
  errors.throwIfAny();
  const paid = spec.paid === 'full' ? totals.total : spec.paid === 'over' ? totals.total + 1000 : (spec.paid ?? 0);
  const view: InvoiceView = {
    object: 'invoice',
    id: `inv_${'0'.repeat(31)}1`,
    created_at: '2025-03-01T09:00:00.000Z',
    client_id: `cli_${'0'.repeat(31)}1`,
    number: spec.number ?? 'INV-000042',
    currency: spec.currency ?? 'EUR',
    issue_date: spec.issue_date ?? '2025-03-01',
    due_date: spec.due_date === undefined ? '2025-03-31' : spec.due_date,
    status: paid >= totals.total ? 'paid' : paid > 0 ? 'partially_paid' : 'open',
    line_items: totals.lines.map((l) => ({
      description: l.description,
      quantity: quantityForDisplay(l),
      unit_price: l.unit_price,
      tax_rate_bps: l.tax_rate_bps,
      product_id: null,
      amount: l.amount,
      tax: l.tax,
    })),
    subtotal: totals.subtotal,
    tax_total: totals.taxTotal,
    total: totals.total,
    amount_paid: paid,
    amount_due: Math.max(totals.total - paid, 0),
    notes: spec.notes === undefined ? null : spec.notes,
  };
  const seller = spec.seller === null ? null : { ...SELLER, ...spec.seller };
  return buildInvoiceDocument(view, seller, { ...CLIENT, ...spec.client });
}

export const THREE_LINES: LineSpec[] = [
  { description: 'Consulting, March (senior engineer)', quantity: '12.5', unit_price: 12000, tax_rate_bps: 1900 },
  { description: 'Hosting plan Pro', quantity: 1, unit_price: 4999, tax_rate_bps: 1900 },
  { description: 'Technical book "Invoices in practice"', quantity: 2, unit_price: 2990, tax_rate_bps: 700 },
];

/** `count` lines numbered from 1 ("Line 001 …"), prices and rates from a seeded generator. */
export function manyLines(count: number, seed = 1): LineSpec[] {
  const random = seededRandom(seed);
  const rates = [1900, 700, 0];
  return Array.from({ length: count }, (_, i) => ({
    description: `Line ${String(i + 1).padStart(3, '0')} ${pick(random, WORDS)} ${pick(random, WORDS)} ${pick(random, WORDS)}`,
    quantity: `${1 + Math.floor(random() * 20)}.${Math.floor(random() * 1000)}`.replace(/\.0+$/, ''),
    unit_price: 1 + Math.floor(random() * 250_000),
    tax_rate_bps: rates[Math.floor(random() * rates.length)],
  }));
}

/** Names and text in many scripts, each written as people write them. */
export const NON_LATIN = {
  greek: 'Ελληνικά Λογισμικά Α.Ε.',
  cyrillic: 'ООО «Ромашка» Москва',
  arabic: 'شركة الخليج للتجارة',
  hebrew: 'חברת הדוגמה בע״מ',
  emoji: 'Café ☕ Team 🚀 😀',
  cjk: '株式会社テスト 北京市',
};

/** mulberry32: a small seeded generator, so random corpora are the same on every run. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

function pick<T>(random: () => number, items: readonly T[]): T {
  return items[Math.floor(random() * items.length)];
}

const WORDS = [
  'widget', 'license', 'support', 'consulting', 'hosting', 'storage', 'training', 'review', 'design', 'audit',
  'migration', 'backup', 'monitoring', 'seats', 'annual', 'monthly', 'premium', 'standard', 'onboarding', 'travel',
] as const;

/** One document of the e-invoice corpus: its file name stem and the document. */
export interface CorpusEntry {
  name: string;
  doc: InvoiceDocument;
}

/**
 * The documents the validator tier writes in both syntaxes: the shapes of invoice the API makes
 * (one line, 500 lines, several rates, 0 %, partial, full and over-payment, names in many scripts,
 * currencies of 0 and 3 decimals, with and without an IBAN, per-line tax rounding) and seeded
 * random ones.
 */
export function eInvoiceCorpus(randomCount = 6): CorpusEntry[] {
  const entries: CorpusEntry[] = [
    { name: 'one-line', doc: invoiceDocument({ lines: [THREE_LINES[0]] }) },
    { name: '500-lines', doc: invoiceDocument({ number: 'INV-000500', lines: manyLines(500, 7) }) },
    {
      name: 'several-rates',
      doc: invoiceDocument({
        lines: [
          { description: 'Standard rate', quantity: 3, unit_price: 1999, tax_rate_bps: 1900 },
          { description: 'Reduced rate', quantity: '2.5', unit_price: 1234, tax_rate_bps: 700 },
          { description: 'French reduced rate', quantity: 1, unit_price: 999, tax_rate_bps: 550 },
          { description: 'Zero rate', quantity: 4, unit_price: 250, tax_rate_bps: 0 },
        ],
      }),
    },
    { name: 'zero-rate-only', doc: invoiceDocument({ lines: [{ description: 'Exported goods', quantity: 10, unit_price: 1500, tax_rate_bps: 0 }] }) },
    { name: 'partially-paid', doc: invoiceDocument({ lines: THREE_LINES, paid: 50000 }) },
    { name: 'paid', doc: invoiceDocument({ lines: THREE_LINES, paid: 'full' }) },
    { name: 'overpaid', doc: invoiceDocument({ lines: THREE_LINES, paid: 'over' }) },
    {
      name: 'non-latin',
      doc: invoiceDocument({
        number: 'INV-000007',
        lines: Object.entries(NON_LATIN).map(([script, text], i) => ({ description: `${script}: ${text}`, quantity: i + 1, unit_price: 12345, tax_rate_bps: 2400 })),
        seller: { legal_name: NON_LATIN.greek, vat_id: 'EL094259216', address: { line1: 'Λεωφόρος Κηφισίας 44', line2: null, city: 'Αθήνα', postal_code: '151 25', region: 'Αττική', country: 'GR' } },
        client: { name: NON_LATIN.arabic, tax_id: null, address: { line1: NON_LATIN.hebrew, city: 'תל אביב', country: 'IL' } },
        notes: `${NON_LATIN.cyrillic}\n${NON_LATIN.emoji}\n${NON_LATIN.cjk}`,
      }),
    },
    {
      name: 'jpy',
      doc: invoiceDocument({
        currency: 'JPY',
        lines: [
          { description: 'Consulting (hours)', quantity: '1.5', unit_price: 333, tax_rate_bps: 1000 },
          { description: 'Books', quantity: 3, unit_price: 1155, tax_rate_bps: 800 },
          ...Array.from({ length: 40 }, (_, i) => ({ description: `Sticker ${i + 1}`, quantity: 1, unit_price: 5, tax_rate_bps: 1000 })),
        ],
        paid: 1000,
      }),
    },
    {
      // Amounts in whole 10 fils: EN 16931 writes at most 2 decimals (a third one is refused, eInvoiceGaps).
      name: 'bhd',
      doc: invoiceDocument({
        currency: 'BHD',
        lines: [
          { description: 'Service', quantity: 2, unit_price: 12500, tax_rate_bps: 1000 },
          { description: 'Parts', quantity: 3, unit_price: 1200, tax_rate_bps: 1000 },
          { description: 'Unit price with fils', quantity: 10, unit_price: 1234, tax_rate_bps: 0 },
        ],
        paid: 5000,
        seller: { address: { line1: 'Building 100, Road 200', line2: null, city: 'Manama', postal_code: '317', region: null, country: 'BH' }, vat_id: 'BH200000000000' },
      }),
    },
    { name: 'without-iban', doc: invoiceDocument({ lines: THREE_LINES, seller: { iban: null, bic: null } }) },
    { name: 'terms-without-due-date', doc: invoiceDocument({ lines: THREE_LINES, due_date: null }) },
    {
      // 60 lines of 0.05 at 19 %: 0.01 of tax each (0.60), 0.57 at the rate: 0.03 of rounding.
      name: 'per-line-rounding',
      doc: invoiceDocument({ lines: Array.from({ length: 60 }, (_, i) => ({ description: `Micro item ${i + 1}`, quantity: 1, unit_price: 5, tax_rate_bps: 1900 })) }),
    },
    {
      name: 'hostile-text',
      doc: invoiceDocument({
        lines: [
          { description: 'a\u0000b\u0007c <tag> & "quotes" \u2028 \uD800 lone', quantity: 1, unit_price: 100, tax_rate_bps: 1900 },
          { description: ']]> <![CDATA[ x ]]> \u202Ertl override\u202C \uFFFF end', quantity: 1, unit_price: 100, tax_rate_bps: 1900 },
        ],
        client: { name: 'Acme <Evil> & Co "Ltd"', email: null, tax_id: 'US 12-3456789' },
        notes: 'Line one\r\nLine two\u0001',
      }),
    },
  ];
  const random = seededRandom(20250301);
  const currencies = ['EUR', 'USD', 'GBP', 'CHF', 'SEK', 'JPY', 'PLN'];
  const rateSets = [[1900, 700], [2000, 550, 0], [2100], [0], [2500, 1200, 600]];
  for (let i = 0; i < randomCount; i++) {
    const rates = pick(random, rateSets);
    const lines = Array.from({ length: 1 + Math.floor(random() * 40) }, (_, j) => ({
      description: `Random item ${j + 1} ${pick(random, WORDS)}`,
      quantity: `${Math.floor(random() * 100)}.${Math.floor(random() * 1000)}`.replace(/^0\.0*$/, '1'),
      unit_price: Math.floor(random() * 1_000_000),
      tax_rate_bps: pick(random, rates),
    }));
    const paidKind = pick(random, ['none', 'partial', 'full', 'over'] as const);
    const withIban = random() < 0.6;
    entries.push({
      name: `random-${i + 1}`,
      doc: invoiceDocument({
        number: `R-${i + 1}`,
        currency: pick(random, currencies),
        lines,
        paid: paidKind === 'none' ? 0 : paidKind === 'partial' ? 1 + Math.floor(random() * 1000) : paidKind === 'full' ? 'full' : 'over',
        due_date: random() < 0.7 ? '2025-04-15' : null,
        seller: withIban ? {} : { iban: null, bic: null },
      }),
    });
  }
  return entries;
}

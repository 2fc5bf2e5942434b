import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { invoiceDocument, manyLines, NON_LATIN, THREE_LINES } from '../../testing/invoice-documents';
import { cleanText, findCjkFont, renderInvoicePdf } from './invoice-pdf';

/**
 * Text is read back with poppler's pdftotext and pages drawn with pdftoppm (Debian's poppler-utils,
 * installed by tools/setup.sh). Pictures of three invoices land in artifacts/invoice-pdf/ for a
 * person to look at.
 */
const POPPLER = spawnSync('pdftotext', ['-v']).error === undefined && spawnSync('pdftoppm', ['-v']).error === undefined;
const withPoppler = POPPLER ? it : it.skip;
if (!POPPLER) {
  console.warn('invoice-pdf.spec: pdftotext/pdftoppm not found (apt-get install poppler-utils): the text and picture checks are skipped');
}

const ARTIFACTS = join(__dirname, '..', '..', '..', '..', '..', 'artifacts', 'invoice-pdf');
/** Debian's fonts-noto-cjk (not installed by tools/setup.sh: 91 MB), when the machine has it. */
const CJK_FONT = findCjkFont();
if (!CJK_FONT) console.warn('invoice-pdf.spec: no CJK font (apt-get install fonts-noto-cjk): the CJK fallback check is skipped');

let scratch: string;
beforeAll(() => {
  scratch = mkdtempSync(join(tmpdir(), 'invoice-pdf-'));
});
afterAll(() => rmSync(scratch, { recursive: true, force: true }));

/** The text of each page (pdftotext -layout keeps a table row on one line). */
function pagesOf(pdf: Buffer): string[] {
  const file = join(scratch, `${Math.random().toString(36).slice(2)}.pdf`);
  writeFileSync(file, pdf);
  const out = spawnSync('pdftotext', ['-layout', '-enc', 'UTF-8', file, '-'], { encoding: 'utf8' });
  if (out.status !== 0) throw new Error(`pdftotext failed: ${out.stderr}`);
  return out.stdout.split('\f').slice(0, -1);
}

/** PNG pictures of the given pages, as artifacts/invoice-pdf/<name>-<page>.png. */
function picture(pdf: Buffer, name: string, pages: number[]): string[] {
  mkdirSync(ARTIFACTS, { recursive: true });
  const file = join(scratch, `${name}.pdf`);
  writeFileSync(file, pdf);
  return pages.map((page) => {
    const prefix = join(scratch, `${name}-${page}`);
    const out = spawnSync('pdftoppm', ['-png', '-r', '80', '-f', String(page), '-l', String(page), file, prefix], { encoding: 'utf8' });
    if (out.status !== 0) throw new Error(`pdftoppm failed: ${out.stderr}`);
    // pdftoppm pads the page number to the document's page count: find what it wrote.
    const made = readdirSync(scratch).find((f) => f.startsWith(`${name}-${page}-`) && f.endsWith('.png'));
    if (!made) throw new Error(`pdftoppm wrote no picture of page ${page}`);
    const target = join(ARTIFACTS, `${name}-page-${page}.png`);
    renameSync(join(scratch, made), target);
    return target;
  });
}

const squash = (text: string) => text.replace(/\s+/g, ' ');

describe(renderInvoicePdf.name, () => {
  const short = invoiceDocument({ lines: THREE_LINES, paid: 10000, notes: 'Thank you for your business.\nQuestions: billing@nordlicht.example' });
  const long = invoiceDocument({ number: 'INV-000500', lines: manyLines(500), notes: 'Five hundred lines.' });

  withPoppler('prints the number, seller, buyer, every line and the totals of a 3-line invoice', async () => {
    const pages = pagesOf(await renderInvoicePdf(short));
    expect(pages).toHaveLength(1);
    const text = squash(pages[0]);
    for (const expected of [
      'INVOICE', 'INV-000042', '2025-03-01', '2025-03-31', 'Nordlicht Software GmbH', 'Friedrichstraße 123', '10117 Berlin', 'VAT ID DE123456789',
      'Acme Analytics Ltd', '1 Canada Square', 'E14 5AB London', 'Tax ID GB123456789',
      'VAT 19 % of 1,549.99 294.50', 'VAT 7 % of 59.80 4.19', 'Subtotal 1,609.79', 'VAT 298.69', 'Total EUR 1,908.48', 'Amount paid 100.00', 'Amount due EUR 1,808.48',
      'IBAN DE89 3704 0044 0532 0130 00', 'BIC COBADEFFXXX', 'Reference INV-000042', 'Payable within 30 days',
      'Thank you for your business.', 'Page 1 of 1',
    ]) {
      expect(text).toContain(expected);
    }
    const rows = pages[0].split('\n').map(squash);
    expect(rows.some((r) => /1 Consulting, March \(senior engineer\) 12\.5 120\.00 19 % 1,500\.00/.test(r))).toBe(true);
    expect(rows.some((r) => /2 Hosting plan Pro 1 49\.99 19 % 49\.99/.test(r))).toBe(true);
    expect(rows.some((r) => /3 Technical book "Invoices in practice" 2 29\.90 7 ?% 59\.80/.test(r))).toBe(true);
  });

  withPoppler('spreads 500 lines over pages, the table header on each, with "Page N of M"', async () => {
    const pages = pagesOf(await renderInvoicePdf(long));
    expect(pages.length).toBeGreaterThan(8);
    expect(pages.length).toBeLessThan(30);
    pages.forEach((page, i) => expect(squash(page)).toContain(`Page ${i + 1} of ${pages.length}`));
    const first = long.invoice.lines[0];
    const last = long.invoice.lines[499];
    expect(squash(pages[0])).toContain(first.description);
    const lastPage = pages.findIndex((p) => squash(p).includes(last.description));
    expect(lastPage).toBeGreaterThan(0);
    // Every page with lines has the header; the last line comes after the 499 others.
    for (const page of pages.slice(0, lastPage + 1)) expect(squash(page)).toMatch(/# Description Qty Unit price VAT Amount \(EUR\)/);
    const all = squash(pages.join(' '));
    expect(all.indexOf(last.description)).toBeGreaterThan(all.indexOf(long.invoice.lines[498].description));
    expect(all).toContain(`Invoice INV-000500 (continued)`);
  });

  withPoppler('prints Greek, Cyrillic, Arabic, Hebrew and emoji; CJK becomes U+FFFD without a CJK font', async () => {
    const doc = invoiceDocument({
      lines: Object.values(NON_LATIN).map((description, i) => ({ description, quantity: 1, unit_price: 1000 * (i + 1), tax_rate_bps: 2000 })),
      seller: { legal_name: NON_LATIN.greek },
      client: { name: NON_LATIN.arabic, address: { line1: NON_LATIN.hebrew, city: 'Тель-Авив', country: 'IL' } },
      notes: `${NON_LATIN.cyrillic}\n${NON_LATIN.emoji}`,
    });
    const text = squash(pagesOf(await renderInvoicePdf(doc)).join(' '));
    expect(text).toContain(NON_LATIN.greek);
    expect(text).toContain(NON_LATIN.cyrillic);
    expect(text).toContain('Тель-Авив');
    // pdftotext gives right-to-left words back in reading order; each word is found whole.
    for (const word of [...NON_LATIN.arabic.split(' '), ...NON_LATIN.hebrew.split(' ')]) expect(text).toContain(word);
    expect(text).toContain('Café ☕ Team');
    expect(text).toContain('\uFFFD');
    expect(text).not.toContain('株式会社');
  });

  (CJK_FONT && POPPLER ? it : it.skip)('draws CJK with a fallback font when one is given (fonts-noto-cjk)', async () => {
    const doc = invoiceDocument({
      lines: [{ description: `${NON_LATIN.cjk} and ${NON_LATIN.greek}`, quantity: 1, unit_price: 100 }],
      client: { name: NON_LATIN.cjk },
      notes: '한국어 메모',
    });
    const pdf = await renderInvoicePdf(doc, { fallbackFont: CJK_FONT });
    const text = squash(pagesOf(pdf).join(' '));
    expect(text).toContain('株式会社テスト 北京市');
    expect(text).toContain('Ελληνικά');
    expect(text).toContain('한국어 메모');
    expect(text).not.toContain('\uFFFD');
    picture(pdf, 'cjk-fallback', [1]);
  });

  it('ignores a fallback font it cannot read (U+FFFD as without one)', async () => {
    const doc = invoiceDocument({ lines: [{ description: NON_LATIN.cjk, quantity: 1, unit_price: 100 }] });
    const pdf = await renderInvoicePdf(doc, { fallbackFont: { path: '/nonexistent/font.ttf' } });
    expect(pdf.equals(await renderInvoicePdf(doc))).toBe(true);
  });

  it('renders any string the API accepts without throwing: controls, lone surrogates, format characters, endless words', async () => {
    const hostile = [
      'a\u0000b\u0007c\u001b[31md\u007f\u0085e\u009f',
      '\uD800 lone \uDFFF surrogates',
      'zero\u200Bwidth\u200D\uFEFF joiners \u202Eevil\u202C \u2066isolate\u2069 soft\u00ADhyphen',
      'W'.repeat(1000),
      '﷽'.repeat(500),
      '\u0301\u0301\u0301 combining marks alone',
      'tabs\tand\u00a0nbsp\u2028line separator\u3000ideographic space',
      '\u{E0041}\u{E007F} tags \u{F0000} private use \u{10FFFF}',
      'مرحبا (עולם) 123 ١٢٣ mixed!',
    ];
    const doc = invoiceDocument({
      number: 'X-1',
      lines: [
        // The widest numbers the API holds, in their narrow columns.
        { description: hostile[0], quantity: '999999999.999', unit_price: 500, tax_rate_bps: 0 },
        ...hostile.map((description) => ({ description, quantity: 1, unit_price: 1, tax_rate_bps: 1 })),
      ],
      seller: { legal_name: hostile.join(' '), payment_terms: `${'terms '.repeat(300)}\n\n\n\n\nend` },
      client: { name: 'W'.repeat(200), email: `${'x'.repeat(240)}@example.com` },
      notes: `${'line\n'.repeat(2000)}${'word '.repeat(1000)}`,
    });
    const pdf = await renderInvoicePdf(doc);
    expect(pdf.subarray(0, 5).toString()).toBe('%PDF-');
    if (POPPLER) {
      const text = pagesOf(pdf).join('');
      // eslint-disable-next-line no-control-regex
      expect(text).not.toMatch(/[\u0000-\u0008\u000b\u000e-\u001f\u007f-\u009f\u200b\u202e]/);
    }
  });

  it('gives the same bytes for the same document', async () => {
    const [a, b] = await Promise.all([renderInvoicePdf(short), renderInvoicePdf(short)]);
    expect(a.equals(b)).toBe(true);
    const other = await renderInvoicePdf(short, { creationDate: new Date('2030-01-01T00:00:00Z') });
    expect(other.equals(a)).toBe(false);
  });

  withPoppler('writes pictures of three invoices to artifacts/invoice-pdf/ (short, 500 lines, non-Latin)', async () => {
    const nonLatin = invoiceDocument({
      number: 'INV-ΔΖ-7',
      lines: [
        ...Object.entries(NON_LATIN).map(([script, text], i) => ({ description: `${script}: ${text}`, quantity: i + 1, unit_price: 12345, tax_rate_bps: 1900 })),
        { description: 'Mixed: Invoice for שלום (Shalom) and مرحبا 2025, ref ١٢٣', quantity: 1, unit_price: 500, tax_rate_bps: 0 },
      ],
      seller: { legal_name: NON_LATIN.cyrillic, address: { line1: 'ул. Тверская, д. 1', line2: null, city: 'Москва', postal_code: '125009', region: null, country: 'RU' } },
      client: { name: NON_LATIN.arabic, address: { line1: NON_LATIN.hebrew, city: 'תל אביב', country: 'IL' } },
      notes: `${NON_LATIN.greek}\n${NON_LATIN.emoji}\n${NON_LATIN.cjk}`,
    });
    const longPages = pagesOf(await renderInvoicePdf(long)).length;
    const made = [
      ...picture(await renderInvoicePdf(short), 'short', [1]),
      ...picture(await renderInvoicePdf(long), 'long-500-lines', [1, longPages]),
      ...picture(await renderInvoicePdf(nonLatin), 'non-latin', [1]),
    ];
    for (const file of made) expect(existsSync(file)).toBe(true);
  });
});

describe(cleanText.name, () => {
  it('removes controls and format characters, keeps line breaks only where asked, and bounds the length', () => {
    expect(cleanText('a\u0000b\u200Bc\u202Ed\te', 100)).toBe('abcd e');
    expect(cleanText('one\r\ntwo\n\n\n\nthree', 100, true)).toBe('one\ntwo\n\nthree');
    expect(cleanText('one\ntwo', 100)).toBe('one two');
    expect(cleanText('\uD800x', 100)).toBe('\uFFFDx');
    expect(cleanText('e\u0301', 100)).toBe('é');
    expect(cleanText('😀'.repeat(10), 5)).toBe('😀😀😀😀…');
    expect(cleanText(null, 5)).toBe('');
  });
});

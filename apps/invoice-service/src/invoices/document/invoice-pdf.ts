import { existsSync, readFileSync } from 'node:fs';
import bidiFactory from 'bidi-js';
import PDFDocument from 'pdfkit';
import { addressLines, decimalOf, type InvoiceDocument, minorUnitsOf, percentOf, taxBreakdown } from './invoice-document';

/**
 * The invoice as a PDF (A4, pdfkit): seller and buyer, number and dates, the lines over as many
 * pages as they need (the table's header on each), the tax per rate, totals, amount paid and due,
 * payment details and notes, and "Page N of M" on every page.
 *
 * Every string the API accepts renders; none throws (apps/invoice-service/README.md, "Characters"):
 * - text is put in NFC; control characters, format characters and other default-ignorable code
 *   points (zero-width joiners, bidi controls, variation selectors, soft hyphens) are removed, tabs
 *   and other spaces become U+0020, line breaks are kept only where a field may have several lines
 *   (notes, payment terms); lone surrogates become U+FFFD;
 * - a character DejaVu Sans has no glyph for becomes U+FFFD (�), unless `fallbackFont` has one:
 *   DejaVu covers Latin, Greek, Cyrillic, Armenian, Georgian, Hebrew, Arabic and many symbols and
 *   some emoji; CJK, Thai, Devanagari and most emoji come out as U+FFFD without a fallback font;
 * - right-to-left text (Arabic, Hebrew) is put in visual order with the Unicode Bidirectional
 *   Algorithm (bidi-js, each printed line on its own) and shaped by fontkit;
 * - each field is cut at a bound ({@link FIELD_LIMITS}) with "…", and long words are broken.
 *
 * The same document gives the same bytes: the creation date is fixed (the issue date unless
 * `creationDate` is given) and the file ID derives from it.
 */
export interface InvoicePdfOptions {
  /** The PDF's CreationDate (and so its file ID). Default: the issue date, 00:00 UTC. */
  creationDate?: Date;
  /**
   * A font for the characters DejaVu Sans lacks, e.g. Debian's fonts-noto-cjk ({@link findCjkFont}):
   * `{ path: '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc', family: 'NotoSansCJKjp-Regular' }`
   * (`family` names the face of a collection). Used for regular and bold text alike; a path that
   * cannot be read is ignored (U+FFFD as without it).
   */
  fallbackFont?: { path: string; family?: string };
}

/**
 * Where Debian's fonts-noto-cjk puts its CJK collection, and the face used from it (Japanese
 * glyph forms; the collection covers Chinese and Korean too).
 */
export const CJK_FONT_CANDIDATES: ReadonlyArray<{ path: string; family: string }> = [
  { path: '/usr/share/fonts/opentype/noto/NotoSansCJK-Regular.ttc', family: 'NotoSansCJKjp-Regular' },
];

/**
 * A CJK font installed on this machine, for `fallbackFont`, or undefined. Not looked up by
 * {@link renderInvoicePdf} itself: whoever renders decides once (at start) whether PDFs may depend
 * on a font of the host, so that the same document gives the same bytes on every instance.
 */
export function findCjkFont(): InvoicePdfOptions['fallbackFont'] {
  return CJK_FONT_CANDIDATES.find((candidate) => existsSync(candidate.path));
}

/** The most characters printed of each field; longer text ends in "…". */
export const FIELD_LIMITS = {
  number: 64,
  name: 200,
  addressLine: 200,
  email: 254,
  identifier: 64,
  description: 1000,
  paymentTerms: 1000,
  notes: 5000,
} as const;

const FONT_FILES = {
  regular: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans.ttf'),
  bold: require.resolve('dejavu-fonts-ttf/ttf/DejaVuSans-Bold.ttf'),
} as const;
type FontKind = keyof typeof FONT_FILES;

const A4 = { width: 595.28, height: 841.89 };
const MARGIN = 48;
const LEFT = MARGIN;
const RIGHT = A4.width - MARGIN;
const CONTENT_WIDTH = RIGHT - LEFT;
/** Content stops here; the footer is below. */
const BOTTOM = A4.height - 64;
const FOOTER_Y = A4.height - 40;

const SIZE = { body: 9, table: 8.5, small: 7.5, heading: 10.5, title: 20 } as const;
const GREY = '#5b6470';
const RULE = '#d6dae0';
const HEADER_FILL = '#eef1f4';

/** Renders the document to PDF bytes. */
export async function renderInvoicePdf(document: InvoiceDocument, options: InvoicePdfOptions = {}): Promise<Buffer> {
  const creationDate = options.creationDate ?? new Date(`${document.invoice.issue_date}T00:00:00Z`);
  const number = cleanText(document.invoice.number, FIELD_LIMITS.number);
  const doc = new PDFDocument({
    size: 'A4',
    margin: 0,
    bufferPages: true,
    autoFirstPage: false,
    info: {
      Title: `Invoice ${number}`,
      Creator: 'invoicing invoice-service',
      Producer: 'PDFKit',
      CreationDate: Number.isNaN(creationDate.getTime()) ? new Date(0) : creationDate,
    },
  });
  const chunks: Buffer[] = [];
  doc.on('data', (chunk: Buffer) => chunks.push(chunk));
  const ended = new Promise<void>((resolve, reject) => {
    doc.on('end', resolve);
    doc.on('error', reject);
  });
  const painter = new Painter(doc, options.fallbackFont);
  new InvoiceLayout(painter, document, number).render();
  doc.end();
  await ended;
  return Buffer.concat(chunks);
}

// ---------------------------------------------------------------------------------------------
// Text: cleaning, glyph coverage, bidi and drawing
// ---------------------------------------------------------------------------------------------

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;
// eslint-disable-next-line no-control-regex -- vertical tab and form feed are line breaks here
const LINE_BREAKS = /\r\n|[\r\n\u000B\u000C\u0085\u2028\u2029]/g;
const INVISIBLE = /[\p{Cc}\p{Cf}\p{Default_Ignorable_Code_Point}]/gu;
const SPACES = /[\t\p{Zs}]/gu;

/**
 * A field as printed: NFC, no controls or format characters, other spaces made U+0020, line breaks
 * kept only when `multiline` (at most one empty line in a row), trimmed, at most `max` code points.
 */
export function cleanText(value: string | null | undefined, max: number, multiline = false): string {
  let text = (value ?? '').replace(LONE_SURROGATE, '\uFFFD').normalize('NFC').replace(LINE_BREAKS, multiline ? '\n' : ' ');
  text = text.replace(SPACES, ' ').replace(INVISIBLE, (c) => (c === '\n' ? c : ''));
  text = multiline
    ? text
        .split('\n')
        .map((l) => l.trimEnd())
        .join('\n')
        .replace(/\n{3,}/g, '\n\n')
        .trim()
    : text.trim();
  const chars = Array.from(text);
  return chars.length > max ? `${chars.slice(0, max - 1).join('').trimEnd()}…` : text;
}

/** What pdfkit's embedded font exposes of fontkit's font. */
interface FontkitFont {
  ascent: number;
  unitsPerEm: number;
  hasGlyphForCodePoint(codePoint: number): boolean;
  layout(text: string): { direction?: string };
}

const bidi = bidiFactory();
/** Scripts written right to left (Hebrew, Arabic, Syriac, Thaana, NKo, ... and their presentation forms). */
const RTL_SCRIPT = /[\u0590-\u08FF\uFB1D-\uFDFF\uFE70-\uFEFF\u{10800}-\u{10FFF}\u{1E800}-\u{1EFFF}]/u;
const SIMPLE = /^[\u0020-\u058F]*$/;

interface Piece {
  text: string;
  font: 'primary' | 'fallback';
  width: number;
}

/** Text on pdfkit with glyph fallback and bidi; coordinates are the top left of the line box. */
class Painter {
  private kind: FontKind = 'regular';
  private size: number = SIZE.body;
  private readonly fonts: Record<FontKind, FontkitFont> & { fallback: FontkitFont | null };
  private readonly coverage = new Map<string, boolean>();
  private readonly directions = new Map<string, boolean>();

  constructor(
    readonly doc: PDFKit.PDFDocument,
    fallback: InvoicePdfOptions['fallbackFont'],
  ) {
    doc.registerFont('regular', fontBytes('regular'));
    doc.registerFont('bold', fontBytes('bold'));
    // Loaded in this order, DejaVu's faces are F1 and F2 with or without a fallback.
    const regular = this.fontkitOf('regular');
    const bold = this.fontkitOf('bold');
    let fallbackFont: FontkitFont | null = null;
    if (fallback) {
      try {
        doc.registerFont('fallback', readFileSync(fallback.path), fallback.family);
        fallbackFont = this.fontkitOf('fallback');
      } catch {
        // A missing or unreadable fallback font only means U+FFFD for what DejaVu lacks.
        fallbackFont = null;
      }
    }
    this.fonts = { regular, bold, fallback: fallbackFont };
    this.use('regular', SIZE.body);
  }

  private fontkitOf(name: string): FontkitFont {
    this.doc.font(name);
    return (this.doc as unknown as { _font: { font: FontkitFont } })._font.font;
  }

  use(kind: FontKind, size: number): this {
    this.kind = kind;
    this.size = size;
    this.doc.font(kind).fontSize(size);
    return this;
  }

  get lineHeight(): number {
    return this.size * 1.3;
  }

  /** Each character the fonts cannot draw made U+FFFD. */
  displayable(text: string): string {
    let out = '';
    for (const char of text) out += this.fontFor(char) === null ? '\uFFFD' : char;
    return out;
  }

  private fontFor(char: string): 'primary' | 'fallback' | null {
    if (char === ' ' || char === '\n') return 'primary';
    const key = `${this.kind}:${char}`;
    let primary = this.coverage.get(key);
    if (primary === undefined) {
      primary = this.fonts[this.kind].hasGlyphForCodePoint(char.codePointAt(0) ?? 0);
      this.coverage.set(key, primary);
    }
    if (primary) return 'primary';
    const fallbackKey = `fallback:${char}`;
    let fallback = this.coverage.get(fallbackKey);
    if (fallback === undefined) {
      fallback = this.fonts.fallback?.hasGlyphForCodePoint(char.codePointAt(0) ?? 0) ?? false;
      this.coverage.set(fallbackKey, fallback);
    }
    return fallback ? 'fallback' : null;
  }

  width(text: string): number {
    return this.pieces(text, false).reduce((sum, p) => sum + p.width, 0);
  }

  /**
   * Splits `text` into lines no wider than `width` (at spaces, or inside a word that is wider on its
   * own), after {@link displayable}; `\n` starts a new line.
   */
  wrap(text: string, width: number): string[] {
    const lines: string[] = [];
    for (const paragraph of this.displayable(text).split('\n')) {
      let current = '';
      for (const word of paragraph.split(' ')) {
        const candidate = current === '' ? word : `${current} ${word}`;
        if (this.width(candidate) <= width) {
          current = candidate;
          continue;
        }
        if (current !== '') lines.push(current);
        current = '';
        // A word wider than the line on its own: broken between characters.
        for (const char of word) {
          if (current !== '' && this.width(current + char) > width) {
            lines.push(current);
            current = '';
          }
          current += char;
        }
      }
      lines.push(current);
    }
    return lines;
  }

  /** Draws one line (no wrapping) at (x, y), left- or right-aligned within `width` from x. */
  line(text: string, x: number, y: number, align: 'left' | 'right' = 'left', width = 0): number {
    const pieces = this.pieces(this.displayable(text), true);
    const total = pieces.reduce((sum, p) => sum + p.width, 0);
    let at = align === 'right' ? x + width - total : x;
    // One baseline for the pieces of every font: DejaVu's, where pdfkit puts it for a line at y.
    const primary = this.fonts[this.kind];
    const baseline = y + (this.size * primary.ascent) / primary.unitsPerEm;
    for (const piece of pieces) {
      if (piece.text.trim() !== '') {
        this.doc.font(piece.font === 'fallback' ? 'fallback' : this.kind).fontSize(this.size);
        this.doc.text(piece.text, at, baseline, { lineBreak: false, baseline: 'alphabetic' });
      }
      at += piece.width;
    }
    this.doc.font(this.kind).fontSize(this.size);
    return total;
  }

  /** The text cut (with "…") to fit `width` on one line. */
  ellipsize(text: string, width: number): string {
    if (this.width(text) <= width) return text;
    const chars = Array.from(text);
    while (chars.length > 0 && this.width(`${chars.join('')}…`) > width) chars.pop();
    return `${chars.join('').trimEnd()}…`;
  }

  /** Draws a line shrunk (down to 60 %) until it fits `width`: for numbers in narrow columns. */
  fitted(text: string, x: number, y: number, width: number, align: 'left' | 'right' = 'right'): void {
    const size = this.size;
    const natural = this.width(text);
    if (natural > width) this.use(this.kind, Math.max(size * 0.6, (size * width) / natural));
    this.line(text, x, y + (size - this.size) * 0.8, align, width);
    this.use(this.kind, size);
  }

  /**
   * The line in drawing order, cut where the font changes. With `visual`, right-to-left runs are
   * reordered (bidi-js levels, rule L2 of UAX 9) and their mirrored characters swapped; fontkit
   * itself reverses each word of a right-to-left script it lays out, so a word is reversed here
   * only when the two disagree (a run of neutrals inside right-to-left text, Arabic-Indic digits).
   */
  private pieces(text: string, visual: boolean): Piece[] {
    if (SIMPLE.test(text) || !visual) return this.byFont(text);
    const pieces: Piece[] = [];
    for (const run of visualRuns(text)) {
      const tokens = run.text.split(/( +)/).filter((t) => t !== '');
      if (run.rtl) tokens.reverse();
      for (const raw of tokens) {
        let token = run.rtl ? Array.from(raw, (c) => bidi.getMirroredCharacter(c) ?? c).join('') : raw;
        if (token.trim() !== '' && !SIMPLE.test(token) && run.rtl !== this.fontkitReverses(token)) {
          token = Array.from(token).reverse().join('');
        }
        pieces.push(...this.byFont(token));
      }
    }
    return pieces;
  }

  private fontkitReverses(token: string): boolean {
    if (!RTL_SCRIPT.test(token)) return false;
    const key = `${this.kind}:${token}`;
    let reverses = this.directions.get(key);
    if (reverses === undefined) {
      reverses = this.fonts[this.kind].layout(token).direction === 'rtl';
      this.directions.set(key, reverses);
    }
    return reverses;
  }

  private byFont(text: string): Piece[] {
    const pieces: Piece[] = [];
    let current = '';
    let font: Piece['font'] = 'primary';
    const flush = () => {
      if (current === '') return;
      this.doc.font(font === 'fallback' ? 'fallback' : this.kind).fontSize(this.size);
      pieces.push({ text: current, font, width: this.doc.widthOfString(current) });
      current = '';
    };
    for (const char of text) {
      const f = this.fontFor(char) ?? 'primary';
      if (f !== font) {
        flush();
        font = f;
      }
      current += char;
    }
    flush();
    this.doc.font(this.kind).fontSize(this.size);
    return pieces;
  }
}

/** The line's runs of one embedding level, in visual order (UAX 9 rule L2). */
function visualRuns(line: string): Array<{ text: string; rtl: boolean }> {
  const { levels } = bidi.getEmbeddingLevels(line);
  const runs: Array<{ start: number; end: number; level: number }> = [];
  for (let i = 0; i < line.length; i++) {
    const last = runs[runs.length - 1];
    if (last && last.level === levels[i]) last.end = i + 1;
    else runs.push({ start: i, end: i + 1, level: levels[i] });
  }
  const highest = Math.max(...runs.map((r) => r.level));
  const lowest = Math.min(...runs.map((r) => r.level));
  for (let level = highest; level >= (lowest % 2 === 1 ? lowest : lowest + 1); level--) {
    for (let i = 0; i < runs.length; ) {
      if (runs[i].level < level) {
        i++;
        continue;
      }
      let j = i;
      while (j < runs.length && runs[j].level >= level) j++;
      runs.splice(i, j - i, ...runs.slice(i, j).reverse());
      i = j;
    }
  }
  return runs.map((r) => ({ text: line.slice(r.start, r.end), rtl: r.level % 2 === 1 }));
}

const fontCache = new Map<FontKind, Buffer>();
function fontBytes(kind: FontKind): Buffer {
  let bytes = fontCache.get(kind);
  if (!bytes) {
    bytes = readFileSync(FONT_FILES[kind]);
    fontCache.set(kind, bytes);
  }
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// The pages
// ---------------------------------------------------------------------------------------------

/** Table columns: x offset from LEFT, width, alignment. */
const COLUMN_GAP = 6;
const COLUMNS = (() => {
  const fixed = { no: 22, quantity: 52, unitPrice: 72, rate: 38, amount: 82 };
  const description = CONTENT_WIDTH - Object.values(fixed).reduce((a, b) => a + b, 0) - 5 * COLUMN_GAP;
  const order: Array<[keyof typeof fixed | 'description', number, 'left' | 'right', string]> = [
    ['no', fixed.no, 'right', '#'],
    ['description', description, 'left', 'Description'],
    ['quantity', fixed.quantity, 'right', 'Qty'],
    ['unitPrice', fixed.unitPrice, 'right', 'Unit price'],
    ['rate', fixed.rate, 'right', 'VAT'],
    ['amount', fixed.amount, 'right', 'Amount'],
  ];
  let x = LEFT;
  return order.map(([key, width, align, label]) => {
    const column = { key, x, width, align, label };
    x += width + COLUMN_GAP;
    return column;
  });
})();
function column(key: (typeof COLUMNS)[number]['key']): (typeof COLUMNS)[number] {
  const found = COLUMNS.find((c) => c.key === key);
  if (!found) throw new Error(`no column ${key}`);
  return found;
}
const ROW_PADDING = 3;

class InvoiceLayout {
  private y = MARGIN;
  private readonly decimals: number;

  constructor(
    private readonly p: Painter,
    private readonly d: InvoiceDocument,
    private readonly number: string,
  ) {
    this.decimals = minorUnitsOf(d.invoice.currency);
  }

  render(): void {
    this.newPage(false);
    this.header();
    this.lines();
    this.totals();
    this.payment();
    this.notes();
    this.footers();
  }

  private money(amount: number): string {
    const [whole, fraction] = decimalOf(amount, this.decimals).split('.');
    const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    return fraction === undefined ? grouped : `${grouped}.${fraction}`;
  }

  private quantity(quantity: string): string {
    const [whole, fraction] = quantity.split('.');
    const grouped = whole.replace(/\B(?=(\d{3})+(?!\d))/g, ',');
    return fraction === undefined ? grouped : `${grouped}.${fraction}`;
  }

  private newPage(continued: boolean): void {
    this.p.doc.addPage({ size: 'A4', margin: 0 });
    this.y = MARGIN;
    if (continued) {
      this.p.use('regular', SIZE.small);
      this.p.doc.fillColor(GREY);
      this.p.line(`Invoice ${this.number} (continued)`, LEFT, this.y);
      this.p.doc.fillColor('black');
      this.y += 18;
    }
  }

  /** Room for `height` more points on this page, or a new page. */
  private ensure(height: number): void {
    if (this.y + height > BOTTOM) this.newPage(true);
  }

  /** Lines of text at (x, y) within width; returns the y below them. */
  private block(lines: Array<{ text: string; kind?: FontKind; size?: number; grey?: boolean; multiline?: boolean }>, x: number, y: number, width: number): number {
    for (const line of lines) {
      this.p.use(line.kind ?? 'regular', line.size ?? SIZE.body);
      this.p.doc.fillColor(line.grey ? GREY : 'black');
      for (const wrapped of this.p.wrap(line.text, width)) {
        this.p.line(wrapped, x, y);
        y += this.p.lineHeight;
      }
    }
    this.p.doc.fillColor('black');
    return y;
  }

  private header(): void {
    const { invoice, seller, buyer } = this.d;
    const halfWidth = CONTENT_WIDTH / 2 - 12;
    const metaX = LEFT + CONTENT_WIDTH / 2 + 12;

    // Seller, top left.
    const sellerLines = seller
      ? [
          { text: cleanText(seller.legal_name, FIELD_LIMITS.name), kind: 'bold' as const, size: SIZE.heading },
          ...addressLines(seller.address).map((l) => ({ text: cleanText(l, FIELD_LIMITS.addressLine) })),
          ...(seller.vat_id ? [{ text: `VAT ID ${cleanText(seller.vat_id, FIELD_LIMITS.identifier)}` }] : []),
          ...(seller.email ? [{ text: cleanText(seller.email, FIELD_LIMITS.email) }] : []),
        ]
      : [];
    const sellerBottom = this.block(sellerLines, LEFT, this.y, halfWidth);

    // Title and the invoice's facts, top right.
    this.p.use('bold', SIZE.title);
    this.p.line('INVOICE', metaX, this.y);
    let metaY = this.y + SIZE.title * 1.4;
    const facts: Array<[string, string]> = [
      ['Number', this.number],
      ['Issue date', invoice.issue_date],
      ...(invoice.due_date ? ([['Due date', invoice.due_date]] as Array<[string, string]>) : []),
      ['Currency', invoice.currency],
      ['Status', invoice.status.replace('_', ' ')],
    ];
    for (const [label, value] of facts) {
      this.p.use('regular', SIZE.body);
      this.p.doc.fillColor(GREY);
      this.p.line(label, metaX, metaY);
      this.p.doc.fillColor('black');
      this.p.use('bold', SIZE.body);
      const valueLines = this.p.wrap(value, RIGHT - metaX - 70);
      for (const v of valueLines) {
        this.p.line(v, metaX + 70, metaY);
        metaY += this.p.lineHeight;
      }
    }

    // Buyer, below.
    this.y = Math.max(sellerBottom, metaY) + 20;
    const buyerLines = [
      { text: 'Bill to', grey: true, size: SIZE.small },
      { text: cleanText(buyer.name, FIELD_LIMITS.name), kind: 'bold' as const, size: SIZE.heading },
      ...addressLines(buyer.address).map((l) => ({ text: cleanText(l, FIELD_LIMITS.addressLine) })),
      ...(buyer.vat_id ? [{ text: `Tax ID ${cleanText(buyer.vat_id, FIELD_LIMITS.identifier)}` }] : []),
      ...(buyer.email ? [{ text: cleanText(buyer.email, FIELD_LIMITS.email) }] : []),
    ];
    this.y = this.block(buyerLines, LEFT, this.y, halfWidth) + 20;
  }

  private tableHeader(): void {
    this.p.use('bold', SIZE.table);
    const height = this.p.lineHeight + 2 * ROW_PADDING;
    this.p.doc.rect(LEFT, this.y, CONTENT_WIDTH, height).fill(HEADER_FILL);
    this.p.doc.fillColor('black');
    for (const c of COLUMNS) {
      this.p.line(c.key === 'amount' ? `Amount (${this.d.invoice.currency})` : c.label, c.x, this.y + ROW_PADDING, c.align, c.width);
    }
    this.y += height;
  }

  private lines(): void {
    this.ensure(80);
    this.tableHeader();
    const description = column('description');
    this.d.invoice.lines.forEach((line, index) => {
      this.p.use('regular', SIZE.table);
      const lineHeight = this.p.lineHeight;
      let rows = this.p.wrap(cleanText(line.description, FIELD_LIMITS.description), description.width);
      let first = true;
      while (rows.length > 0) {
        const room = Math.floor((BOTTOM - this.y - 2 * ROW_PADDING) / lineHeight);
        const fitsFreshPage = rows.length * lineHeight + 2 * ROW_PADDING <= BOTTOM - MARGIN - 60;
        // A row moves whole to the next page when it fits there; one taller than a page is split.
        if (room < 1 || (first && rows.length > room && fitsFreshPage)) {
          this.newPage(true);
          this.tableHeader();
          this.p.use('regular', SIZE.table);
          continue;
        }
        const take = rows.slice(0, room);
        rows = rows.slice(room);
        const top = this.y + ROW_PADDING;
        if (first) {
          this.p.fitted(String(index + 1), column('no').x, top, column('no').width);
          this.p.fitted(this.quantity(line.quantity), column('quantity').x, top, column('quantity').width);
          this.p.fitted(this.money(line.unit_price), column('unitPrice').x, top, column('unitPrice').width);
          this.p.fitted(`${percentOf(line.tax_rate_bps)} %`, column('rate').x, top, column('rate').width);
          this.p.fitted(this.money(line.amount), column('amount').x, top, column('amount').width);
        }
        take.forEach((text, i) => this.p.line(text, description.x, top + i * lineHeight));
        this.y += take.length * lineHeight + 2 * ROW_PADDING;
        this.p.doc.moveTo(LEFT, this.y).lineTo(RIGHT, this.y).lineWidth(0.5).strokeColor(RULE).stroke();
        first = false;
      }
    });
    this.y += 14;
  }

  private totals(): void {
    const { invoice } = this.d;
    const groups = taxBreakdown(invoice.lines);
    const width = 300;
    const x = RIGHT - width;
    const labelWidth = 170;
    this.p.use('regular', SIZE.body);
    const lh = this.p.lineHeight + 2;
    const rows: Array<{ label: string; value: string; bold?: boolean; rule?: boolean }> = [
      ...groups.map((g) => ({ label: `VAT ${percentOf(g.tax_rate_bps)} % of ${this.money(g.taxable)}`, value: this.money(g.tax) })),
      { label: 'Subtotal', value: this.money(invoice.subtotal), rule: true },
      { label: 'VAT', value: this.money(invoice.tax_total) },
      { label: `Total ${invoice.currency}`, value: this.money(invoice.total), bold: true },
      { label: 'Amount paid', value: this.money(invoice.amount_paid) },
      { label: `Amount due ${invoice.currency}`, value: this.money(invoice.amount_due), bold: true },
    ];
    this.ensure(rows.length * lh + 24);
    this.p.use('bold', SIZE.body);
    this.p.line('VAT breakdown and totals', x, this.y);
    this.y += lh + 2;
    for (const row of rows) {
      if (row.rule) {
        this.p.doc.moveTo(x, this.y - 1).lineTo(RIGHT, this.y - 1).lineWidth(0.5).strokeColor(RULE).stroke();
        this.y += 3;
      }
      this.p.use(row.bold ? 'bold' : 'regular', SIZE.body);
      this.p.fitted(row.label, x, this.y, labelWidth, 'left');
      this.p.fitted(row.value, x + labelWidth, this.y, width - labelWidth);
      this.y += lh;
    }
    this.y += 14;
  }

  private payment(): void {
    const { invoice, seller } = this.d;
    const facts: Array<[string, string, boolean?]> = [];
    facts.push(['Amount due', `${this.money(invoice.amount_due)} ${invoice.currency}`]);
    if (invoice.due_date) facts.push(['Due date', invoice.due_date]);
    if (seller?.iban) facts.push(['IBAN', cleanText(seller.iban, FIELD_LIMITS.identifier).replace(/(.{4})(?=.)/g, '$1 ')]);
    if (seller?.bic) facts.push(['BIC', cleanText(seller.bic, FIELD_LIMITS.identifier)]);
    if (seller?.iban) facts.push(['Reference', this.number]);
    if (seller?.payment_terms) facts.push(['Terms', cleanText(seller.payment_terms, FIELD_LIMITS.paymentTerms, true), true]);
    this.p.use('regular', SIZE.body);
    const lh = this.p.lineHeight;
    this.ensure(lh * 4);
    this.p.use('bold', SIZE.heading);
    this.p.line('Payment', LEFT, this.y);
    this.y += this.p.lineHeight + 2;
    const labelWidth = 80;
    for (const [label, value] of facts) {
      this.p.use('regular', SIZE.body);
      const wrapped = this.p.wrap(value, CONTENT_WIDTH - labelWidth);
      wrapped.forEach((text, i) => {
        this.ensure(lh);
        if (i === 0) {
          this.p.doc.fillColor(GREY);
          this.p.line(label, LEFT, this.y);
          this.p.doc.fillColor('black');
        }
        this.p.line(text, LEFT + labelWidth, this.y);
        this.y += lh;
      });
    }
    this.y += 14;
  }

  private notes(): void {
    const notes = cleanText(this.d.invoice.notes, FIELD_LIMITS.notes, true);
    if (notes === '') return;
    this.p.use('regular', SIZE.body);
    const lh = this.p.lineHeight;
    this.ensure(lh * 3);
    this.p.use('bold', SIZE.heading);
    this.p.line('Notes', LEFT, this.y);
    this.y += this.p.lineHeight + 2;
    this.p.use('regular', SIZE.body);
    for (const text of this.p.wrap(notes, CONTENT_WIDTH)) {
      this.ensure(lh);
      this.p.line(text, LEFT, this.y);
      this.y += lh;
    }
  }

  private footers(): void {
    const { start, count } = this.p.doc.bufferedPageRange();
    const seller = this.d.seller ? cleanText(this.d.seller.legal_name, 80) : '';
    for (let i = 0; i < count; i++) {
      this.p.doc.switchToPage(start + i);
      this.p.use('regular', SIZE.small);
      this.p.doc.fillColor(GREY);
      const page = `Page ${i + 1} of ${count}`;
      const room = CONTENT_WIDTH - this.p.width(page) - 24;
      this.p.line(this.p.ellipsize(seller ? `${this.number} · ${seller}` : this.number, room), LEFT, FOOTER_Y);
      this.p.line(page, LEFT, FOOTER_Y, 'right', CONTENT_WIDTH);
      this.p.doc.fillColor('black');
    }
  }
}

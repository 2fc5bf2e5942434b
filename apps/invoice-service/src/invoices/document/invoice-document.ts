import { CURRENCY_MINOR_UNITS, type OrganizationProfile } from '@invoicing/contracts';
import { formatQuantity, lineTax, parseQuantity } from '@invoicing/resource-api';
import type { InvoiceEntity, InvoiceStatus } from '../invoice.entity';
import { invoiceView, type InvoiceView } from '../invoice.view';

/**
 * The invoice as a document: everything the PDF and the EN 16931 renderers print, in one plain,
 * serializable value. Money is integer minor units of `invoice.currency` (12500 = 125.00 EUR,
 * 12500 = 12.500 BHD, 12500 = 12,500 JPY), as the API answers it; quantities are exact decimal strings.
 */
export interface InvoiceDocument {
  invoice: DocumentInvoice;
  /** The organization as seller (Settings → Organization); null when it never set a profile. */
  seller: DocumentSeller | null;
  buyer: DocumentBuyer;
}

export interface DocumentInvoice {
  /** Empty only for an invoice not yet numbered (never a stored one). */
  number: string;
  issue_date: string;
  due_date: string | null;
  currency: string;
  status: InvoiceStatus;
  lines: DocumentLine[];
  subtotal: number;
  tax_total: number;
  total: number;
  amount_paid: number;
  /** max(total − amount_paid, 0), as the API answers it. */
  amount_due: number;
  notes: string | null;
}

export interface DocumentLine {
  description: string;
  /** Exact decimal, at most 3 decimals ("1.5"). */
  quantity: string;
  unit_price: number;
  tax_rate_bps: number;
  /** Net: round_half_up(quantity × unit_price). */
  amount: number;
  /** round_half_up(amount × tax_rate_bps / 10000). */
  tax: number;
}

/** A postal address with every key present; a field nobody gave is null (a seller's country may be missing). */
export interface DocumentAddress {
  line1: string | null;
  line2: string | null;
  city: string | null;
  postal_code: string | null;
  region: string | null;
  /** ISO 3166-1 alpha-2, upper case. */
  country: string | null;
}

export interface DocumentSeller {
  legal_name: string;
  address: DocumentAddress | null;
  vat_id: string | null;
  email: string | null;
  /** Upper case, no spaces. */
  iban: string | null;
  bic: string | null;
  payment_terms: string | null;
}

export interface DocumentBuyer {
  name: string;
  email: string | null;
  address: DocumentAddress | null;
  /** The client's tax_id, as given (it need not be a VAT number). */
  vat_id: string | null;
}

/** The seller's side as the organization profile holds it (Settings → Organization). */
export type SellerProfile = Pick<OrganizationProfile, 'legal_name' | 'address' | 'vat_id' | 'email' | 'iban' | 'bic' | 'payment_terms'>;

/** A client as the client service answers it (only what a document prints is read). */
export interface ClientLike {
  name: string;
  email?: string | null;
  tax_id?: string | null;
  address?: AddressLike | null;
}

/** Any address-shaped object: the API's (every key, nulls), a request's (optional keys) or a partial one. */
export type AddressLike = { [K in keyof DocumentAddress]?: string | null };

/**
 * The document of a stored invoice (entity or its public view), its organization's seller profile
 * (null or all-null when none was set) and its client.
 */
export function buildInvoiceDocument(invoice: InvoiceEntity | InvoiceView, seller: SellerProfile | null, client: ClientLike): InvoiceDocument {
  const view = 'lineItems' in invoice ? invoiceView(invoice) : invoice;
  return {
    invoice: {
      number: view.number ?? '',
      issue_date: view.issue_date,
      due_date: view.due_date,
      currency: view.currency,
      status: view.status,
      lines: view.line_items.map((l) => ({
        description: l.description,
        quantity: formatQuantityString(l.quantity),
        unit_price: l.unit_price,
        tax_rate_bps: l.tax_rate_bps,
        amount: l.amount,
        tax: l.tax,
      })),
      subtotal: view.subtotal,
      tax_total: view.tax_total,
      total: view.total,
      amount_paid: view.amount_paid,
      amount_due: view.amount_due,
      notes: blankToNull(view.notes),
    },
    seller: sellerOf(seller),
    buyer: {
      name: client.name,
      email: blankToNull(client.email),
      address: postalAddressOf(client.address),
      vat_id: blankToNull(client.tax_id),
    },
  };
}

function sellerOf(profile: SellerProfile | null): DocumentSeller | null {
  if (!profile) return null;
  const seller: DocumentSeller = {
    legal_name: blankToNull(profile.legal_name) ?? '',
    address: postalAddressOf(profile.address),
    vat_id: compact(profile.vat_id),
    email: blankToNull(profile.email),
    iban: compact(profile.iban),
    bic: compact(profile.bic),
    payment_terms: blankToNull(profile.payment_terms),
  };
  // A profile never set (every field null) is no seller at all.
  const empty = !seller.legal_name && Object.entries(seller).every(([key, value]) => key === 'legal_name' || value === null);
  return empty ? null : seller;
}

/**
 * An address with every key present (blank fields null, the country upper-cased), or null when
 * there is none or it holds nothing.
 */
export function postalAddressOf(address: AddressLike | null | undefined): DocumentAddress | null {
  if (!address) return null;
  const result: DocumentAddress = {
    line1: blankToNull(address.line1),
    line2: blankToNull(address.line2),
    city: blankToNull(address.city),
    postal_code: blankToNull(address.postal_code),
    region: blankToNull(address.region),
    country: blankToNull(address.country)?.toUpperCase() ?? null,
  };
  return Object.values(result).some((v) => v !== null) ? result : null;
}

/** The lines of an address as printed: street lines, "postal code city", region, country code. */
export function addressLines(address: DocumentAddress | null): string[] {
  if (!address) return [];
  const cityLine = [address.postal_code, address.city].filter(Boolean).join(' ');
  return [address.line1, address.line2, cityLine, address.region, address.country].filter((l): l is string => !!l);
}

/** One VAT rate of an invoice: what is taxed at it and the tax. */
export interface TaxRateGroup {
  tax_rate_bps: number;
  /** Σ of the lines' net amounts at this rate. */
  taxable: number;
  /** Σ of the lines' taxes at this rate (each rounded per line, as the invoice's tax_total). */
  tax: number;
  /** round_half_up(taxable × rate): the tax of the rate computed once, as EN 16931 (BR-CO-17) reckons it. */
  tax_at_rate: number;
}

/** The VAT breakdown of lines, per rate (highest first), in exact integer arithmetic. */
export function taxBreakdown(lines: ReadonlyArray<Pick<DocumentLine, 'tax_rate_bps' | 'amount' | 'tax'>>): TaxRateGroup[] {
  const groups = new Map<number, { taxable: bigint; tax: bigint }>();
  for (const line of lines) {
    const group = groups.get(line.tax_rate_bps) ?? { taxable: 0n, tax: 0n };
    group.taxable += BigInt(line.amount);
    group.tax += BigInt(line.tax);
    groups.set(line.tax_rate_bps, group);
  }
  return [...groups.entries()]
    .sort(([a], [b]) => b - a)
    .map(([rate, { taxable, tax }]) => ({
      tax_rate_bps: rate,
      taxable: Number(taxable),
      tax: Number(tax),
      tax_at_rate: Number(lineTax(taxable, BigInt(rate))),
    }));
}

/** How many decimals a currency's minor unit has (ISO 4217): EUR 2, JPY 0, BHD 3; 2 when unknown. */
export function minorUnitsOf(currency: string): number {
  return Object.hasOwn(CURRENCY_MINOR_UNITS, currency) ? CURRENCY_MINOR_UNITS[currency] : 2;
}

/** Minor units as an exact decimal string with the currency's decimals: (12345, 2) → "123.45", (-5, 2) → "-0.05". */
export function decimalOf(amount: number | bigint, decimals: number): string {
  const value = BigInt(amount);
  const sign = value < 0n ? '-' : '';
  const digits = (value < 0n ? -value : value).toString().padStart(decimals + 1, '0');
  if (decimals === 0) return sign + digits;
  return `${sign}${digits.slice(0, -decimals)}.${digits.slice(-decimals)}`;
}

/** A tax rate in basis points as a percentage without trailing zeros: 2000 → "20", 1950 → "19.5", 725 → "7.25". */
export function percentOf(bps: number): string {
  return decimalOf(bps, 2).replace(/\.?0+$/, '');
}

/** The view's quantity (a JSON number, at most 3 decimals) as an exact decimal string. */
function formatQuantityString(quantity: number): string {
  const thousandths = parseQuantity(quantity);
  return thousandths === null ? String(quantity) : formatQuantity(thousandths);
}

function blankToNull(value: string | null | undefined): string | null {
  return value === null || value === undefined || value.trim() === '' ? null : value;
}

/** An identifier people type with spaces (IBAN, BIC, VAT id): without them, upper case. */
function compact(value: string | null | undefined): string | null {
  const v = blankToNull(value);
  return v === null ? null : v.replace(/\s+/g, '').toUpperCase();
}

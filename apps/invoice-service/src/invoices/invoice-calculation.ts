import { formatQuantity, lineAmount, lineTax, parseQuantity, toSafeNumber } from '@invoicing/resource-api';
import { FieldErrors } from '@invoicing/service-kit';
import { CreateInvoiceLine, MONEY_MAX } from '@invoicing/contracts';
import type { StoredLineItem } from './invoice.entity';

export interface InvoiceTotals {
  lines: StoredLineItem[];
  subtotal: number;
  taxTotal: number;
  total: number;
}

/** Product data that fills in a line's missing description, price and tax rate. */
export interface ProductDefaults {
  description: string;
  unit_price: number;
  tax_rate_bps: number;
}

/**
 * Computes every line and the totals with integer arithmetic:
 * amount = round_half_up(quantity x unit_price), tax = round_half_up(amount x tax_rate_bps / 10000),
 * subtotal and tax_total are sums, total = subtotal + tax_total. Collects field errors.
 */
export function calculateInvoice(
  lines: CreateInvoiceLine[],
  errors: FieldErrors,
  products: ReadonlyMap<string, ProductDefaults> = new Map(),
): InvoiceTotals {
  const stored: StoredLineItem[] = [];
  let subtotal = 0n;
  let taxTotal = 0n;
  lines.forEach((line, i) => {
    const field = `line_items[${i}]`;
    const product = line.product_id ? products.get(line.product_id) : undefined;
    // A product that could not be used has its own error already; do not pile on more for the line.
    if (line.product_id && !product) return;
    const quantity = parseQuantity(line.quantity);
    if (quantity === null || quantity <= 0n) {
      errors.add(`${field}.quantity`, 'invalid_quantity', 'must be greater than 0 with at most 3 decimal places');
    }
    const description = line.description ?? product?.description;
    const unitPrice = line.unit_price ?? product?.unit_price;
    const taxRate = line.tax_rate_bps ?? product?.tax_rate_bps ?? 0;
    if (description === undefined) errors.add(`${field}.description`, 'required', 'is required without a product_id');
    if (unitPrice === undefined) errors.add(`${field}.unit_price`, 'required', 'is required without a product_id');
    if (quantity === null || quantity <= 0n || description === undefined || unitPrice === undefined) return;
    const amount = lineAmount(quantity, BigInt(unitPrice));
    const tax = lineTax(amount, BigInt(taxRate));
    subtotal += amount;
    taxTotal += tax;
    stored.push({
      description,
      quantity_milli: quantity.toString(),
      unit_price: unitPrice,
      tax_rate_bps: taxRate,
      product_id: line.product_id ?? null,
      amount: Number(amount),
      tax: Number(tax),
    });
  });
  const total = subtotal + taxTotal;
  if (total > BigInt(MONEY_MAX)) {
    errors.add('line_items', 'out_of_range', `the invoice total must not exceed ${MONEY_MAX} minor units`);
    return { lines: stored, subtotal: 0, taxTotal: 0, total: 0 };
  }
  return { lines: stored, subtotal: toSafeNumber(subtotal), taxTotal: toSafeNumber(taxTotal), total: toSafeNumber(total) };
}

export function quantityForDisplay(line: StoredLineItem): number {
  return Number(formatQuantity(BigInt(line.quantity_milli)));
}

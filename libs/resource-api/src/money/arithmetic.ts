/**
 * Exact money arithmetic (docs/api.md section 7). Amounts are integer minor units; quantities have at
 * most three decimals and are carried as integer thousandths; no floating point touches money.
 */

export const QUANTITY_SCALE = 1000n;

/** round_half_up(n / d) for n >= 0, d > 0. */
export function divRoundHalfUp(n: bigint, d: bigint): bigint {
  return (2n * n + d) / (2n * d);
}

/** Parses a quantity (number or decimal string) into thousandths; null when it has > 3 decimals. */
export function parseQuantity(value: number | string): bigint | null {
  const text = typeof value === 'number' ? numberToPlain(value) : value;
  if (text === null) return null;
  const match = /^(\d{1,9})(?:\.(\d{1,3}))?$/.exec(text);
  if (!match) return null;
  return BigInt(match[1]) * QUANTITY_SCALE + BigInt((match[2] ?? '').padEnd(3, '0'));
}

function numberToPlain(n: number): string | null {
  if (!Number.isFinite(n) || n < 0) return null;
  const text = String(n);
  return /e/i.test(text) ? null : text;
}

/** Thousandths back to the shortest decimal string: 1500n → "1.5". */
export function formatQuantity(thousandths: bigint): string {
  const whole = thousandths / QUANTITY_SCALE;
  const frac = (thousandths % QUANTITY_SCALE).toString().padStart(3, '0').replace(/0+$/, '');
  return frac ? `${whole}.${frac}` : `${whole}`;
}

/** amount = round_half_up(quantity x unit_price) */
export function lineAmount(quantityThousandths: bigint, unitPrice: bigint): bigint {
  return divRoundHalfUp(quantityThousandths * unitPrice, QUANTITY_SCALE);
}

/** tax = round_half_up(amount x tax_rate_bps / 10000) */
export function lineTax(amount: bigint, taxRateBps: bigint): bigint {
  return divRoundHalfUp(amount * taxRateBps, 10000n);
}

/** A bigint that must fit a JSON number exactly. */
export function toSafeNumber(value: bigint): number {
  if (value > BigInt(Number.MAX_SAFE_INTEGER) || value < BigInt(Number.MIN_SAFE_INTEGER)) {
    throw new RangeError('amount exceeds the supported range');
  }
  return Number(value);
}

/** TypeORM column transformer for `bigint` money columns (pg returns them as strings). */
export const moneyColumn = {
  to: (value: number | null | undefined): string | null | undefined =>
    value === null || value === undefined ? value : String(value),
  from: (value: string | null): number | null => (value === null ? null : toSafeNumber(BigInt(value))),
};

/**
 * JSON Schema (draft 2020-12, also OpenAPI 3.1) building blocks of the public API. Services validate
 * requests with these schemas and the OpenAPI document is generated from them: one source.
 */
export const idOf = (prefix: string, description?: string) => ({
  type: 'string',
  pattern: `^${prefix}_[0-9a-f]{32}$`,
  ...(description ? { description } : {}),
});

export const nullable = <T extends Record<string, unknown>>(schema: T) => ({
  ...schema,
  type: [schema.type as string, 'null'],
});

/**
 * The largest amount of money the API holds, in minor units (10^12: 10 billion in a currency of two
 * decimals): every amount it accepts and every amount it computes or sums (a line, an invoice's
 * total, the payments of one invoice), so that each fits a JSON number exactly and no sum can leave
 * the range (docs/api.md section 2).
 */
export const MONEY_MAX = 1_000_000_000_000;

export const CURRENCY = {
  type: 'string',
  format: 'currency',
  description: 'ISO 4217 code, upper case (EUR): a currency in circulation, or one withdrawn since 2021.',
} as const;
export const MINOR_UNITS = { type: 'integer', minimum: 0, maximum: MONEY_MAX, description: 'Integer minor units (12500 = 125.00).' } as const;
export const POSITIVE_MINOR_UNITS = { type: 'integer', minimum: 1, maximum: MONEY_MAX, description: 'Integer minor units, > 0.' } as const;
/** Money the platform computed (totals, balances): within the same range. */
export const COMPUTED_MINOR_UNITS = { type: 'integer', minimum: 0, maximum: MONEY_MAX } as const;
export const TAX_RATE_BPS = { type: 'integer', minimum: 0, maximum: 10000, description: 'Basis points: 2000 = 20 %.' } as const;
export const DATE = { type: 'string', format: 'date', description: 'Calendar date, YYYY-MM-DD, from 1900-01-01 to 9999-12-31.' } as const;
export const TIMESTAMP = { type: 'string', format: 'date-time', description: 'RFC 3339, UTC, milliseconds.' } as const;
/** A date-time the caller sends: any offset, an instant from 1900-01-01 to 9999-12-31 (UTC). */
export const TIMESTAMP_INPUT = { type: 'string', format: 'date-time', description: 'RFC 3339 date-time, from 1900-01-01 to 9999-12-31.' } as const;

/** Fields every object carries (docs/api.md section 2). */
export function objectBase(object: string, prefix: string) {
  return {
    object: { const: object },
    id: idOf(prefix),
    created_at: TIMESTAMP,
  };
}

/** The list envelope (docs/api.md section 7). */
export function listOf(itemRef: string) {
  return {
    type: 'object',
    required: ['object', 'data', 'has_more'],
    properties: {
      object: { const: 'list' },
      data: {
        type: 'array',
        items: { $ref: itemRef },
        description:
          'Newest first, at most `limit` objects. A page may hold fewer than `limit` objects when they are large: it ends once it holds about 512 KiB (at least one object).',
      },
      has_more: {
        type: 'boolean',
        description:
          'Whether more objects follow: ask again with `starting_after` set to the id of the last object of `data`. Continue while has_more is true, not while a page is full.',
      },
    },
  };
}

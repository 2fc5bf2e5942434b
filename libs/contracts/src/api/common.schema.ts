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

export const CURRENCY = { type: 'string', format: 'currency', description: 'ISO 4217 code, upper case (EUR).' } as const;
export const MINOR_UNITS = { type: 'integer', minimum: 0, maximum: 1000000000000, description: 'Integer minor units (12500 = 125.00).' } as const;
export const POSITIVE_MINOR_UNITS = { type: 'integer', minimum: 1, maximum: 1000000000000, description: 'Integer minor units, > 0.' } as const;
export const TAX_RATE_BPS = { type: 'integer', minimum: 0, maximum: 10000, description: 'Basis points: 2000 = 20 %.' } as const;
export const DATE = { type: 'string', format: 'date', description: 'Calendar date, YYYY-MM-DD.' } as const;
export const TIMESTAMP = { type: 'string', format: 'date-time', description: 'RFC 3339, UTC, milliseconds.' } as const;

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

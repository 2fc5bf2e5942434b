/**
 * Building blocks of the list filters the manifest declares (RESOURCE_MANIFEST `filters`): each is a
 * query parameter's name and the JSON Schema of its value. The OpenAPI document lists them as the
 * list operation's parameters (`listFilterParameters`), the SDK types them from there, and every
 * resource service refuses to start unless it implements exactly these names.
 */

import { TIMESTAMP_INPUT } from './common.schema';

/** The value of a date-time bound (`created[gte]`): any offset, compared as an instant. */
export const DATE_TIME = {
  ...TIMESTAMP_INPUT,
  description:
    'RFC 3339 date-time with Z or an offset (2026-01-01T00:00:00Z, 2026-01-01T01:00:00+01:00: in a URL the + is written %2B), from 1900-01-01 to 9999-12-31.',
} as const;

/** The operators of a range filter, as the query writes them (`created[gte]=...`). */
export const RANGE_OPERATORS = ['gte', 'gt', 'lte', 'lt'] as const;
export type RangeOperator = (typeof RANGE_OPERATORS)[number];

const RANGE_WORDS: Record<RangeOperator, string> = {
  gte: 'at or after this value (inclusive)',
  gt: 'after this value (exclusive)',
  lte: 'at or before this value (inclusive)',
  lt: 'before this value (exclusive)',
};

type RangeOf<P extends string, S> = { [O in RangeOperator as `${P}[${O}]`]: S & { description: string } };

/**
 * The four bounds of a range over one field, one line in the manifest: `...range('created',
 * DATE_TIME, 'created_at')` declares `created[gte]`, `created[gt]`, `created[lte]` and
 * `created[lt]`, each with `value`'s schema (a date-time or a date). `field` is the object's field
 * the bound applies to (the parameter's name when omitted).
 */
export function range<P extends string, S extends { type: string; format: string; description?: string }>(param: P, value: S, field: string = param): RangeOf<P, S> {
  return Object.fromEntries(
    RANGE_OPERATORS.map((op) => [`${param}[${op}]`, { ...value, description: `Only objects whose ${field} is ${RANGE_WORDS[op]}.${value.description ? ` ${value.description}` : ''}` }]),
  ) as RangeOf<P, S>;
}

/**
 * One or more of `values`, comma-separated in the query (`status=open,paid`; OpenAPI `style: form`,
 * `explode: false`): objects with any of them. At most as many entries as there are values.
 */
export function someOf<T extends string>(values: readonly T[], field: string) {
  return {
    type: 'array',
    items: { enum: values },
    minItems: 1,
    maxItems: values.length,
    description: `Only objects whose ${field} is one of these, comma-separated (${field}=${values[0]},${values[values.length - 1]}): ${values.join(', ')}.`,
  } as const;
}

/** `true` or `false`, as the query writes them. */
export function flag(description: string) {
  return { type: 'boolean', description } as const;
}

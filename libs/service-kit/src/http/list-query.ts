import { IdPrefix, parsePublicId } from '@invoicing/contracts';
import { ProblemException } from './problem';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

export interface ListQuery<F extends string = never, V = string> {
  limit: number;
  /** uuid of the `starting_after` id, or null for the first page. */
  startingAfter: string | null;
  /** The filters given, each as its parser answered. */
  filters: Partial<Record<F, V>>;
}

/**
 * How a filter's value is read: a function answering the value it stands for, or null for a 400
 * naming the parameter; or that function with what a valid value looks like (`expected`, after
 * "must be"), which the 400 then says.
 */
export type FilterParser<V = string> = ((value: string) => V | null) | { parse(value: string): V | null; expected: string };

export interface Page<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

type Query = Record<string, unknown>;

function single(query: Query, name: string): string | undefined {
  const v = query[name];
  if (v === undefined) return undefined;
  if (typeof v !== 'string') throw new ProblemException(400, `The query parameter ${name} must be given once.`);
  return v;
}

/**
 * Parses `limit` (1..100, default 20), `starting_after=<id>` and the allowed filters. Anything else,
 * or a bad value, is a 400: a typo in a filter must not silently return everything. A filter's bad
 * value is named in the 400's `errors` (`field` the parameter, `code` `invalid_value`).
 */
export function parseListQuery<F extends string, V = string>(
  raw: unknown,
  idPrefix: IdPrefix,
  filters: Record<F, FilterParser<V>> = {} as Record<F, FilterParser<V>>,
): ListQuery<F, V> {
  const query = (raw ?? {}) as Query;
  const known = new Set(['limit', 'starting_after', ...Object.keys(filters)]);
  for (const name of Object.keys(query)) {
    if (!known.has(name)) throw new ProblemException(400, `Unknown query parameter ${name}.`);
  }
  const limitText = single(query, 'limit');
  let limit = DEFAULT_LIMIT;
  if (limitText !== undefined) {
    if (!/^\d{1,3}$/.test(limitText) || Number(limitText) < 1 || Number(limitText) > MAX_LIMIT) {
      throw new ProblemException(400, `limit must be an integer from 1 to ${MAX_LIMIT}.`);
    }
    limit = Number(limitText);
  }
  const afterText = single(query, 'starting_after');
  let startingAfter: string | null = null;
  if (afterText !== undefined) {
    startingAfter = parsePublicId(idPrefix, afterText);
    if (!startingAfter) throw new ProblemException(400, `starting_after must be an id of the form ${idPrefix}_...`);
  }
  const parsed: Partial<Record<F, V>> = {};
  for (const [name, parser] of Object.entries(filters) as Array<[F, FilterParser<V>]>) {
    const text = single(query, name);
    if (text === undefined) continue;
    const value = typeof parser === 'function' ? parser(text) : parser.parse(text);
    if (value === null) {
      const expected = typeof parser === 'function' ? 'a valid value' : parser.expected;
      throw new ProblemException(400, `The query parameter ${name} must be ${expected}.`, [{ field: name, code: 'invalid_value', message: `must be ${expected}` }]);
    }
    parsed[name] = value;
  }
  return { limit, startingAfter, filters: parsed };
}

/** Turns `limit + 1` fetched rows into a page. */
export function toPage<R, T>(rows: R[], limit: number, map: (row: R) => T): Page<T> {
  return { object: 'list', data: rows.slice(0, limit).map(map), has_more: rows.length > limit };
}

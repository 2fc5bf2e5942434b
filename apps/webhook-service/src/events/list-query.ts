import { IdPrefix, parsePublicId } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';

export const DEFAULT_LIMIT = 20;
export const MAX_LIMIT = 100;

type Parse = (value: string) => string | null;

/**
 * `limit` (1..100, default 20), `starting_after=<id>` and the filters given; anything else or a bad
 * value is a 400 (a typo in a filter must not return everything), as every list of the API
 * (docs/api.md section 7).
 */
export function parseCursorQuery<F extends string>(raw: unknown, prefix: IdPrefix, filters: Record<F, Parse>) {
  const query = (raw ?? {}) as Record<string, unknown>;
  const known = new Set(['limit', 'starting_after', ...Object.keys(filters)]);
  for (const name of Object.keys(query)) if (!known.has(name)) throw new ProblemException(400, `Unknown query parameter ${name}.`);
  const single = (name: string): string | undefined => {
    const v = query[name];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw new ProblemException(400, `The query parameter ${name} must be given once.`);
    return v;
  };
  const limitText = single('limit');
  if (limitText !== undefined && !(/^\d{1,3}$/.test(limitText) && Number(limitText) >= 1 && Number(limitText) <= MAX_LIMIT)) {
    throw new ProblemException(400, `limit must be an integer from 1 to ${MAX_LIMIT}.`);
  }
  const afterText = single('starting_after');
  const startingAfter = afterText === undefined ? null : parsePublicId(prefix, afterText);
  if (afterText !== undefined && !startingAfter) throw new ProblemException(400, `starting_after must be an id of the form ${prefix}_...`);
  const parsed: Partial<Record<F, string>> = {};
  for (const [name, parse] of Object.entries(filters) as Array<[F, Parse]>) {
    const text = single(name);
    if (text === undefined) continue;
    const value = parse(text);
    if (value === null) throw new ProblemException(400, `The ${name} filter has an invalid value.`);
    parsed[name] = value;
  }
  return { limit: limitText === undefined ? DEFAULT_LIMIT : Number(limitText), startingAfter, filters: parsed };
}

export function toPage<R, T>(rows: R[], limit: number, map: (row: R) => T) {
  return { object: 'list' as const, data: rows.slice(0, limit).map(map), has_more: rows.length > limit };
}

/** An RFC 3339 date-time from 1900 to 9999, as an ISO string; null otherwise. */
export function parseInstant(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(value)) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return null;
  const year = new Date(ms).getUTCFullYear();
  return year >= 1900 && year <= 9999 ? new Date(ms).toISOString() : null;
}

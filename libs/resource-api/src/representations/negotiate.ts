/**
 * Which of `offered` (in the server's order of preference, JSON first) an `Accept` header asks for,
 * by RFC 9110 section 12.5.1: media ranges with quality values, the most specific range that
 * matches a type giving its quality (`application/pdf;q=0` excludes PDF even beside `*\/*`), the
 * highest quality winning and the server's order breaking ties. No header, or an empty one: the
 * first offered. Null: the header allows none of them (406). Parameters other than q are ignored
 * (`application/xml; charset=utf-8` is application/xml); a header that cannot be parsed counts as
 * absent rather than as a refusal, as most servers do.
 */
export function negotiate(accept: string | undefined, offered: readonly string[]): string | null {
  if (accept === undefined || accept.trim() === '') return offered[0] ?? null;
  const ranges = parseAccept(accept);
  if (ranges === null) return offered[0] ?? null;
  let best: { type: string; q: number } | null = null;
  for (const type of offered) {
    const q = qualityOf(type, ranges);
    if (q > 0 && (best === null || q > best.q)) best = { type, q };
  }
  return best?.type ?? null;
}

interface MediaRange {
  type: string;
  subtype: string;
  q: number;
}

/** At most this many ranges are read: a header is bounded by the server's header size, the work by this. */
const MAX_RANGES = 64;
const TOKEN = /^[!#$%&'*+.^_`|~0-9a-z-]+$/;

function parseAccept(header: string): MediaRange[] | null {
  const ranges: MediaRange[] = [];
  for (const part of header.split(',').slice(0, MAX_RANGES)) {
    const [range, ...params] = part.split(';').map((s) => s.trim().toLowerCase());
    if (range === '') continue;
    const [type, subtype, extra] = range.split('/');
    if (extra !== undefined || !type || !subtype || !TOKEN.test(type) || !TOKEN.test(subtype) || (type === '*' && subtype !== '*')) return null;
    let q = 1;
    for (const param of params) {
      if (!/^q\s*=/.test(param)) continue;
      // RFC 9110 qvalue: 0 to 1 with at most three decimals; anything else makes the header unreadable.
      const m = /^q\s*=\s*(0(?:\.[0-9]{0,3})?|1(?:\.0{0,3})?)$/.exec(param);
      if (!m) return null;
      q = Number(m[1]);
    }
    ranges.push({ type, subtype, q });
  }
  // Only commas and spaces: no preference given.
  return ranges.length > 0 ? ranges : null;
}

/** The quality the most specific matching range gives `mediaType`; 0 when none matches. */
function qualityOf(mediaType: string, ranges: readonly MediaRange[]): number {
  const [type, subtype] = mediaType.split('/');
  let match: { specificity: number; q: number } | null = null;
  for (const r of ranges) {
    const specificity = r.type === type && r.subtype === subtype ? 2 : r.type === type && r.subtype === '*' ? 1 : r.type === '*' ? 0 : -1;
    if (specificity < 0) continue;
    if (match === null || specificity > match.specificity) match = { specificity, q: r.q };
  }
  return match?.q ?? 0;
}

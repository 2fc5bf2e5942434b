import { BlockList, isIP } from 'node:net';

/** Entries an API key's `allowed_ips` may hold (ADR 0023): each token carries the list. */
export const MAX_ALLOWED_IPS = 100;

export interface AllowedIpsError {
  /** Index of the entry at fault, or null for the list as a whole. */
  index: number | null;
  code: 'invalid_type' | 'too_many' | 'invalid_address' | 'duplicate';
  message: string;
}

export type AllowedIpsResult = { ok: true; value: string[] } | { ok: false; errors: AllowedIpsError[] };

/**
 * Checks an `allowed_ips` list and answers it in canonical form: IPv4 in dotted decimal, IPv6 in
 * RFC 5952 form (lower case, longest run of zeros compressed), a single address without a prefix
 * (`/32` and `/128` dropped), a block as `network/prefix`. A block with host bits set
 * (`10.0.0.1/8`) is refused rather than silently widened or narrowed: the writer meant one of two
 * different things. IPv4-mapped IPv6 entries and zone ids are refused; clients are matched by their
 * IPv4 address whichever way their socket reports it.
 */
export function parseAllowedIps(input: unknown): AllowedIpsResult {
  if (!Array.isArray(input)) return { ok: false, errors: [{ index: null, code: 'invalid_type', message: 'must be an array of IP addresses or CIDR blocks' }] };
  if (input.length > MAX_ALLOWED_IPS) {
    return { ok: false, errors: [{ index: null, code: 'too_many', message: `at most ${MAX_ALLOWED_IPS} entries (got ${input.length})` }] };
  }
  const errors: AllowedIpsError[] = [];
  const value: string[] = [];
  const seen = new Set<string>();
  input.forEach((entry, index) => {
    const parsed = typeof entry === 'string' ? canonicalEntry(entry.trim()) : { error: 'must be a string' };
    if ('error' in parsed) {
      errors.push({ index, code: 'invalid_address', message: `${describe(entry)} ${parsed.error}` });
    } else if (seen.has(parsed.canonical)) {
      errors.push({ index, code: 'duplicate', message: `${describe(entry)} is listed twice` });
    } else {
      seen.add(parsed.canonical);
      value.push(parsed.canonical);
    }
  });
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
}

function describe(entry: unknown): string {
  // Echo what the caller sent, bounded: a form shows it next to the field.
  return typeof entry === 'string' ? JSON.stringify(entry.length > 60 ? `${entry.slice(0, 60)}…` : entry) : 'the entry';
}

function canonicalEntry(text: string): { canonical: string } | { error: string } {
  const slash = text.indexOf('/');
  const address = slash < 0 ? text : text.slice(0, slash);
  const prefixText = slash < 0 ? null : text.slice(slash + 1);
  if (address.includes('%')) return { error: 'has a zone id; zone ids are local to one host' };
  const family = isIP(address);
  if (family === 0) return { error: 'is not an IPv4 or IPv6 address or CIDR block' };
  const bits = family === 4 ? 32 : 128;
  let prefix = bits;
  if (prefixText !== null) {
    if (!/^(0|[1-9][0-9]{0,2})$/.test(prefixText) || Number(prefixText) > bits) {
      return { error: `has an invalid prefix length (0 to ${bits})` };
    }
    prefix = Number(prefixText);
  }
  const bytes = family === 4 ? ipv4Bytes(address) : ipv6Bytes(address);
  if (family === 6 && isV4Mapped(bytes)) return { error: 'is an IPv4-mapped IPv6 address; write the IPv4 address' };
  // Clients reported as ::ffff:a.b.c.d are matched as IPv4 (see AddressAllowlist), so an IPv6 block
  // holding that range (::/0, ::/64...) would silently allow every IPv4 address.
  if (family === 6 && prefix <= 96 && masked(MAPPED_RANGE, prefix).every((b, i) => b === bytes[i])) {
    return { error: 'covers the IPv4-mapped range ::ffff:0:0/96, so it would allow every IPv4 address; list IPv6 blocks that leave it out and IPv4 blocks separately' };
  }
  if (!hostBitsClear(bytes, prefix)) return { error: `has bits set after the /${prefix} prefix (the network address is ${formatBytes(masked(bytes, prefix), family)}/${prefix})` };
  const canonicalAddress = formatBytes(bytes, family);
  return { canonical: prefix === bits ? canonicalAddress : `${canonicalAddress}/${prefix}` };
}

/** ::ffff:0:0, the start of the IPv4-mapped range. */
const MAPPED_RANGE = [0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xff, 0xff, 0, 0, 0, 0];

function ipv4Bytes(address: string): number[] {
  return address.split('.').map(Number);
}

/** 16 bytes of an address `isIP` accepted as IPv6 (possibly with an embedded IPv4 tail). */
function ipv6Bytes(address: string): number[] {
  let text = address.toLowerCase();
  const tail: number[] = [];
  const lastColon = text.lastIndexOf(':');
  if (text.slice(lastColon + 1).includes('.')) {
    tail.push(...ipv4Bytes(text.slice(lastColon + 1)));
    text = `${text.slice(0, lastColon + 1)}0:0`;
  }
  const [head, rest] = text.includes('::') ? text.split('::') : [text, null];
  const groupsOf = (part: string) => (part === '' ? [] : part.split(':').map((g) => parseInt(g, 16)));
  const left = groupsOf(head);
  const right = rest === null ? [] : groupsOf(rest);
  const groups = rest === null ? left : [...left, ...Array(8 - left.length - right.length).fill(0), ...right];
  const bytes = groups.flatMap((g) => [g >> 8, g & 0xff]);
  if (tail.length === 4) bytes.splice(12, 4, ...tail);
  return bytes;
}

function isV4Mapped(bytes: number[]): boolean {
  return bytes.slice(0, 10).every((b) => b === 0) && bytes[10] === 0xff && bytes[11] === 0xff;
}

function masked(bytes: number[], prefix: number): number[] {
  return bytes.map((b, i) => {
    const keep = Math.max(0, Math.min(8, prefix - i * 8));
    return b & ((0xff << (8 - keep)) & 0xff);
  });
}

function hostBitsClear(bytes: number[], prefix: number): boolean {
  return masked(bytes, prefix).every((b, i) => b === bytes[i]);
}

/** RFC 5952 for IPv6: the first longest run of two or more zero groups becomes `::`. */
function formatBytes(bytes: number[], family: number): string {
  if (family === 4) return bytes.join('.');
  const groups = Array.from({ length: 8 }, (_, i) => (bytes[2 * i] << 8) | bytes[2 * i + 1]);
  let bestStart = -1;
  let bestLength = 1;
  for (let i = 0; i < 8; ) {
    if (groups[i] !== 0) {
      i++;
      continue;
    }
    let j = i;
    while (j < 8 && groups[j] === 0) j++;
    if (j - i > bestLength) {
      bestStart = i;
      bestLength = j - i;
    }
    i = j;
  }
  const hex = groups.map((g) => g.toString(16));
  if (bestStart < 0) return hex.join(':');
  return `${hex.slice(0, bestStart).join(':')}::${hex.slice(bestStart + bestLength).join(':')}`;
}

/** Decisions remembered per list: a client calls from few addresses, so a check is one Map lookup. */
const DECISIONS_PER_LIST = 1024;
/** Lists built per process (one per distinct allowlist in use): rebuilt only when it overflows. */
const LISTS_KEPT = 10_000;
const byText = new Map<string, AddressAllowlist>();

/**
 * Whether a client address is inside an allowlist of canonical entries (what {@link parseAllowedIps}
 * answers, and what access tokens carry). Node's `BlockList` matches, IPv4 clients also when their
 * socket reports them IPv4-mapped (`::ffff:203.0.113.9`); each address's answer is remembered.
 */
export class AddressAllowlist {
  private readonly blocks = new BlockList();
  private readonly decisions = new Map<string, boolean>();

  private constructor(readonly entries: readonly string[]) {
    for (const entry of entries) {
      const [address, prefix] = entry.split('/');
      const family = isIP(address) === 4 ? 'ipv4' : 'ipv6';
      if (prefix === undefined) this.blocks.addAddress(address, family);
      else this.blocks.addSubnet(address, Number(prefix), family);
    }
  }

  /** One shared instance per distinct list (tokens of one key carry the same list). */
  static of(entries: readonly string[]): AddressAllowlist {
    const text = entries.join(',');
    let list = byText.get(text);
    if (!list) {
      if (byText.size >= LISTS_KEPT) byText.clear();
      list = new AddressAllowlist(entries);
      byText.set(text, list);
    }
    return list;
  }

  /** False for anything that is not an IP address (an absent or garbled client address is outside). */
  allows(address: string | undefined): boolean {
    if (!address) return false;
    const known = this.decisions.get(address);
    if (known !== undefined) return known;
    const family = isIP(address);
    const allowed = family !== 0 && this.blocks.check(address, family === 4 ? 'ipv4' : 'ipv6');
    if (this.decisions.size >= DECISIONS_PER_LIST) this.decisions.clear();
    this.decisions.set(address, allowed);
    return allowed;
  }
}

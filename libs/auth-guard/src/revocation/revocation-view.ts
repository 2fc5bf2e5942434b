import { ACCESS_TOKEN_TTL_SECONDS, AddressAllowlist, API_KEY_ALLOWED_IPS_CHANGED_V1, API_KEY_REVOKED_V1, AuthTopicEvent, parseAllowedIps, SESSIONS_REVOKED_V1 } from '@invoicing/contracts';

/** Kept past the token lifetime so that tokens stamped by a slightly fast clock are still covered. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;
/**
 * A key's watermark also covers tokens stamped this long after it: the auth service's instances
 * stamp `iat` and `revoked_at` with clocks of their own, and a token issued a moment before a
 * revocation by a clock running ahead must still fall under it.
 */
const WATERMARK_SKEW_SECONDS = 5;

export interface RevocationSubject {
  sub: string;
  sid: string;
  /** Issued at, in seconds (the token's `iat`): compared with a key's watermark. */
  iat: number;
}

/**
 * How much the view may hold (ADR 0017 addendum). Every entry is a revocation or allowlist change of
 * the last token lifetime; the bounds keep a burst of them (one key's thousands of sessions, or many
 * keys' at once) from growing an instance's memory without end. Past a bound the view fails closed,
 * never open: see {@link RevocationView}.
 */
export interface RevocationViewBounds {
  /** Revoked sessions held one by one, in all. */
  maxSessions: number;
  /** Revoked sessions held one by one for one API key; past it, the key's watermark covers them. */
  maxSessionsPerKey: number;
  /** API keys revoked, given a watermark or a changed allowlist; past it the view stops vouching. */
  maxKeys: number;
}

export const DEFAULT_REVOCATION_VIEW_BOUNDS: RevocationViewBounds = { maxSessions: 500_000, maxSessionsPerKey: 10_000, maxKeys: 200_000 };

/** A key's allowlist as changed after some of its tokens were issued. */
interface AllowlistChange {
  entries: readonly string[];
  /** Built on the first request of the key that needs it (most changed keys are never seen here). */
  allowlist?: AddressAllowlist | null;
  version: number;
  forgetAt: number;
}

/** Allows no address: what an allowlist this view cannot read stands for (fail closed, never throw). */
const NOWHERE = AddressAllowlist.of([]);

/**
 * In-memory answer to "is this access token revoked?": a set of revoked sessions and a set of
 * revoked API keys. An entry is forgotten once every token it could apply to has expired (revocation
 * time + access-token lifetime + skew), so memory tracks the last hour of revocations only.
 *
 * It also holds the allowlists changed within that hour (api_key_allowed_ips_changed.v1): a token
 * carries the list of its issue, and a key's newer list overrides it until every token issued
 * before the change has expired (ADR 0023).
 *
 * Bounded ({@link RevocationViewBounds}), failing closed at each bound:
 * - a key's revoked sessions past `maxSessionsPerKey`, or anyone's past `maxSessions`, are held as
 *   one watermark for the key instead: every token of that key issued up to the revocation (and
 *   {@link WATERMARK_SKEW_SECONDS} after) is refused. The sessions revoked are refused as before;
 *   the key's other sessions of that hour too, so their clients exchange the key again. Only the
 *   key that revoked that much pays for it.
 * - a changed allowlist that would take the keys held past `maxKeys` is a watermark too (the key's
 *   earlier tokens refused instead of checked against the new list);
 * - keys past `maxKeys` (a million revocations within the hour, or so) cannot be held at all: the
 *   view is {@link overflowed} and the instance stops vouching for any token (503, not ready) until
 *   entries expire. API-key revocations are one entry a key whatever their sessions: their list of
 *   sessions is not kept (the key's entry covers them).
 */
export class RevocationView {
  private readonly sessions = new Map<string, number>();
  /** How many sessions each key holds in `sessions`, and until when the last of them is kept. */
  private readonly sessionsPerKey = new Map<string, { count: number; forgetAt: number }>();
  private readonly apiKeys = new Map<string, number>();
  /** Keys whose tokens issued up to `before` (seconds) are refused. */
  private readonly watermarks = new Map<string, { before: number; forgetAt: number }>();
  private readonly allowlists = new Map<string, AllowlistChange>();
  private overflowedUntil = 0;

  constructor(
    private readonly now: () => number = Date.now,
    private readonly bounds: RevocationViewBounds = DEFAULT_REVOCATION_VIEW_BOUNDS,
  ) {}

  /** True while a bound on keys is exceeded: no token can be vouched for (see the class's comment). */
  get overflowed(): boolean {
    return this.overflowedUntil > this.now();
  }

  /** Applies an event of the revocation topic; a notice (api_key_expiring.v1) changes nothing. */
  apply(event: AuthTopicEvent): void {
    if (event.type === API_KEY_ALLOWED_IPS_CHANGED_V1) {
      return this.applyAllowlist(event.data.api_key_id, event.data.allowed_ips, event.data.version, Date.parse(event.data.changed_at));
    }
    if (event.type !== API_KEY_REVOKED_V1 && event.type !== SESSIONS_REVOKED_V1) return;
    const revokedAt = Date.parse(event.data.revoked_at);
    const forgetAt = revokedAt + ACCESS_TOKEN_TTL_SECONDS * 1000 + CLOCK_SKEW_MS;
    if (forgetAt <= this.now()) return;
    const key = event.data.api_key_id;
    if (event.type === API_KEY_REVOKED_V1) {
      if (this.admitsKey(key, this.apiKeys, forgetAt)) keepLatest(this.apiKeys, key, forgetAt);
      return;
    }
    const ids = event.data.session_ids;
    const held = this.sessionsPerKey.get(key);
    if ((held?.count ?? 0) + ids.length > this.bounds.maxSessionsPerKey || this.sessions.size + ids.length > this.bounds.maxSessions) {
      this.watermark(key, revokedAt, forgetAt);
      return;
    }
    for (const sid of ids) keepLatest(this.sessions, sid, forgetAt);
    this.sessionsPerKey.set(key, { count: (held?.count ?? 0) + ids.length, forgetAt: Math.max(forgetAt, held?.forgetAt ?? 0) });
  }

  /** Refuses every token of `key` issued up to `at` (ms), until `forgetAt`. */
  private watermark(key: string, at: number, forgetAt: number): void {
    if (!this.admitsKey(key, this.watermarks, forgetAt)) return;
    const before = Math.floor(at / 1000) + WATERMARK_SKEW_SECONDS;
    const current = this.watermarks.get(key);
    this.watermarks.set(key, { before: Math.max(before, current?.before ?? 0), forgetAt: Math.max(forgetAt, current?.forgetAt ?? 0) });
  }

  /** Whether one more key fits in `map`; if not, the view overflows until the entry would have gone. */
  private admitsKey(key: string, map: Map<string, unknown>, forgetAt: number): boolean {
    if (map.has(key) || map.size < this.bounds.maxKeys) return true;
    this.overflowedUntil = Math.max(this.overflowedUntil, forgetAt);
    return false;
  }

  /**
   * The highest version wins: relays of several instances may publish two changes of one key out
   * of order, and a replay repeats older ones. It is kept for a token lifetime after the change.
   */
  private applyAllowlist(apiKeyId: string, entries: string[], version: number, changedAt: number): void {
    const forgetAt = changedAt + ACCESS_TOKEN_TTL_SECONDS * 1000 + CLOCK_SKEW_MS;
    if (forgetAt <= this.now()) return;
    const current = this.allowlists.get(apiKeyId);
    if (current && current.version > version) return;
    if (!current && this.allowlists.size >= this.bounds.maxKeys) {
      // No room for the list: the key's tokens issued before the change are refused instead.
      this.watermark(apiKeyId, changedAt, forgetAt);
      return;
    }
    this.allowlists.set(apiKeyId, { entries, version, forgetAt: Math.max(forgetAt, current?.forgetAt ?? 0) });
  }

  /**
   * The key's allowlist if it changed within the last token lifetime (`null`: any address), else
   * undefined: the token's own list applies. One Map read, and none while no list has changed.
   */
  changedAllowlist(apiKeyId: string): AddressAllowlist | null | undefined {
    if (this.allowlists.size === 0) return undefined;
    const change = this.allowlists.get(apiKeyId);
    if (change === undefined) return undefined;
    if (change.allowlist === undefined) {
      // Only canonical lists are published; anything else (a bug, a forged message) allows nowhere.
      const parsed = parseAllowedIps(change.entries);
      change.allowlist = !parsed.ok ? NOWHERE : parsed.value.length === 0 ? null : AddressAllowlist.of(parsed.value);
    }
    return change.allowlist;
  }

  isRevoked(token: RevocationSubject): boolean {
    if (this.sessions.has(token.sid) || this.apiKeys.has(token.sub)) return true;
    // One size read while no key has a watermark (nearly always).
    if (this.watermarks.size === 0) return false;
    const mark = this.watermarks.get(token.sub);
    return mark !== undefined && token.iat <= mark.before;
  }

  /** Drops entries that can no longer match an unexpired token. */
  prune(): void {
    const now = this.now();
    for (const map of [this.sessions, this.apiKeys]) {
      for (const [id, forgetAt] of map) if (forgetAt <= now) map.delete(id);
    }
    for (const map of [this.sessionsPerKey, this.watermarks, this.allowlists]) {
      for (const [id, entry] of map) if (entry.forgetAt <= now) map.delete(id);
    }
  }

  get size(): { sessions: number; apiKeys: number; watermarks: number; allowlists: number } {
    return { sessions: this.sessions.size, apiKeys: this.apiKeys.size, watermarks: this.watermarks.size, allowlists: this.allowlists.size };
  }
}

function keepLatest(map: Map<string, number>, id: string, forgetAt: number): void {
  const current = map.get(id);
  if (current === undefined || current < forgetAt) map.set(id, forgetAt);
}

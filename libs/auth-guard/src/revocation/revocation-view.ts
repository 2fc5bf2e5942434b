import { ACCESS_TOKEN_TTL_SECONDS, AddressAllowlist, API_KEY_ALLOWED_IPS_CHANGED_V1, API_KEY_REVOKED_V1, AuthTopicEvent, parseAllowedIps, SESSIONS_REVOKED_V1 } from '@invoicing/contracts';

/** Kept past the token lifetime so that tokens stamped by a slightly fast clock are still covered. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

export interface RevocationSubject {
  sub: string;
  sid: string;
}

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
 */
export class RevocationView {
  private readonly sessions = new Map<string, number>();
  private readonly apiKeys = new Map<string, number>();
  private readonly allowlists = new Map<string, AllowlistChange>();

  constructor(private readonly now: () => number = Date.now) {}

  /** Applies an event of the revocation topic; a notice (api_key_expiring.v1) changes nothing. */
  apply(event: AuthTopicEvent): void {
    if (event.type === API_KEY_ALLOWED_IPS_CHANGED_V1) {
      return this.applyAllowlist(event.data.api_key_id, event.data.allowed_ips, event.data.version, Date.parse(event.data.changed_at));
    }
    if (event.type !== API_KEY_REVOKED_V1 && event.type !== SESSIONS_REVOKED_V1) return;
    const forgetAt = Date.parse(event.data.revoked_at) + ACCESS_TOKEN_TTL_SECONDS * 1000 + CLOCK_SKEW_MS;
    if (forgetAt <= this.now()) return;
    if (event.type === API_KEY_REVOKED_V1) keepLatest(this.apiKeys, event.data.api_key_id, forgetAt);
    for (const sid of event.data.session_ids) keepLatest(this.sessions, sid, forgetAt);
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
    return this.sessions.has(token.sid) || this.apiKeys.has(token.sub);
  }

  /** Drops entries that can no longer match an unexpired token. */
  prune(): void {
    const now = this.now();
    for (const map of [this.sessions, this.apiKeys]) {
      for (const [id, forgetAt] of map) if (forgetAt <= now) map.delete(id);
    }
    for (const [id, change] of this.allowlists) if (change.forgetAt <= now) this.allowlists.delete(id);
  }

  get size(): { sessions: number; apiKeys: number; allowlists: number } {
    return { sessions: this.sessions.size, apiKeys: this.apiKeys.size, allowlists: this.allowlists.size };
  }
}

function keepLatest(map: Map<string, number>, id: string, forgetAt: number): void {
  const current = map.get(id);
  if (current === undefined || current < forgetAt) map.set(id, forgetAt);
}

import { ACCESS_TOKEN_TTL_SECONDS, API_KEY_REVOKED_V1, RevocationEvent } from '@invoicing/contracts';

/** Kept past the token lifetime so that tokens stamped by a slightly fast clock are still covered. */
const CLOCK_SKEW_MS = 5 * 60 * 1000;

export interface RevocationSubject {
  sub: string;
  sid: string;
}

/**
 * In-memory answer to "is this access token revoked?": a set of revoked sessions and a set of
 * revoked API keys. An entry is forgotten once every token it could apply to has expired (revocation
 * time + access-token lifetime + skew), so memory tracks the last hour of revocations only.
 */
export class RevocationView {
  private readonly sessions = new Map<string, number>();
  private readonly apiKeys = new Map<string, number>();

  constructor(private readonly now: () => number = Date.now) {}

  apply(event: RevocationEvent): void {
    const forgetAt = Date.parse(event.data.revoked_at) + ACCESS_TOKEN_TTL_SECONDS * 1000 + CLOCK_SKEW_MS;
    if (forgetAt <= this.now()) return;
    if (event.type === API_KEY_REVOKED_V1) keepLatest(this.apiKeys, event.data.api_key_id, forgetAt);
    for (const sid of event.data.session_ids) keepLatest(this.sessions, sid, forgetAt);
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
  }

  get size(): { sessions: number; apiKeys: number } {
    return { sessions: this.sessions.size, apiKeys: this.apiKeys.size };
  }
}

function keepLatest(map: Map<string, number>, id: string, forgetAt: number): void {
  const current = map.get(id);
  if (current === undefined || current < forgetAt) map.set(id, forgetAt);
}

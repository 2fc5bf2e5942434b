import { API_KEY_ALLOWED_IPS_CHANGED_V1, API_KEY_EXPIRING_V1, API_KEY_REVOKED_V1, AuthTopicEvent, RevocationEvent, SESSIONS_REVOKED_V1 } from '@invoicing/contracts';
import { RevocationView } from './revocation-view';

function sessionsRevoked(sessionIds: string[], revokedAt: number): RevocationEvent {
  return {
    specversion: '1.0',
    id: 'e1',
    source: 's',
    type: SESSIONS_REVOKED_V1,
    subject: 'key_a',
    time: new Date(revokedAt).toISOString(),
    datacontenttype: 'application/json',
    data: {
      organization_id: 'org_a',
      api_key_id: 'key_a',
      client_id: 'ak_live_a',
      reason: 'refresh_token_reuse',
      session_ids: sessionIds,
      revoked_at: new Date(revokedAt).toISOString(),
    },
  };
}

describe(RevocationView.name, () => {
  it('revokes the listed sessions only', () => {
    const now = Date.now();
    const view = new RevocationView(() => now);
    view.apply(sessionsRevoked(['ses_1', 'ses_2'], now));
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_1', iat: 0 })).toBe(true);
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_2', iat: 0 })).toBe(true);
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_3', iat: 0 })).toBe(false);
  });

  it('revokes every token of a revoked key, whatever its session', () => {
    const now = Date.now();
    const view = new RevocationView(() => now);
    const event = sessionsRevoked([], now);
    view.apply({ ...event, type: API_KEY_REVOKED_V1, data: { ...event.data, reason: 'revoked_by_user' } } as RevocationEvent);
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_anything', iat: 0 })).toBe(true);
    expect(view.isRevoked({ sub: 'key_b', sid: 'ses_anything', iat: 0 })).toBe(false);
  });

  it('forgets entries once every token they cover has expired, not before', () => {
    let now = Date.now();
    const view = new RevocationView(() => now);
    view.apply(sessionsRevoked(['ses_1'], now));
    now += 3600_000;
    view.prune();
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_1', iat: 0 })).toBe(true);
    now += 6 * 60_000;
    view.prune();
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_1', iat: 0 })).toBe(false);
    expect(view.size).toEqual({ sessions: 0, apiKeys: 0, watermarks: 0, allowlists: 0 });
  });

  it('ignores events too old to matter (replayed from the topic)', () => {
    const now = Date.now();
    const view = new RevocationView(() => now);
    view.apply(sessionsRevoked(['ses_old'], now - 2 * 3600_000));
    expect(view.size.sessions).toBe(0);
  });

  it('keeps a changed allowlist until every token issued before the change has expired, then forgets it', () => {
    let now = Date.now();
    const view = new RevocationView(() => now);
    let version = 0;
    const changed = (allowed_ips: string[], at: number, v = ++version): AuthTopicEvent => ({
      specversion: '1.0', id: 'e2', source: 's', type: API_KEY_ALLOWED_IPS_CHANGED_V1, subject: 'key_a', time: new Date(at).toISOString(), datacontenttype: 'application/json',
      data: { organization_id: 'org_a', api_key_id: 'key_a', client_id: 'ak_live_a', allowed_ips, version: v, changed_at: new Date(at).toISOString() },
    });
    expect(view.changedAllowlist('key_a')).toBeUndefined();
    view.apply(changed(['203.0.113.0/24'], now));
    expect(view.changedAllowlist('key_a')?.allows('203.0.113.1')).toBe(true);
    expect(view.changedAllowlist('key_b')).toBeUndefined();
    // The version decides, not the writer's clock: a later version stamped earlier still wins...
    view.apply(changed([], now - 50));
    expect(view.changedAllowlist('key_a')).toBeNull();
    // ...and an older version published late changes nothing.
    view.apply(changed(['198.51.100.0/24'], now + 10, 1));
    expect(view.changedAllowlist('key_a')).toBeNull();
    // A list that is not canonical allows nowhere rather than throwing in the consumer.
    const broken = new RevocationView(() => now);
    broken.apply(changed(['1.2.3.4/33'], now));
    expect(broken.changedAllowlist('key_a')?.allows('1.2.3.4')).toBe(false);
    // Too old to matter when replayed: every token it could cover has expired.
    const fresh = new RevocationView(() => now);
    fresh.apply(changed(['203.0.113.0/24'], now - 3600_000 - 5 * 60_000 - 1));
    expect(fresh.size.allowlists).toBe(0);
    now += 3600_000 + 5 * 60_000 + 2;
    view.prune();
    expect(view.changedAllowlist('key_a')).toBeUndefined();
  });

  it('changes nothing on an expiry notice', () => {
    const view = new RevocationView();
    view.apply({
      specversion: '1.0', id: 'e3', source: 's', type: API_KEY_EXPIRING_V1, subject: 'key_a', time: new Date().toISOString(), datacontenttype: 'application/json',
      data: { organization_id: 'org_a', api_key_id: 'key_a', client_id: 'ak_live_a', name: 'n', expires_at: new Date().toISOString() },
    });
    expect(view.size).toEqual({ sessions: 0, apiKeys: 0, watermarks: 0, allowlists: 0 });
  });

  describe('bounds (fail closed)', () => {
    const bounds = { maxSessions: 10, maxSessionsPerKey: 4, maxKeys: 3 };
    const ofKey = (key: string, ids: string[], at: number): RevocationEvent => {
      const e = sessionsRevoked(ids, at);
      return { ...e, subject: key, data: { ...e.data, api_key_id: key } } as RevocationEvent;
    };

    it("holds a key's sessions past its share as one watermark: its tokens issued until the revocation are refused, later ones and other keys' are not", () => {
      const now = Date.UTC(2026, 10, 26, 12);
      const view = new RevocationView(() => now, bounds);
      view.apply(ofKey('key_a', ['ses_1', 'ses_2'], now));
      view.apply(ofKey('key_a', ['ses_3', 'ses_4', 'ses_5'], now + 1000));
      expect(view.size).toMatchObject({ sessions: 2, watermarks: 1 });
      const iatAt = (ms: number) => Math.floor(ms / 1000);
      // The sessions named by the collapsed event, and any other of the key issued before it: refused.
      expect(view.isRevoked({ sub: 'key_a', sid: 'ses_5', iat: iatAt(now) })).toBe(true);
      expect(view.isRevoked({ sub: 'key_a', sid: 'ses_other', iat: iatAt(now) })).toBe(true);
      // Issued well after it (past the clock skew allowed for): accepted.
      expect(view.isRevoked({ sub: 'key_a', sid: 'ses_new', iat: iatAt(now + 10_000) })).toBe(false);
      // Another key is untouched.
      expect(view.isRevoked({ sub: 'key_b', sid: 'ses_other', iat: iatAt(now) })).toBe(false);
      // The sessions held one by one stay revoked whatever their iat.
      expect(view.isRevoked({ sub: 'key_a', sid: 'ses_1', iat: iatAt(now + 60_000) })).toBe(true);
    });

    it('never holds more sessions than its bound, whatever the number of keys', () => {
      const now = Date.now();
      const view = new RevocationView(() => now, { ...bounds, maxKeys: 1000 });
      for (let k = 0; k < 50; k++) view.apply(ofKey(`key_${k}`, [`ses_${k}_1`, `ses_${k}_2`, `ses_${k}_3`], now));
      expect(view.size.sessions).toBeLessThanOrEqual(10);
      // Every revoked session is still refused, one way or the other.
      for (let k = 0; k < 50; k++) expect(view.isRevoked({ sub: `key_${k}`, sid: `ses_${k}_3`, iat: Math.floor(now / 1000) })).toBe(true);
    });

    it('stops vouching (overflowed) rather than forget a revoked key, and recovers once the entries would have expired', () => {
      let now = Date.now();
      const view = new RevocationView(() => now, bounds);
      for (let k = 0; k < 4; k++) {
        const e = ofKey(`key_${k}`, [], now);
        view.apply({ ...e, type: API_KEY_REVOKED_V1, data: { ...e.data, reason: 'revoked_by_user' } } as RevocationEvent);
      }
      expect(view.size.apiKeys).toBe(3);
      expect(view.overflowed).toBe(true);
      now += 2 * 3600 * 1000;
      view.prune();
      expect(view.overflowed).toBe(false);
      expect(view.size.apiKeys).toBe(0);
    });

    it("keeps no list of sessions for a revoked key: the key's one entry covers them", () => {
      const now = Date.now();
      const view = new RevocationView(() => now, bounds);
      const e = ofKey('key_a', Array.from({ length: 1000 }, (_, i) => `ses_${i}`), now);
      view.apply({ ...e, type: API_KEY_REVOKED_V1, data: { ...e.data, reason: 'revoked_by_user' } } as RevocationEvent);
      expect(view.size).toMatchObject({ sessions: 0, apiKeys: 1, watermarks: 0 });
      expect(view.isRevoked({ sub: 'key_a', sid: 'ses_7', iat: 0 })).toBe(true);
    });
  });
});

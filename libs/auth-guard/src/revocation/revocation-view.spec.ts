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
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_1' })).toBe(true);
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_2' })).toBe(true);
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_3' })).toBe(false);
  });

  it('revokes every token of a revoked key, whatever its session', () => {
    const now = Date.now();
    const view = new RevocationView(() => now);
    const event = sessionsRevoked([], now);
    view.apply({ ...event, type: API_KEY_REVOKED_V1, data: { ...event.data, reason: 'revoked_by_user' } } as RevocationEvent);
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_anything' })).toBe(true);
    expect(view.isRevoked({ sub: 'key_b', sid: 'ses_anything' })).toBe(false);
  });

  it('forgets entries once every token they cover has expired, not before', () => {
    let now = Date.now();
    const view = new RevocationView(() => now);
    view.apply(sessionsRevoked(['ses_1'], now));
    now += 3600_000;
    view.prune();
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_1' })).toBe(true);
    now += 6 * 60_000;
    view.prune();
    expect(view.isRevoked({ sub: 'key_a', sid: 'ses_1' })).toBe(false);
    expect(view.size).toEqual({ sessions: 0, apiKeys: 0, allowlists: 0 });
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
    expect(view.size).toEqual({ sessions: 0, apiKeys: 0, allowlists: 0 });
  });
});

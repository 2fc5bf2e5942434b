import { API_KEY_REVOKED_V1, RevocationEvent, SESSIONS_REVOKED_V1 } from '@invoicing/contracts';
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
    expect(view.size).toEqual({ sessions: 0, apiKeys: 0 });
  });

  it('ignores events too old to matter (replayed from the topic)', () => {
    const now = Date.now();
    const view = new RevocationView(() => now);
    view.apply(sessionsRevoked(['ses_old'], now - 2 * 3600_000));
    expect(view.size.sessions).toBe(0);
  });
});

import { validateRevocationEvent } from '@invoicing/contracts';
import type { PendingRevocation, PendingRevocationRecord } from '../sessions/session-store';
import { revocationEvents, SESSION_IDS_PER_EVENT } from './revocation-events.factory';

const record = (sessions: number, reason: PendingRevocation['reason'] = 'refresh_token_reuse'): PendingRevocationRecord => {
  const event = {
    event_id: '01933c3e-8a7b-7cc0-9f00-000000000001',
    reason,
    session_ids: Array.from({ length: sessions }, (_, i) => `ses_${i.toString(16).padStart(32, '0')}`),
    revoked_at: '1763700000000',
    org: '01933c3e-8a7b-7cc0-9f00-00000000000a',
    cid: 'ak_live_abcdefghijklmnopqrstuvwx',
  };
  return { apiKeyUuid: '01933c3e-8a7b-7cc0-9f00-00000000000b', raw: JSON.stringify(event), event, actor: null };
};

describe('revocationEvents', () => {
  it('keeps a small revocation in one event with the script’s event id', () => {
    const events = revocationEvents(record(3));
    expect(events).toHaveLength(1);
    expect(events[0].id).toBe('01933c3e-8a7b-7cc0-9f00-000000000001');
    expect(events[0].data.session_ids).toHaveLength(3);
    expect(validateRevocationEvent(events[0]).ok).toBe(true);
  });

  it('splits a revocation of many sessions into valid events that name every session once', () => {
    const events = revocationEvents(record(2 * SESSION_IDS_PER_EVENT + 500, 'revoked_by_user'));
    expect(events).toHaveLength(3);
    expect(new Set(events.map((e) => e.id)).size).toBe(3);
    const named = events.flatMap((e) => e.data.session_ids);
    expect(new Set(named).size).toBe(2 * SESSION_IDS_PER_EVENT + 500);
    for (const e of events) {
      expect(validateRevocationEvent(e).ok).toBe(true);
      expect(e.type).toBe('invoicing.auth.api_key_revoked.v1');
      expect(Buffer.byteLength(JSON.stringify(e))).toBeLessThan(100_000);
    }
  });

  it('announces a session revoked by its client (RFC 7009) as sessions_revoked with reason session_revoked', () => {
    const [event] = revocationEvents(record(1, 'session_revoked'));
    expect(event.type).toBe('invoicing.auth.sessions_revoked.v1');
    expect(event.data.reason).toBe('session_revoked');
    expect(event.data.session_ids).toEqual(['ses_00000000000000000000000000000000']);
    expect(validateRevocationEvent(event).ok).toBe(true);
  });

  it('derives the same ids on a retry, so the outbox insert stays idempotent', () => {
    const first = revocationEvents(record(2500)).map((e) => e.id);
    expect(revocationEvents(record(2500)).map((e) => e.id)).toEqual(first);
    expect(first[1]).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-8[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/);
  });
});

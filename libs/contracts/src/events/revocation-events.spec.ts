import { newId } from '../ids';
import { REVOCATION_EVENT_SCHEMAS, SESSIONS_REVOKED_REASONS, SESSIONS_REVOKED_V1, validateRevocationEvent } from './revocation-events';

function event(overrides: Record<string, unknown> = {}, data: Record<string, unknown> = {}) {
  const apiKeyId = newId('key');
  return {
    specversion: '1.0',
    id: 'a0a0a0a0-0000-7000-8000-000000000000',
    source: '/invoicing/auth-service',
    type: SESSIONS_REVOKED_V1,
    subject: apiKeyId,
    time: '2026-11-21T10:00:00.000Z',
    datacontenttype: 'application/json',
    data: {
      organization_id: newId('org'),
      api_key_id: apiKeyId,
      client_id: 'ak_live_abcDEF123',
      reason: 'refresh_token_reuse',
      session_ids: [newId('ses')],
      revoked_at: '2026-11-21T10:00:00.000Z',
      ...data,
    },
    ...overrides,
  };
}

describe('validateRevocationEvent', () => {
  it('accepts a well-formed sessions_revoked event', () => {
    expect(validateRevocationEvent(event())).toEqual({ ok: true, value: expect.anything() });
  });

  it('accepts a session revoked by its client (RFC 7009) as sessions_revoked with reason session_revoked', () => {
    expect(validateRevocationEvent(event({}, { reason: 'session_revoked' })).ok).toBe(true);
  });

  it('keeps the JSON Schema file and the TypeScript reasons in step', () => {
    const reason = (REVOCATION_EVENT_SCHEMAS[SESSIONS_REVOKED_V1].properties.data.properties.reason as { enum: string[] }).enum;
    expect(reason).toEqual([...SESSIONS_REVOKED_REASONS]);
  });

  it('rejects an unknown type, a missing field and a wrong reason', () => {
    expect(validateRevocationEvent(event({ type: 'invoicing.auth.other.v1' })).ok).toBe(false);
    const { data, ...withoutData } = event();
    expect(data).toBeDefined();
    expect(validateRevocationEvent(withoutData).ok).toBe(false);
    expect(validateRevocationEvent(event({}, { reason: 'revoked_by_user' })).ok).toBe(false);
    expect(validateRevocationEvent(event({}, { session_ids: ['nope'] })).ok).toBe(false);
    expect(validateRevocationEvent(null).ok).toBe(false);
  });
});

import { newId } from '../ids';
import {
  API_KEY_ALLOWED_IPS_CHANGED_V1,
  API_KEY_EXPIRING_V1,
  API_KEY_REVOKED_REASONS,
  API_KEY_REVOKED_V1,
  REVOCATION_EVENT_SCHEMAS,
  SESSIONS_REVOKED_REASONS,
  SESSIONS_REVOKED_V1,
  validateAuthTopicEvent,
  validateRevocationEvent,
} from './revocation-events';

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
    const keyReason = (REVOCATION_EVENT_SCHEMAS[API_KEY_REVOKED_V1].properties.data.properties.reason as { enum: string[] }).enum;
    expect(keyReason).toEqual([...API_KEY_REVOKED_REASONS]);
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

describe('validateAuthTopicEvent', () => {
  const keyId = newId('key');
  const envelope = (type: string, data: Record<string, unknown>) => ({
    ...event({ type, subject: keyId }),
    data: { organization_id: newId('org'), api_key_id: keyId, client_id: 'ak_live_abcDEF123', ...data },
  });

  it('accepts an expired key, a secret rolled with end_sessions, a new allowlist and an expiry notice', () => {
    expect(validateAuthTopicEvent(envelope(API_KEY_REVOKED_V1, { reason: 'expired', session_ids: [], revoked_at: '2026-11-21T10:00:00.000Z' })).ok).toBe(true);
    expect(validateAuthTopicEvent(envelope(SESSIONS_REVOKED_V1, { reason: 'secret_rolled', session_ids: [newId('ses')], revoked_at: '2026-11-21T10:00:00.000Z' })).ok).toBe(true);
    expect(validateAuthTopicEvent(envelope(API_KEY_ALLOWED_IPS_CHANGED_V1, { allowed_ips: ['203.0.113.0/24', '2001:db8::1'], version: 1, changed_at: '2026-11-21T10:00:00.000Z' })).ok).toBe(true);
    expect(validateAuthTopicEvent(envelope(API_KEY_EXPIRING_V1, { name: 'ERP', expires_at: '2026-11-28T10:00:00.000Z' })).ok).toBe(true);
  });

  it('rejects what its schema does not allow, and unknown types', () => {
    expect(validateAuthTopicEvent(envelope(API_KEY_ALLOWED_IPS_CHANGED_V1, { changed_at: '2026-11-21T10:00:00.000Z' })).ok).toBe(false);
    expect(validateAuthTopicEvent(envelope(API_KEY_EXPIRING_V1, { name: 'ERP', expires_at: 'next week' })).ok).toBe(false);
    expect(validateAuthTopicEvent(envelope('invoicing.auth.other.v1', {})).ok).toBe(false);
    expect(validateAuthTopicEvent(envelope('toString', {})).ok).toBe(false);
  });

  it('with openReasons, accepts a reason added later (what a subscriber does), and nothing else looser', () => {
    const later = envelope(API_KEY_REVOKED_V1, { reason: 'compromised', session_ids: [], revoked_at: '2026-11-21T10:00:00.000Z' });
    expect(validateAuthTopicEvent(later).ok).toBe(false);
    expect(validateAuthTopicEvent(later, { openReasons: true }).ok).toBe(true);
    expect(validateAuthTopicEvent(envelope(API_KEY_REVOKED_V1, { reason: '', session_ids: [], revoked_at: '2026-11-21T10:00:00.000Z' }), { openReasons: true }).ok).toBe(false);
    expect(validateAuthTopicEvent(envelope(SESSIONS_REVOKED_V1, { reason: 'compromised', session_ids: ['nope'], revoked_at: '2026-11-21T10:00:00.000Z' }), { openReasons: true }).ok).toBe(false);
  });

  it('keeps validateRevocationEvent to the two revocation types', () => {
    expect(validateRevocationEvent(envelope(API_KEY_EXPIRING_V1, { name: 'ERP', expires_at: '2026-11-28T10:00:00.000Z' })).ok).toBe(false);
  });
});

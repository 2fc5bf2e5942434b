import {
  API_KEY_REVOKED_V1,
  RevocationEvent,
  SESSIONS_REVOKED_V1,
  toPublicId,
} from '@invoicing/contracts';
import type { PendingRevocationRecord } from '../sessions/session-store';

export const EVENT_SOURCE = '/invoicing/auth-service';

/** The CloudEvent for a revocation recorded by a session script. */
export function revocationEvent(record: PendingRevocationRecord): RevocationEvent {
  const { event } = record;
  const apiKeyId = toPublicId('key', record.apiKeyUuid);
  const revokedAt = new Date(Number(event.revoked_at)).toISOString();
  const data = {
    organization_id: toPublicId('org', event.org),
    api_key_id: apiKeyId,
    client_id: event.cid,
    session_ids: [...new Set(event.session_ids)],
    revoked_at: revokedAt,
  };
  const envelope = {
    specversion: '1.0' as const,
    id: event.event_id,
    source: EVENT_SOURCE,
    subject: apiKeyId,
    time: revokedAt,
    datacontenttype: 'application/json' as const,
  };
  return event.reason === 'revoked_by_user'
    ? { ...envelope, type: API_KEY_REVOKED_V1, data: { ...data, reason: 'revoked_by_user' } }
    : { ...envelope, type: SESSIONS_REVOKED_V1, data: { ...data, reason: 'refresh_token_reuse' } };
}

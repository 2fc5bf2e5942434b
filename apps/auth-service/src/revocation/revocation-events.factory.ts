import {
  API_KEY_REVOKED_V1,
  RevocationEvent,
  SESSIONS_REVOKED_V1,
  toPublicId,
} from '@invoicing/contracts';
import { createHash } from 'node:crypto';
import type { PendingRevocationRecord } from '../sessions/session-store';

export const EVENT_SOURCE = '/invoicing/auth-service';

/**
 * Session ids per event. A key may hold up to AUTH_MAX_SESSIONS_PER_KEY sessions; one event naming
 * 50,000 of them would be about 2 MB, over Kafka's default 1 MB message limit, and could never be
 * published. So a revocation of many sessions goes out as several events of at most this many ids
 * (about 40 KB each), all in one outbox transaction.
 */
export const SESSION_IDS_PER_EVENT = 1000;

/**
 * The CloudEvents for a revocation recorded by a session script: one, or one per
 * {@link SESSION_IDS_PER_EVENT} sessions. The first keeps the script's event id; the others get ids
 * derived from it, so a retried insert (the sweeper) writes the same rows again, never new ones.
 */
export function revocationEvents(record: PendingRevocationRecord): RevocationEvent[] {
  const sessionIds = [...new Set(record.event.session_ids)];
  const chunks: string[][] = [];
  for (let i = 0; i < sessionIds.length; i += SESSION_IDS_PER_EVENT) chunks.push(sessionIds.slice(i, i + SESSION_IDS_PER_EVENT));
  if (chunks.length === 0) chunks.push([]);
  return chunks.map((ids, i) => revocationEvent(record, ids, i === 0 ? record.event.event_id : derivedUuid(record.event.event_id, i)));
}

function derivedUuid(base: string, index: number): string {
  const b = createHash('sha256').update(`${base}/${index}`).digest().subarray(0, 16);
  b[6] = (b[6] & 0x0f) | 0x80; // version 8 (RFC 9562: custom)
  b[8] = (b[8] & 0x3f) | 0x80; // variant
  const hex = b.toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

function revocationEvent(record: PendingRevocationRecord, sessionIds: string[], id: string): RevocationEvent {
  const { event } = record;
  const apiKeyId = toPublicId('key', record.apiKeyUuid);
  const revokedAt = new Date(Number(event.revoked_at)).toISOString();
  const data = {
    organization_id: toPublicId('org', event.org),
    api_key_id: apiKeyId,
    client_id: event.cid,
    session_ids: sessionIds,
    revoked_at: revokedAt,
  };
  const envelope = {
    specversion: '1.0' as const,
    id,
    source: EVENT_SOURCE,
    subject: apiKeyId,
    time: revokedAt,
    datacontenttype: 'application/json' as const,
  };
  if (event.reason === 'revoked_by_user' || event.reason === 'exposed') return { ...envelope, type: API_KEY_REVOKED_V1, data: { ...data, reason: event.reason } };
  return { ...envelope, type: SESSIONS_REVOKED_V1, data: { ...data, reason: event.reason } };
}

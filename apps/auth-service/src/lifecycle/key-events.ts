import {
  API_KEY_ALLOWED_IPS_CHANGED_V1,
  API_KEY_EXPIRING_V1,
  API_KEY_REVOKED_V1,
  ApiKeyAllowedIpsChangedV1,
  ApiKeyExpiringV1,
  ApiKeyRevokedV1,
  toPublicId,
} from '@invoicing/contracts';
import { uuidv7 } from 'uuidv7';
import { EVENT_SOURCE } from '../revocation/revocation-events.factory';

interface KeyRef {
  id: string;
  organizationId: string;
  clientId: string;
}

function envelope(key: KeyRef, at: Date) {
  const subject = toPublicId('key', key.id);
  return {
    specversion: '1.0' as const,
    id: uuidv7(),
    source: EVENT_SOURCE,
    subject,
    time: at.toISOString(),
    datacontenttype: 'application/json' as const,
    ids: { organization_id: toPublicId('org', key.organizationId), api_key_id: subject, client_id: key.clientId },
  };
}

/**
 * The key expired: every token of it is refused (by `sub`, so no session needs listing; its
 * sessions lapse on their own, refused at the token endpoint from the instant of the expiry).
 */
export function apiKeyExpired(key: KeyRef, expiredAt: Date): ApiKeyRevokedV1 {
  const { ids, ...env } = envelope(key, expiredAt);
  return { ...env, type: API_KEY_REVOKED_V1, data: { ...ids, reason: 'expired', session_ids: [], revoked_at: expiredAt.toISOString() } };
}

export function allowedIpsChanged(key: KeyRef, allowedIps: string[], version: number, at: Date): ApiKeyAllowedIpsChangedV1 {
  const { ids, ...env } = envelope(key, at);
  return { ...env, type: API_KEY_ALLOWED_IPS_CHANGED_V1, data: { ...ids, allowed_ips: allowedIps, version, changed_at: at.toISOString() } };
}

export function apiKeyExpiring(key: KeyRef & { name: string; expiresAt: Date }, at: Date): ApiKeyExpiringV1 {
  const { ids, ...env } = envelope(key, at);
  return { ...env, type: API_KEY_EXPIRING_V1, data: { ...ids, name: key.name, expires_at: key.expiresAt.toISOString() } };
}

import {
  API_KEY_ALLOWED_IPS_CHANGED_V1,
  API_KEY_CHANGED_V1,
  ApiKeyChange,
  ApiKeyChangedV1,
  API_KEY_EXPIRING_V1,
  API_KEY_REVOKED_V1,
  ApiKeyAllowedIpsChangedV1,
  ApiKeyExpiringV1,
  ApiKeyRevokedV1,
  toPublicId,
} from '@invoicing/contracts';
import { nameBasedEventId } from '@invoicing/event-bus';
import { uuidv7 } from 'uuidv7';
import { EntityManager, In } from 'typeorm';
import { ApiKeyEntity } from '../keys/api-key.entity';
import { toView } from '../keys/api-keys.service';
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

/**
 * Changes the keys' owners are told of by webhook (`api_key.<change>`), each with the key as the
 * settings API shows it at `at`: read in the caller's transaction, after the change, so the events
 * and the change commit together (one read for all the keys). `sourceId` (one key): for a change
 * that may be written again (a revocation moved from Redis by a retry), a stable id makes the
 * second insert a no-op.
 */
export async function apiKeysChanged(tx: EntityManager, apiKeyUuids: string[], change: ApiKeyChange, at: Date, sourceId?: string): Promise<ApiKeyChangedV1[]> {
  if (apiKeyUuids.length === 0) return [];
  const keys = await tx.getRepository(ApiKeyEntity).findBy({ id: In(apiKeyUuids) });
  return keys.map((key) => {
    const { ids, ...env } = envelope(key, at);
    const id = sourceId ? nameBasedEventId(`api_key_changed/${change}/${sourceId}`) : env.id;
    return { ...env, id, type: API_KEY_CHANGED_V1, data: { ...ids, change, api_key: { ...toView(key, at.getTime()) }, changed_at: at.toISOString() } };
  });
}

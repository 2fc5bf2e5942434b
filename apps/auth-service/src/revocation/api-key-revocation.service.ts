import { Injectable } from '@nestjs/common';
import { REFRESH_TOKEN_TTL_SECONDS } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';
import { uuidv7 } from 'uuidv7';
import { ApiKeyCache } from '../keys/api-key-cache';
import { isUsable } from '../keys/api-key.entity';
import { ApiKeysService, ApiKeyView, toView } from '../keys/api-keys.service';
import { Clock } from '../common/clock';
import { RevocationActor, SessionStore } from '../sessions/session-store';
import { RevocationOutbox } from './revocation-outbox.service';

/**
 * A user revokes a key in the settings area: the key stops authenticating and every session of it
 * is revoked at once, through the same session script and outbox as a refresh-token reuse.
 */
@Injectable()
export class ApiKeyRevocationService {
  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly sessions: SessionStore,
    private readonly outbox: RevocationOutbox,
    private readonly clock: Clock,
    private readonly cache: ApiKeyCache,
  ) {}

  async revoke(organizationId: string, publicKeyId: string, actor: RevocationActor = { kind: 'system', id: null, address: null }): Promise<ApiKeyView> {
    const key = await this.apiKeys.findInOrganization(organizationId, publicKeyId);
    if (!key) throw ProblemException.notFound('API key');
    // Revoked or expired already: nothing more to end (an expired key is announced by its expiry).
    if (!isUsable(key, this.clock.now())) return toView(key);
    // First Redis: sessions revoked, the key refused for new sessions, and the event recorded, in
    // one atomic step; then Postgres: status and outbox row in one transaction.
    const pending = await this.sessions.revokeAll({
      apiKeyUuid: key.id,
      organizationId: key.organizationId,
      clientId: key.clientId,
      reason: 'revoked_by_user',
      markKeyRevoked: true,
      actor,
      now: this.clock.now(),
      eventId: uuidv7(),
      markerTtlMs: (REFRESH_TOKEN_TTL_SECONDS + 86400) * 1000,
    });
    // Other instances are held by the marker just written (see ApiKeyCache); this one forgets at once.
    this.cache.forget(key);
    if (!(await this.outbox.enqueue(pending))) {
      // The key is already unusable; the sweeper finishes the Postgres side shortly.
      throw ProblemException.unavailable('The key is revoked, but the change is not fully recorded yet; retry to confirm.');
    }
    const updated = await this.apiKeys.findInOrganization(organizationId, publicKeyId);
    return toView(updated ?? key);
  }
}

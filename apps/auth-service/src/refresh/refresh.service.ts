import { Injectable } from '@nestjs/common';
import { toPublicId } from '@invoicing/contracts';
import { uuidv7 } from 'uuidv7';
import { ApiKeysService } from '../api-keys/api-keys.service';
import { LastUsedRecorder } from '../api-keys/last-used-recorder';
import { Clock } from '../common/clock';
import { hashCredentialHex, isWellFormedRefreshToken } from '../credentials/credential-format';
import { TokenPairFactory, TokenResponse } from '../issuance/token-pair';
import { RevocationOutbox } from '../revocation/revocation-outbox.service';
import { SessionStore } from '../sessions/session-store';
import { OAuthError } from '../token/oauth-error';

/**
 * Refresh-token rotation. Each token works once; presenting a spent one revokes every session of
 * its API key at once (atomically, in the rotation script) and publishes the revocation.
 */
@Injectable()
export class RefreshService {
  constructor(
    private readonly sessions: SessionStore,
    private readonly tokens: TokenPairFactory,
    private readonly outbox: RevocationOutbox,
    private readonly clock: Clock,
    private readonly apiKeys: ApiKeysService,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  async refresh(refreshToken: string): Promise<TokenResponse> {
    if (!isWellFormedRefreshToken(refreshToken)) throw OAuthError.invalidGrant();
    const presentedHash = hashCredentialHex(refreshToken);
    const pointer = await this.sessions.findPointer(presentedHash);
    if (!pointer) throw OAuthError.invalidGrant();
    // A revoked key's sessions are gone already; this also covers a revocation still in flight.
    const key = await this.apiKeys.findById(pointer.apiKeyUuid);
    if (!key || key.status !== 'active') throw OAuthError.invalidGrant();

    const now = this.clock.now();
    const next = await this.tokens.mintRefreshToken(pointer.apiKeyUuid, pointer.sessionId, now);
    const result = await this.sessions.rotate({
      pointer,
      presentedHash,
      newHash: next.hash,
      newExpiresAt: next.expiresAt,
      now,
      eventId: uuidv7(),
    });
    switch (result.kind) {
      case 'rotated':
        this.lastUsed.touch(pointer.apiKeyUuid, new Date(now));
        return this.tokens.response(
          {
            sub: toPublicId('key', pointer.apiKeyUuid),
            client_id: result.clientId,
            org_id: toPublicId('org', result.organizationUuid),
            scope: result.scope,
            sid: pointer.sessionId,
          },
          next,
          now,
        );
      case 'reuse':
        await this.outbox.enqueue(result.pending);
        throw OAuthError.invalidGrant('The refresh token was already used; every session of this API key is revoked.');
      case 'expired':
        throw OAuthError.invalidGrant('The refresh token expired.');
      default:
        throw OAuthError.invalidGrant();
    }
  }
}

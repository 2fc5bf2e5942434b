import { Injectable } from '@nestjs/common';
import { toPublicId } from '@invoicing/contracts';
import { uuidv7 } from 'uuidv7';
import { ApiKeyCache } from '../api-keys/api-key-cache';
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
    private readonly apiKeys: ApiKeyCache,
    private readonly lastUsed: LastUsedRecorder,
  ) {}

  async refresh(refreshToken: string): Promise<TokenResponse> {
    if (!isWellFormedRefreshToken(refreshToken)) throw OAuthError.invalidGrant();
    const presentedHash = hashCredentialHex(refreshToken);
    const pointer = await this.sessions.findPointer(presentedHash);
    if (!pointer) throw OAuthError.invalidGrant();
    // A revoked key's sessions are gone already (the rotation script would answer 'invalid'); this
    // also refuses a key whose revocation Redis has lost, once the cache has read Postgres again.
    const key = await this.apiKeys.findById(pointer.apiKeyUuid);
    if (!key || key.status !== 'active') throw OAuthError.invalidGrant();

    const now = this.clock.now();
    const [next, result] = await this.tokens.mintRefreshToken(pointer.apiKeyUuid, pointer.sessionId, now, (minted) =>
      this.sessions.rotate({
        pointer,
        presentedHash,
        newHash: minted.hash,
        newExpiresAt: minted.expiresAt,
        now,
        eventId: uuidv7(),
      }),
    );
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

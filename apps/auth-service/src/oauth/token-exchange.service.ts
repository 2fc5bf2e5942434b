import { Injectable } from '@nestjs/common';
import { formatScopes, newId, splitScopeString, toPublicId } from '@invoicing/contracts';
import { ApiKeyCache } from '../keys/api-key-cache';
import { LastUsedRecorder } from '../keys/last-used-recorder';
import { Clock } from '../common/clock';
import { TokenPairFactory, TokenResponse } from './token-pair';
import { SessionStore } from '../sessions/session-store';
import { assertAllowedAddress, ClientAuthenticator } from './client-authenticator';
import { OAuthError } from './oauth-error';
import { ClientCredentialsRequest } from './token-request';

/** The client-credentials grant: authenticate the key, start a session, issue a token pair. */
@Injectable()
export class TokenExchangeService {
  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly sessions: SessionStore,
    private readonly tokens: TokenPairFactory,
    private readonly clock: Clock,
    private readonly lastUsed: LastUsedRecorder,
    private readonly cache: ApiKeyCache,
  ) {}

  async exchange(request: ClientCredentialsRequest, address: string): Promise<TokenResponse> {
    const { key, secretHash } = await this.clients.authenticateSecret(request, address);
    assertAllowedAddress(key, address);

    let scopes = key.scopes;
    if (request.scope !== null) {
      const requested = splitScopeString(request.scope);
      if (requested === null) throw new OAuthError(400, 'invalid_scope', 'The scope parameter is malformed.');
      const outside = requested.filter((s) => !key.scopes.includes(s));
      if (outside.length > 0) {
        throw new OAuthError(400, 'invalid_scope', `The key does not carry: ${outside.join(' ')}.`);
      }
      scopes = requested;
    }
    const scope = formatScopes(scopes);

    const now = this.clock.now();
    const sessionId = newId('ses');
    // The pointer and the session are written in one round trip (ioredis pipelines commands sent in
    // one tick); the token is handed out only once both are recorded.
    const [refresh, created] = await this.tokens.mintRefreshToken(key.id, sessionId, now, (minted) =>
      this.sessions.create({
        apiKeyUuid: key.id,
        sessionId,
        refreshHash: minted.hash,
        refreshExpiresAt: minted.expiresAt,
        scope,
        organizationId: key.organizationId,
        clientId: key.clientId,
        now,
        secretGeneration: key.secretGeneration,
      }),
    );
    // A revoked key (the session script found the revocation marker, whatever the cache said), or
    // a secret a roll ended at once, checked on a row read before it: forget the row, refuse.
    if (!created) {
      this.cache.forget(key);
      throw OAuthError.invalidClient(request.usedBasic);
    }
    this.lastUsed.touch(key.id, new Date(now), secretHash);
    return this.tokens.response(
      {
        sub: toPublicId('key', key.id),
        client_id: key.clientId,
        org_id: toPublicId('org', key.organizationId),
        scope,
        sid: sessionId,
        allowedIps: key.allowedIps,
        notAfterMs: key.expiresAt?.getTime(),
      },
      refresh,
      now,
    );
  }
}

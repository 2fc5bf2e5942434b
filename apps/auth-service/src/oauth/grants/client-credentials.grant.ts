import { Injectable } from '@nestjs/common';
import { formatScopes, newId, splitScopeString, toPublicId } from '@invoicing/contracts';
import { ApiKeyCache } from '../../keys/api-key-cache';
import { LastUsedRecorder } from '../../keys/last-used-recorder';
import { Clock } from '../../common/clock';
import { SessionStore } from '../../sessions/session-store';
import { assertAllowedAddress, ClientAuthenticator } from '../client-authenticator';
import { InvalidClient, InvalidRequest, InvalidScope } from '../oauth-errors';
import { ClientCredentials, OAuthParams, param, readClientCredentials, required } from '../oauth-params';
import { TokenPairFactory, TokenResponse } from '../token-pair';
import type { Grant } from './grant';

/** `grant_type=client_credentials` (RFC 6749 section 4.4): the key's credentials, and what it asks for. */
export interface ClientCredentialsRequest extends ClientCredentials {
  /** Requested scopes (a subset of the key's), or null for all of them. */
  scope: string | null;
}

/**
 * The grant's parameters: the client credentials in the body or in an HTTP Basic header (exactly
 * one of the two; required), and an optional `scope`.
 */
export function parseClientCredentialsRequest(params: OAuthParams, authorization: string | undefined): ClientCredentialsRequest {
  const scope = param(params, 'scope');
  if (authorization === undefined) {
    // Both are required in the body; named in the error so the integrator sees which one is missing.
    return { clientId: required(params, 'client_id'), clientSecret: required(params, 'client_secret'), usedBasic: false, scope: scope || null };
  }
  const client = readClientCredentials(params, authorization);
  if (!client) throw new InvalidRequest('The Authorization header must use the Basic scheme.');
  return { clientId: client.clientId, clientSecret: client.clientSecret, usedBasic: client.usedBasic, scope: scope || null };
}

/** The client-credentials grant: authenticate the key, start a session, issue a token pair. */
@Injectable()
export class ClientCredentialsGrant implements Grant {
  readonly grantType = 'client_credentials';

  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly sessions: SessionStore,
    private readonly tokens: TokenPairFactory,
    private readonly clock: Clock,
    private readonly lastUsed: LastUsedRecorder,
    private readonly cache: ApiKeyCache,
  ) {}

  handle(params: OAuthParams, authorization: string | undefined, address: string): Promise<TokenResponse> {
    return this.issue(parseClientCredentialsRequest(params, authorization), address);
  }

  async issue(request: ClientCredentialsRequest, address: string): Promise<TokenResponse> {
    const { key, secretHash } = await this.clients.authenticateSecret(request, address);
    assertAllowedAddress(key, address);

    let scopes = key.scopes;
    if (request.scope !== null) {
      const requested = splitScopeString(request.scope);
      if (requested === null) throw new InvalidScope('The scope parameter is malformed.');
      const outside = requested.filter((s) => !key.scopes.includes(s));
      if (outside.length > 0) throw new InvalidScope(`The key does not carry: ${outside.join(' ')}.`);
      scopes = requested;
    }
    const scope = formatScopes(scopes);

    const now = this.clock.now();
    const sessionId = newId('ses');
    const refresh = this.tokens.mintRefreshToken(now);
    // The store records the session and the new token's pointer together (SessionStore.create); the
    // token is handed out only once both are.
    const created = await this.sessions.create({
      apiKeyUuid: key.id,
      sessionId,
      refreshHash: refresh.hash,
      refreshExpiresAt: refresh.expiresAt,
      scope,
      organizationId: key.organizationId,
      clientId: key.clientId,
      now,
      secretGeneration: key.secretGeneration,
    });
    // A revoked key (the session script found the revocation marker, whatever the cache said), or
    // a secret a roll ended at once, checked on a row read before it: forget the row, refuse.
    if (!created) {
      this.cache.forget(key);
      throw InvalidClient.of(request.usedBasic);
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

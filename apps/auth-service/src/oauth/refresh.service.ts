import { Injectable } from '@nestjs/common';
import { formatScopes, splitScopeString, toPublicId } from '@invoicing/contracts';
import { uuidv7 } from 'uuidv7';
import { ApiKeyCache } from '../keys/api-key-cache';
import { LastUsedRecorder } from '../keys/last-used-recorder';
import { Clock } from '../common/clock';
import { hashCredentialHex, isWellFormedRefreshToken } from '../keys/credential-format';
import { TokenPairFactory, TokenResponse } from './token-pair';
import { RevocationOutbox } from '../revocation/revocation-outbox.service';
import { SessionPointer, SessionStore } from '../sessions/session-store';
import { assertAllowedAddress, ClientAuthenticator } from './client-authenticator';
import { isUsable } from '../keys/api-key.entity';
import { OAuthError } from './oauth-error';
import type { RefreshGrantRequest } from './token-request';

/** What the token endpoint adds to a plain refresh; `/api/v1/auth/refresh` passes none of it. */
export interface RefreshOptions {
  /** The authenticated key: the refresh token must belong to it. */
  clientKeyUuid?: string;
  /** Requested scopes, a subset of the session's (RFC 6749 section 6); null or absent for all. */
  scope?: string | null;
  /** The secret the client authenticated with (its hash), credited with this use. */
  secretHash?: Buffer;
}

/** Where a refresh comes from: the key's allowlist is checked against it before the rotation. */
export interface RefreshOrigin {
  address: string;
}

/**
 * Refresh-token rotation. Each token works once; presenting a spent one revokes every session of
 * its API key at once (atomically, in the rotation script) and publishes the revocation.
 *
 * `/api/v1/auth/refresh` and `grant_type=refresh_token` at the token endpoint both end in
 * {@link refresh}: one rotation, one reuse rule (ADR 0016). The grant only adds checks that run
 * before the rotation script, so a refused grant spends nothing.
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
    private readonly clients: ClientAuthenticator,
  ) {}

  /**
   * `grant_type=refresh_token` at the token endpoint. Credentials, when sent, are verified first
   * (401 `invalid_client` and throttling, as for the client-credentials grant).
   */
  async refreshGrant(request: RefreshGrantRequest, address: string): Promise<TokenResponse> {
    const client = request.client ? await this.clients.authenticateSecret(request.client, address) : null;
    return this.refresh(request.refreshToken, { address }, { clientKeyUuid: client?.key.id, scope: request.scope, secretHash: client?.secretHash });
  }

  async refresh(refreshToken: string, origin: RefreshOrigin, options: RefreshOptions = {}): Promise<TokenResponse> {
    if (!isWellFormedRefreshToken(refreshToken)) throw OAuthError.invalidGrant();
    const requested = options.scope ? splitScopeString(options.scope) : null;
    if (options.scope && requested === null) throw new OAuthError(400, 'invalid_scope', 'The scope parameter is malformed.');
    const presentedHash = hashCredentialHex(refreshToken);
    const pointer = await this.sessions.findPointer(presentedHash);
    if (!pointer) throw OAuthError.invalidGrant();
    // Another key's token: refused from its pointer alone, before the rotation script, so it is
    // neither spent nor counted as reuse (a client cannot revoke another key's sessions this way).
    if (options.clientKeyUuid !== undefined && pointer.apiKeyUuid !== options.clientKeyUuid) throw OAuthError.invalidGrant();
    // The scope check also runs before the rotation: a refused scope spends nothing.
    const narrowed = requested ? await this.narrowScope(pointer, requested) : null;
    // A revoked key's sessions are gone already (the rotation script would answer 'invalid'); this
    // also refuses a key whose revocation Redis has lost, once the cache has read Postgres again,
    // and an expired key from the instant of its expiry (its sessions are left to lapse).
    const key = await this.apiKeys.findById(pointer.apiKeyUuid);
    const now = this.clock.now();
    if (!key || !isUsable(key, now)) throw OAuthError.invalidGrant();
    // Outside the allowlist: refused before the rotation, so the refresh token is not spent, and a
    // spent one presented from outside does not set off the reuse revocation either: an outsider
    // holding an old token cannot end the owner's sessions with it (ADR 0023).
    assertAllowedAddress(key, origin.address);

    const [next, result] = await this.tokens.mintRefreshToken(pointer.apiKeyUuid, pointer.sessionId, now, (minted) =>
      this.sessions.rotate({
        pointer,
        presentedHash,
        newHash: minted.hash,
        newExpiresAt: minted.expiresAt,
        now,
        eventId: uuidv7(),
        // Written only if this is a reuse (the audit record names the key and where it came from).
        actor: { kind: 'api_key', id: null, address: origin.address },
      }),
    );
    switch (result.kind) {
      case 'rotated':
        this.lastUsed.touch(pointer.apiKeyUuid, new Date(now), options.secretHash ?? null);
        return this.tokens.response(
          {
            sub: toPublicId('key', pointer.apiKeyUuid),
            client_id: result.clientId,
            org_id: toPublicId('org', result.organizationId),
            scope: narrowed ?? result.scope,
            sid: pointer.sessionId,
            allowedIps: key.allowedIps,
            notAfterMs: key.expiresAt?.getTime(),
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

  /**
   * RFC 6749 section 6: a refresh may ask for fewer scopes than the session was granted. The access
   * token carries the narrower set; the session (and so the next refresh token) keeps its own.
   */
  private async narrowScope(pointer: SessionPointer, requested: string[]): Promise<string | null> {
    const granted = await this.sessions.sessionScope(pointer);
    // A session that is gone: the rotation script gives the right answer (invalid or reuse).
    if (granted === null) return null;
    const grantedSet = new Set(granted.split(' '));
    const outside = requested.filter((s) => !grantedSet.has(s));
    if (outside.length > 0) throw new OAuthError(400, 'invalid_scope', `The session was not granted: ${outside.join(' ')}.`);
    return formatScopes(requested);
  }
}

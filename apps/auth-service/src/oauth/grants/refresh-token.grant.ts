import { Injectable } from '@nestjs/common';
import { formatScopes, splitScopeString, toPublicId } from '@invoicing/contracts';
import { uuidv7 } from 'uuidv7';
import { ApiKeyCache } from '../../keys/api-key-cache';
import { isUsable } from '../../keys/api-key.entity';
import { hashCredentialHex, isWellFormedRefreshToken } from '../../keys/credential-format';
import { LastUsedRecorder } from '../../keys/last-used-recorder';
import { Clock } from '../../common/clock';
import { RevocationOutbox } from '../../revocation/revocation-outbox.service';
import { SessionPointer, SessionStore } from '../../sessions/session-store';
import { assertAllowedAddress, ClientAuthenticator } from '../client-authenticator';
import { InvalidGrant, InvalidScope, UnsupportedGrantType } from '../oauth-errors';
import { asParams, ClientCredentials, OAuthParams, param, readClientCredentials, required } from '../oauth-params';
import { TokenPairFactory, TokenResponse } from '../token-pair';
import type { Grant } from './grant';

/** `grant_type=refresh_token` at the token endpoint (RFC 6749 section 6). */
export interface RefreshTokenRequest {
  refreshToken: string;
  /** Requested scopes (a subset of the session's), or null for all of them. */
  scope: string | null;
  /** Checked when sent (the token must then belong to that key); null when the client sent none. */
  client: ClientCredentials | null;
}

/** What the token endpoint adds to a plain refresh; `/api/v1/auth/refresh` passes none of it. */
export interface RefreshOptions {
  /** The authenticated key: the refresh token must belong to it. */
  clientKeyUuid?: string;
  /** Requested scopes, a subset of the session's (RFC 6749 section 6); null or absent for all. */
  scope?: string | null;
  /** The secret the client authenticated with (its hash), credited with this use. */
  secretHash?: Buffer;
}

/**
 * The grant's parameters: `refresh_token` (required), an optional `scope`, and client
 * authentication, checked when sent (so a client that authenticates everywhere, as generic OAuth
 * libraries do, and one that does not, as `/api/v1/auth/refresh` allows, both work).
 */
export function parseRefreshTokenRequest(params: OAuthParams, authorization: string | undefined): RefreshTokenRequest {
  const refreshToken = required(params, 'refresh_token');
  const scope = param(params, 'scope') || null;
  return { refreshToken, scope, client: readClientCredentials(params, authorization) };
}

/**
 * `POST /api/v1/auth/refresh`, the grant's own door from before ADR 0016: `{refresh_token}` and no
 * client authentication; `grant_type` may be sent, and then must be `refresh_token`.
 */
export function parseRefreshEndpointRequest(body: unknown): string {
  const params = asParams(body);
  const grantType = param(params, 'grant_type');
  if (grantType !== undefined && grantType !== 'refresh_token') {
    throw new UnsupportedGrantType('This endpoint takes the refresh_token grant only.');
  }
  return required(params, 'refresh_token');
}

/**
 * The refresh-token grant: rotation. Each token works once; presenting a spent one revokes every
 * session of its API key at once (atomically, in the rotation script) and publishes the revocation.
 *
 * `/api/v1/auth/refresh` and `grant_type=refresh_token` at the token endpoint both end in
 * {@link refresh}: one rotation, one reuse rule (ADR 0016). The grant only adds checks that run
 * before the rotation script, so a refused grant spends nothing.
 */
@Injectable()
export class RefreshTokenGrant implements Grant {
  readonly grantType = 'refresh_token';

  constructor(
    private readonly sessions: SessionStore,
    private readonly tokens: TokenPairFactory,
    private readonly outbox: RevocationOutbox,
    private readonly clock: Clock,
    private readonly apiKeys: ApiKeyCache,
    private readonly lastUsed: LastUsedRecorder,
    private readonly clients: ClientAuthenticator,
  ) {}

  handle(params: OAuthParams, authorization: string | undefined, address: string): Promise<TokenResponse> {
    return this.issue(parseRefreshTokenRequest(params, authorization), address);
  }

  /** `POST /api/v1/auth/refresh`. */
  handleRefreshEndpoint(body: unknown, address: string): Promise<TokenResponse> {
    return this.refresh(parseRefreshEndpointRequest(body), address);
  }

  /**
   * `grant_type=refresh_token` at the token endpoint. Credentials, when sent, are verified first
   * (401 `invalid_client` and throttling, as for the client-credentials grant).
   */
  async issue(request: RefreshTokenRequest, address: string): Promise<TokenResponse> {
    const client = request.client ? await this.clients.authenticateSecret(request.client, address) : null;
    return this.refresh(request.refreshToken, address, { clientKeyUuid: client?.key.id, scope: request.scope, secretHash: client?.secretHash });
  }

  /** The rotation, from a client at `address` (the key's allowlist is checked against it first). */
  async refresh(refreshToken: string, address: string, options: RefreshOptions = {}): Promise<TokenResponse> {
    if (!isWellFormedRefreshToken(refreshToken)) throw InvalidGrant.unknown();
    const requested = options.scope ? splitScopeString(options.scope) : null;
    if (options.scope && requested === null) throw new InvalidScope('The scope parameter is malformed.');
    const presentedHash = hashCredentialHex(refreshToken);
    const pointer = await this.sessions.findPointer(presentedHash);
    if (!pointer) throw InvalidGrant.unknown();
    // Another key's token: refused from its pointer alone, before the rotation script, so it is
    // neither spent nor counted as reuse (a client cannot revoke another key's sessions this way).
    if (options.clientKeyUuid !== undefined && pointer.apiKeyUuid !== options.clientKeyUuid) throw InvalidGrant.unknown();
    // The scope check also runs before the rotation: a refused scope spends nothing.
    const narrowed = requested ? await this.narrowScope(pointer, requested) : null;
    // A revoked key's sessions are gone already (the rotation script would answer 'invalid'); this
    // also refuses a key whose revocation Redis has lost, once the cache has read Postgres again,
    // and an expired key from the instant of its expiry (its sessions are left to lapse).
    const key = await this.apiKeys.findById(pointer.apiKeyUuid);
    const now = this.clock.now();
    if (!key || !isUsable(key, now)) throw InvalidGrant.unknown();
    // Outside the allowlist: refused before the rotation, so the refresh token is not spent, and a
    // spent one presented from outside does not set off the reuse revocation either: an outsider
    // holding an old token cannot end the owner's sessions with it (ADR 0023).
    assertAllowedAddress(key, address);

    const next = this.tokens.mintRefreshToken(now);
    // One atomic step in the store: the presented token spent and the next one recorded (its pointer
    // written beside the script, SessionStore.rotate), or the reuse revocation, or a refusal.
    const result = await this.sessions.rotate({
      pointer,
      presentedHash,
      newHash: next.hash,
      newExpiresAt: next.expiresAt,
      now,
      eventId: uuidv7(),
      // Written only if this is a reuse (the audit record names the key and where it came from).
      actor: { kind: 'api_key', id: null, address },
    });
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
        throw new InvalidGrant('The refresh token was already used; every session of this API key is revoked.');
      case 'expired':
        throw new InvalidGrant('The refresh token expired.');
      default:
        throw InvalidGrant.unknown();
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
    if (outside.length > 0) throw new InvalidScope(`The session was not granted: ${outside.join(' ')}.`);
    return formatScopes(requested);
  }
}

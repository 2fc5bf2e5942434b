import { Inject, Injectable, Logger } from '@nestjs/common';
import { AccessTokenVerifier, isTokenRefusal } from '@invoicing/auth-guard';
import { ACCESS_TOKEN_TTL_SECONDS, toPublicId } from '@invoicing/contracts';
import { uuidv7 } from 'uuidv7';
import type { ApiKeyEntity } from '../keys/api-key.entity';
import { Clock } from '../common/clock';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { hashCredentialHex, isWellFormedRefreshToken } from '../keys/credential-format';
import { SessionStore } from '../sessions/session-store';
import { ClientAuthenticator } from './client-authenticator';
import { asParams, ClientCredentials, param, required, requireClientCredentials } from './oauth-params';
import { RevocationOutbox } from '../revocation/revocation-outbox.service';

/**
 * How long "this session was revoked by its client" is remembered, so that revoking it again
 * publishes nothing: as long as an access token of it can be accepted anywhere (its lifetime plus
 * the clock skew the resource services keep revocations for).
 */
const REVOKED_SESSION_MARKER_MS = (ACCESS_TOKEN_TTL_SECONDS + 5 * 60) * 1000;
const SESSION_ID = /^ses_[0-9a-f]{32}$/;

export const TOKEN_TYPE_HINTS = ['refresh_token', 'access_token'] as const;
export type TokenTypeHint = (typeof TOKEN_TYPE_HINTS)[number];

/** An RFC 7009 revocation request. */
export interface RevocationRequest {
  token: string;
  /** The client's guess; unknown values are ignored, as RFC 7009 section 2.1 allows. */
  tokenTypeHint: TokenTypeHint | null;
  client: ClientCredentials;
}

/**
 * Reads an RFC 7009 revocation request: client authentication (required: 401 `invalid_client`
 * with the Basic challenge otherwise), `token`, and an optional `token_type_hint`.
 */
export function parseRevocationRequest(body: unknown, authorization: string | undefined): RevocationRequest {
  const params = asParams(body);
  const client = requireClientCredentials(params, authorization);
  const token = required(params, 'token');
  const hint = param(params, 'token_type_hint');
  return {
    token,
    tokenTypeHint: (TOKEN_TYPE_HINTS as readonly string[]).includes(hint ?? '') ? (hint as TokenTypeHint) : null,
    client,
  };
}

/** What a revocation did; the endpoint answers 200 either way (RFC 7009 section 2.2). */
export type RevocationOutcome = 'revoked' | 'nothing_to_revoke';

/**
 * RFC 7009 token revocation. The client authenticates; a token of its own key ends the session it
 * belongs to (refresh token: through its pointer; access token: through its `sid`), through the
 * same session script, outbox and Kafka event as a refresh-token reuse, with reason
 * `session_revoked`. Anything else (unknown, malformed, expired, another key's) changes nothing and
 * is answered exactly like a success, so the endpoint reveals nothing about other keys' tokens.
 *
 * The two kinds of token are told apart by their form (a checksummed `rt_live_` string or a JWT),
 * so `token_type_hint` never costs or saves a lookup and a wrong hint changes nothing.
 */
@Injectable()
export class TokenRevocationService {
  private readonly logger = new Logger(TokenRevocationService.name);
  private readonly verifier: AccessTokenVerifier;

  constructor(
    private readonly clients: ClientAuthenticator,
    private readonly sessions: SessionStore,
    private readonly outbox: RevocationOutbox,
    private readonly clock: Clock,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    // Verified as a resource service would (key ring, algorithm, typ, iss, aud, exp): a token that
    // no service would accept has no session worth ending. No cache: revocations are rare.
    this.verifier = new AccessTokenVerifier({
      keys: config.keyRing.keys,
      issuer: config.JWT_ISSUER,
      audience: config.JWT_AUDIENCE,
      cacheSize: 0,
    });
  }

  async revoke(request: RevocationRequest, address: string): Promise<RevocationOutcome> {
    const key = await this.clients.authenticate(request.client, address);
    const sessionId = isWellFormedRefreshToken(request.token)
      ? await this.sessionOfRefreshToken(key, request.token)
      : this.sessionOfAccessToken(key, request.token);
    if (sessionId === null) return 'nothing_to_revoke';
    const pending = await this.sessions.revokeSession({
      apiKeyUuid: key.id,
      sessionId,
      organizationId: key.organizationId,
      clientId: key.clientId,
      // A refresh token whose session is gone has nothing left to end (an expired or evicted
      // session's access tokens live out their hour by design, ADR 0014); an access token that still
      // verifies is live, and its holder asked for exactly it to stop working.
      evenIfGone: !isWellFormedRefreshToken(request.token),
      now: this.clock.now(),
      eventId: uuidv7(),
      markerTtlMs: REVOKED_SESSION_MARKER_MS,
    });
    if (!pending) return 'nothing_to_revoke';
    // The session is already ended in Redis and its event recorded there; should the outbox insert
    // fail, the sweeper publishes it within seconds. So the answer stays 200 (the revocation has
    // happened), unlike a key revocation, whose Postgres status the caller reads back.
    if (!(await this.outbox.enqueue(pending))) {
      this.logger.warn({ msg: 'session revoked; its event is pending and the sweeper will publish it', event_id: pending.event.event_id });
    }
    return 'revoked';
  }

  private async sessionOfRefreshToken(key: ApiKeyEntity, token: string): Promise<string | null> {
    const pointer = await this.sessions.findPointer(hashCredentialHex(token));
    return pointer && pointer.apiKeyUuid === key.id ? pointer.sessionId : null;
  }

  private sessionOfAccessToken(key: ApiKeyEntity, token: string): string | null {
    const claims = this.verifier.check(token);
    if (isTokenRefusal(claims)) return null;
    if (claims.sub !== toPublicId('key', key.id) || !SESSION_ID.test(claims.sid)) return null;
    return claims.sid;
  }
}

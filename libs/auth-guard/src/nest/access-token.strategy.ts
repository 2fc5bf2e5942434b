import { Injectable } from '@nestjs/common';
import type { AccessTokenClaims } from '@invoicing/contracts';
import { PassportStrategy } from '@nestjs/passport';
import { AccessTokenVerifier, isTokenRefusal } from '../verification/access-token-verifier';
import { RevocationView } from '../revocation/revocation-view';
import { BearerFailure, bearerFailure, HeaderBearerStrategy, readBearer } from './bearer.strategy';
import type { CallerIdentity } from './caller';

export const ACCESS_TOKEN_STRATEGY = 'access-token';

/** Signature and claims, then the in-memory revocation view: no network I/O on this path. */
@Injectable()
export class AccessTokenStrategy extends PassportStrategy(HeaderBearerStrategy, ACCESS_TOKEN_STRATEGY) {
  constructor(
    private readonly verifier: AccessTokenVerifier,
    private readonly revocations: RevocationView,
  ) {
    super();
  }

  /**
   * The verifier's cache hands back the same claims object for a token it has seen, so the caller
   * built from it is kept beside it: a repeated token costs no allocation here.
   */
  private readonly callers = new WeakMap<AccessTokenClaims, CallerIdentity>();

  /**
   * The whole check for one request, synchronously: what passport runs through `authenticate` and
   * `validate`, without passport's per-request context (see AccessTokenGuard).
   */
  authenticateHeader(header: string | undefined): CallerIdentity | BearerFailure {
    const token = readBearer(header);
    if (typeof token !== 'string') return token;
    const result = this.validate(token);
    return Array.isArray(result) ? bearerFailure(result[1]) : result;
  }

  validate(token: string): CallerIdentity | [false, string] {
    // check() answers a refused token without an exception: the 401 path is ordinary traffic.
    const claims = this.verifier.check(token);
    if (isTokenRefusal(claims)) return [false, claims.description];
    // Checked on every request, never cached: a revocation applies to tokens already seen.
    if (this.revocations.isRevoked(claims)) return [false, 'The access token has been revoked.'];
    let caller = this.callers.get(claims);
    if (!caller || caller.accessToken !== token) {
      caller = {
        organizationId: claims.org_id,
        apiKeyId: claims.sub,
        clientId: claims.client_id,
        sessionId: claims.sid,
        scopes: new Set(claims.scope.split(' ')),
        tokenId: claims.jti,
        accessToken: token,
      };
      this.callers.set(claims, caller);
    }
    return caller;
  }
}

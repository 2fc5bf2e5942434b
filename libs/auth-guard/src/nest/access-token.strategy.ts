import { Injectable } from '@nestjs/common';
import { PassportStrategy } from '@nestjs/passport';
import { AccessTokenVerifier, InvalidTokenError } from '../verification/access-token-verifier';
import { RevocationView } from '../revocation/revocation-view';
import { HeaderBearerStrategy } from './bearer.strategy';
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

  validate(token: string): CallerIdentity | [false, string] {
    let claims;
    try {
      claims = this.verifier.verify(token);
    } catch (e) {
      if (e instanceof InvalidTokenError) return [false, e.description];
      throw e;
    }
    if (this.revocations.isRevoked(claims)) return [false, 'The access token has been revoked.'];
    return {
      organizationId: claims.org_id,
      apiKeyId: claims.sub,
      clientId: claims.client_id,
      sessionId: claims.sid,
      scopes: new Set(claims.scope.split(' ')),
      tokenId: claims.jti,
      accessToken: token,
    };
  }
}

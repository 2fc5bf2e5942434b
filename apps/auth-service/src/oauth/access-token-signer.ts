import { Inject, Injectable } from '@nestjs/common';
import { ACCESS_TOKEN_ALG, ACCESS_TOKEN_TTL_SECONDS, ACCESS_TOKEN_TYP, AccessTokenClaims, newId } from '@invoicing/contracts';
import { createSigner } from 'fast-jwt';
import { AUTH_CONFIG, AuthConfig } from '../config/config';

export type AccessTokenSubject = Pick<AccessTokenClaims, 'sub' | 'client_id' | 'org_id' | 'scope' | 'sid'>;

/** Signs RFC 9068 access tokens with the ring's signing key; `iat` comes from the injectable clock. */
@Injectable()
export class AccessTokenSigner {
  private readonly sign: (payload: Record<string, unknown>) => string;

  constructor(@Inject(AUTH_CONFIG) private readonly config: AuthConfig) {
    const { signingKid, keys } = config.keyRing;
    this.sign = createSigner({
      key: keys.get(signingKid)!,
      algorithm: ACCESS_TOKEN_ALG,
      kid: signingKid,
      header: { alg: ACCESS_TOKEN_ALG, typ: ACCESS_TOKEN_TYP },
      // iat and exp come in the payload (from the injectable clock); fast-jwt keeps a given iat.
    });
  }

  issue(subject: AccessTokenSubject, nowMs: number): { token: string; expiresIn: number } {
    const iat = Math.floor(nowMs / 1000);
    const claims: AccessTokenClaims = {
      iss: this.config.JWT_ISSUER,
      aud: this.config.JWT_AUDIENCE,
      ...subject,
      jti: newId('evt').replace(/^evt_/, ''),
      iat,
      exp: iat + ACCESS_TOKEN_TTL_SECONDS,
    };
    return { token: this.sign(claims as unknown as Record<string, unknown>), expiresIn: ACCESS_TOKEN_TTL_SECONDS };
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { ACCESS_TOKEN_ALG, ACCESS_TOKEN_TYP, AccessTokenClaims, newId } from '@invoicing/contracts';
import { createSigner } from 'fast-jwt';
import { AUTH_CONFIG, AuthConfig } from '../config/config';

export type AccessTokenSubject = Pick<AccessTokenClaims, 'sub' | 'client_id' | 'org_id' | 'scope' | 'sid'> & {
  /** The key's allowlist; carried in the token (claim `allowed_ips`) only when it is not empty. */
  allowedIps?: readonly string[];
  /** The key's expiry (ms), if it has one: no token outlives its key, even if its event were late. */
  notAfterMs?: number | null;
};

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
    // RFC 6749 section 5.1: expires_in says the token's actual lifetime, shorter for a key that
    // expires within the hour.
    const lifetime = this.config.ACCESS_TOKEN_LIFETIME_SECONDS;
    const exp = subject.notAfterMs ? Math.max(iat + 1, Math.min(iat + lifetime, Math.floor(subject.notAfterMs / 1000))) : iat + lifetime;
    const claims: AccessTokenClaims = {
      iss: this.config.JWT_ISSUER,
      aud: this.config.JWT_AUDIENCE,
      sub: subject.sub,
      client_id: subject.client_id,
      org_id: subject.org_id,
      scope: subject.scope,
      sid: subject.sid,
      jti: newId('evt').replace(/^evt_/, ''),
      iat,
      exp,
    };
    // The list travels in the token so that every resource service enforces it with no lookup
    // (ADR 0023); a key without one issues the same tokens as before.
    if (subject.allowedIps && subject.allowedIps.length > 0) claims.allowed_ips = [...subject.allowedIps];
    return { token: this.sign(claims as unknown as Record<string, unknown>), expiresIn: exp - iat };
  }
}

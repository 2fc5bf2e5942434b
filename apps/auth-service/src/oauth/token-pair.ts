import { Injectable } from '@nestjs/common';
import { REFRESH_TOKEN_TTL_SECONDS } from '@invoicing/contracts';
import { hashCredentialHex, newRefreshToken } from '../keys/credential-format';
import { AccessTokenSigner, AccessTokenSubject } from './access-token-signer';

/** The body of a successful token or refresh response (RFC 6749 section 5.1). */
export interface TokenResponse {
  access_token: string;
  token_type: 'Bearer';
  expires_in: number;
  refresh_token: string;
  scope: string;
}

export interface MintedRefreshToken {
  token: string;
  hash: string;
  expiresAt: number;
}

/**
 * Mints refresh tokens and assembles token responses, with no I/O: recording a token (its session
 * and its pointer) is the session store's alone (SessionStore.create and rotate, which the grants
 * call), so the factory no longer calls back into its caller to write.
 */
@Injectable()
export class TokenPairFactory {
  readonly refreshTtlMs = REFRESH_TOKEN_TTL_SECONDS * 1000;

  constructor(private readonly signer: AccessTokenSigner) {}

  /** A new refresh token, its hash (all the store keeps) and its expiry, 30 days from `now`. */
  mintRefreshToken(now: number): MintedRefreshToken {
    const token = newRefreshToken();
    return { token, hash: hashCredentialHex(token), expiresAt: now + this.refreshTtlMs };
  }

  response(subject: AccessTokenSubject, refresh: MintedRefreshToken, now: number): TokenResponse {
    const access = this.signer.issue(subject, now);
    return {
      access_token: access.token,
      token_type: 'Bearer',
      expires_in: access.expiresIn,
      refresh_token: refresh.token,
      scope: subject.scope,
    };
  }
}

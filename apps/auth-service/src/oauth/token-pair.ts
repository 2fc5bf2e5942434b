import { Injectable } from '@nestjs/common';
import { REFRESH_TOKEN_TTL_SECONDS } from '@invoicing/contracts';
import { hashCredentialHex, newRefreshToken } from '../keys/credential-format';
import { SessionStore } from '../sessions/session-store';
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

/** Mints refresh tokens (pointer recorded first) and assembles token responses. */
@Injectable()
export class TokenPairFactory {
  readonly refreshTtlMs = REFRESH_TOKEN_TTL_SECONDS * 1000;

  constructor(
    private readonly sessions: SessionStore,
    private readonly signer: AccessTokenSigner,
  ) {}

  /**
   * A new refresh token, its pointer recorded in Redis together with `record` (the session script that
   * names its hash): both are sent at once and both must succeed before the token may be handed out,
   * so no token leaves that the store does not know. A pointer left behind by a failed script points
   * at a session that never names its hash, so it never validates.
   */
  async mintRefreshToken<T>(
    apiKeyUuid: string,
    sessionId: string,
    now: number,
    record: (minted: MintedRefreshToken) => Promise<T>,
  ): Promise<[MintedRefreshToken, T]> {
    const token = newRefreshToken();
    const minted = { token, hash: hashCredentialHex(token), expiresAt: now + this.refreshTtlMs };
    const [, recorded] = await Promise.all([
      this.sessions.putPointer(minted.hash, { apiKeyUuid, sessionId }, this.refreshTtlMs),
      record(minted),
    ]);
    return [minted, recorded];
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

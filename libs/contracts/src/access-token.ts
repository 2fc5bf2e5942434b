/** Access-token lifetime (docs/api.md section 4: 1 hour; `expires_in` is 3600). */
export const ACCESS_TOKEN_TTL_SECONDS = 3600;
/** Refresh-token lifetime (docs/api.md section 4: 30 days from issue). */
export const REFRESH_TOKEN_TTL_SECONDS = 30 * 24 * 3600;
/** JOSE header `typ` of access tokens (RFC 9068 section 2.1). */
export const ACCESS_TOKEN_TYP = 'at+jwt';
/** The only signing algorithm accepted anywhere (docs/api.md section 5). */
export const ACCESS_TOKEN_ALG = 'HS256';

/** How each credential the auth service mints begins (docs/api.md section 3): an API Key, a Secret Key, a refresh token. */
export const CLIENT_ID_PREFIX = 'ak_live_';
export const SECRET_KEY_PREFIX = 'sk_live_';
export const REFRESH_TOKEN_PREFIX = 'rt_live_';

/** Claims of an access token (RFC 9068 plus `org_id` and `sid`). */
export interface AccessTokenClaims {
  iss: string;
  aud: string;
  /** API key id (`key_...`). */
  sub: string;
  client_id: string;
  org_id: string;
  /** Space-separated scopes. */
  scope: string;
  /** Session (refresh-token family) id (`ses_...`). */
  sid: string;
  jti: string;
  iat: number;
  exp: number;
  /**
   * The key's IP allowlist when the token was issued (canonical entries, see parseAllowedIps); absent
   * when the key has none. Resource services refuse the token from any other client address, and
   * apply a later change of the list through the revocation topic (ADR 0023).
   */
  allowed_ips?: string[];
}

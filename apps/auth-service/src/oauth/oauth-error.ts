/** RFC 6749 section 5.2 error codes this service sends. */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'unauthorized_client'
  | 'temporarily_unavailable'
  | 'server_error';

/** An RFC 6749 error response: `{"error", "error_description"}` with the given status and headers. */
export class OAuthError extends Error {
  constructor(
    readonly status: number,
    readonly error: OAuthErrorCode,
    readonly description: string,
    readonly headers: Record<string, string> = {},
  ) {
    super(description);
    this.name = 'OAuthError';
  }

  static invalidRequest(description: string): OAuthError {
    return new OAuthError(400, 'invalid_request', description);
  }

  /** One identical answer for an unknown client, a wrong secret and a revoked key. */
  static invalidClient(usedBasic: boolean): OAuthError {
    return new OAuthError(
      401,
      'invalid_client',
      'Client authentication failed.',
      usedBasic ? { 'WWW-Authenticate': 'Basic realm="invoicing", charset="UTF-8"' } : {},
    );
  }

  static invalidGrant(description = 'The refresh token is invalid, expired, revoked or already used.'): OAuthError {
    return new OAuthError(400, 'invalid_grant', description);
  }

  /**
   * The client authenticated, but from an address outside its key's allowlist. Only a caller who
   * proved the secret learns of the allowlist; everyone else gets the 401 of a wrong secret.
   */
  static addressNotAllowed(): OAuthError {
    return new OAuthError(400, 'unauthorized_client', "The API key may not be used from this client's address (its allowed_ips).");
  }

  static unavailable(): OAuthError {
    return new OAuthError(503, 'temporarily_unavailable', 'The service is temporarily unavailable; retry shortly.', {
      'Retry-After': '1',
    });
  }
}

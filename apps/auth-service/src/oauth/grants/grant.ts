import type { OAuthParams } from '../oauth-params';
import type { TokenResponse } from '../token-pair';

/**
 * One grant type of the token endpoint (RFC 6749 section 4.4, section 6), in a file of its own with
 * its own parameters, as oidc-provider keeps its grants: the grant reads what it takes (and refuses
 * what it does not, as an OAuthError), does its work, and answers with a token pair. The endpoint
 * only picks the grant by `grant_type` (GrantRegistry).
 */
export interface Grant {
  /** The `grant_type` value this grant answers. */
  readonly grantType: string;
  /**
   * Reads this grant's parameters and client authentication (HTTP Basic or the body) and issues.
   * Refusals of the request itself are thrown synchronously, before any I/O.
   */
  handle(params: OAuthParams, authorization: string | undefined, address: string): Promise<TokenResponse>;
}

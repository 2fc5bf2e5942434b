import { ALL_SCOPES } from '@invoicing/contracts';

/** RFC 8414 authorization server metadata, as this service serves it. */
export interface AuthorizationServerMetadata {
  issuer: string;
  token_endpoint: string;
  revocation_endpoint: string;
  grant_types_supported: string[];
  token_endpoint_auth_methods_supported: string[];
  revocation_endpoint_auth_methods_supported: string[];
  scopes_supported: string[];
  response_types_supported: string[];
  service_documentation: string;
}

/** Well-known path (RFC 8414 section 3); the issuer has no path, so nothing is inserted into it. */
export const AUTHORIZATION_SERVER_METADATA_PATH = '/.well-known/oauth-authorization-server';

/**
 * The metadata for an issuer (JWT_ISSUER: the public base URL, equal to every token's `iss`, which
 * RFC 8414 section 3.3 requires and discovery clients check). No authorization endpoint: the only
 * grants are client_credentials and refresh_token, so `response_types_supported` is empty.
 */
export function buildAuthorizationServerMetadata(issuer: string): AuthorizationServerMetadata {
  // Endpoint URLs are built on the issuer as written, without a doubled slash.
  const base = issuer.replace(/\/+$/, '');
  const clientAuth = ['client_secret_basic', 'client_secret_post'];
  return {
    issuer,
    token_endpoint: `${base}/api/v1/auth/token`,
    revocation_endpoint: `${base}/api/v1/auth/revoke`,
    grant_types_supported: ['client_credentials', 'refresh_token'],
    token_endpoint_auth_methods_supported: clientAuth,
    revocation_endpoint_auth_methods_supported: clientAuth,
    scopes_supported: [...ALL_SCOPES],
    response_types_supported: [],
    service_documentation: `${base}/api/v1/docs`,
  };
}

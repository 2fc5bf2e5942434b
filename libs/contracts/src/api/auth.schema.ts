import { idOf, TIMESTAMP } from './common.schema';

/** `POST /api/v1/auth/token` with `grant_type=client_credentials` (service-spec; JSON or form-encoded). */
export const CLIENT_CREDENTIALS_GRANT_SCHEMA = {
  $id: 'ClientCredentialsGrant',
  type: 'object',
  required: ['grant_type'],
  properties: {
    grant_type: { const: 'client_credentials' },
    client_id: { type: 'string', pattern: '^ak_live_[0-9A-Za-z]+$', description: 'Omit when using HTTP Basic.' },
    client_secret: { type: 'string', pattern: '^sk_live_[0-9A-Za-z]+$', description: 'Omit when using HTTP Basic.' },
    scope: { type: 'string', description: "Space-separated subset of the key's scopes." },
  },
} as const;

/**
 * `POST /api/v1/auth/token` with `grant_type=refresh_token` (RFC 6749 section 6): the same rotation
 * as `/api/v1/auth/refresh`. Client authentication is optional; when sent, it is checked and the
 * refresh token must belong to that key.
 */
export const REFRESH_TOKEN_GRANT_SCHEMA = {
  $id: 'RefreshTokenGrant',
  type: 'object',
  required: ['grant_type', 'refresh_token'],
  properties: {
    grant_type: { const: 'refresh_token' },
    refresh_token: { type: 'string', pattern: '^rt_live_[0-9A-Za-z]+$' },
    scope: { type: 'string', description: "Space-separated subset of the session's scopes, for this access token only." },
    client_id: { type: 'string', pattern: '^ak_live_[0-9A-Za-z]+$', description: 'Optional; omit when using HTTP Basic.' },
    client_secret: { type: 'string', pattern: '^sk_live_[0-9A-Za-z]+$', description: 'Optional; omit when using HTTP Basic.' },
  },
} as const;

/** `POST /api/v1/auth/token`: one of the two grants. */
export const TOKEN_REQUEST_SCHEMA = {
  $id: 'TokenRequest',
  oneOf: [{ $ref: '#/components/schemas/ClientCredentialsGrant' }, { $ref: '#/components/schemas/RefreshTokenGrant' }],
  discriminator: { propertyName: 'grant_type' },
} as const;

/** `POST /api/v1/auth/revoke` (RFC 7009; JSON or form-encoded). Client authentication is required. */
export const REVOCATION_REQUEST_SCHEMA = {
  $id: 'RevocationRequest',
  type: 'object',
  required: ['token'],
  properties: {
    token: { type: 'string', description: 'A refresh token or an access token of the authenticated key.' },
    token_type_hint: { enum: ['refresh_token', 'access_token'], description: 'Optional; the token is recognised by its form either way.' },
    client_id: { type: 'string', pattern: '^ak_live_[0-9A-Za-z]+$', description: 'Omit when using HTTP Basic.' },
    client_secret: { type: 'string', pattern: '^sk_live_[0-9A-Za-z]+$', description: 'Omit when using HTTP Basic.' },
  },
} as const;

/** `GET /.well-known/oauth-authorization-server` (RFC 8414). */
export const AUTHORIZATION_SERVER_METADATA_SCHEMA = {
  $id: 'AuthorizationServerMetadata',
  type: 'object',
  required: [
    'issuer',
    'token_endpoint',
    'revocation_endpoint',
    'grant_types_supported',
    'token_endpoint_auth_methods_supported',
    'revocation_endpoint_auth_methods_supported',
    'scopes_supported',
    'response_types_supported',
    'service_documentation',
  ],
  properties: {
    issuer: { type: 'string', format: 'uri', description: 'Equal to the `iss` claim of every access token.' },
    token_endpoint: { type: 'string', format: 'uri' },
    revocation_endpoint: { type: 'string', format: 'uri' },
    grant_types_supported: { type: 'array', items: { enum: ['client_credentials', 'refresh_token'] } },
    token_endpoint_auth_methods_supported: { type: 'array', items: { enum: ['client_secret_basic', 'client_secret_post'] } },
    revocation_endpoint_auth_methods_supported: { type: 'array', items: { enum: ['client_secret_basic', 'client_secret_post'] } },
    scopes_supported: { type: 'array', items: { type: 'string' } },
    response_types_supported: { type: 'array', maxItems: 0, description: 'No authorization endpoint.' },
    service_documentation: { type: 'string', format: 'uri' },
  },
} as const;

export const REFRESH_REQUEST_SCHEMA = {
  $id: 'RefreshRequest',
  type: 'object',
  required: ['refresh_token'],
  properties: {
    refresh_token: { type: 'string', pattern: '^rt_live_[0-9A-Za-z]+$' },
    grant_type: { const: 'refresh_token', description: 'Optional.' },
  },
} as const;

export const TOKEN_RESPONSE_SCHEMA = {
  $id: 'TokenResponse',
  type: 'object',
  required: ['access_token', 'token_type', 'expires_in', 'refresh_token', 'scope'],
  properties: {
    access_token: { type: 'string', description: 'JWT (RFC 9068), HS256, valid 1 hour.' },
    token_type: { const: 'Bearer' },
    expires_in: { const: 3600 },
    refresh_token: { type: 'string', pattern: '^rt_live_', description: 'Single use, valid 30 days.' },
    scope: { type: 'string', description: 'Granted scopes, space-separated.' },
  },
} as const;

export const OAUTH_ERROR_SCHEMA = {
  $id: 'OAuthError',
  type: 'object',
  required: ['error', 'error_description'],
  properties: {
    error: {
      enum: ['invalid_request', 'invalid_client', 'invalid_grant', 'unsupported_grant_type', 'invalid_scope', 'temporarily_unavailable', 'server_error'],
    },
    error_description: { type: 'string' },
  },
} as const;

export const PROBLEM_SCHEMA = {
  $id: 'Problem',
  type: 'object',
  required: ['type', 'title', 'status', 'detail', 'request_id'],
  properties: {
    type: { type: 'string', format: 'uri' },
    title: { type: 'string' },
    status: { type: 'integer' },
    detail: { type: 'string' },
    request_id: { type: 'string' },
    errors: {
      type: 'array',
      items: {
        type: 'object',
        required: ['field', 'code', 'message'],
        properties: { field: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' } },
      },
    },
  },
} as const;

export const API_KEY_SCHEMA = {
  $id: 'ApiKey',
  type: 'object',
  required: ['object', 'id', 'name', 'client_id', 'scopes', 'status', 'created_at', 'last_used_at', 'revoked_at'],
  properties: {
    object: { const: 'api_key' },
    id: idOf('key'),
    organization_id: idOf('org'),
    name: { type: 'string' },
    client_id: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    status: { enum: ['active', 'revoked'] },
    created_at: TIMESTAMP,
    last_used_at: { type: ['string', 'null'], format: 'date-time' },
    revoked_at: { type: ['string', 'null'], format: 'date-time' },
  },
} as const;

export const CREATED_API_KEY_SCHEMA = {
  $id: 'CreatedApiKey',
  type: 'object',
  required: ['object', 'id', 'name', 'client_id', 'client_secret', 'scopes', 'status', 'created_at'],
  properties: {
    object: { const: 'api_key' },
    id: idOf('key'),
    name: { type: 'string' },
    client_id: { type: 'string' },
    client_secret: { type: 'string', description: 'Shown once, in this response only.' },
    scopes: { type: 'array', items: { type: 'string' } },
    status: { const: 'active' },
    created_at: TIMESTAMP,
  },
} as const;

export const ACCOUNT_SCHEMA = {
  $id: 'Account',
  type: 'object',
  required: ['user', 'organization'],
  properties: {
    user: { type: 'object', properties: { id: idOf('usr'), email: { type: 'string' }, created_at: TIMESTAMP } },
    organization: { type: 'object', properties: { id: idOf('org'), name: { type: 'string' } } },
  },
} as const;

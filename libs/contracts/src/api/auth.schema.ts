import { idOf, TIMESTAMP } from './common.schema';

/** `POST /api/v1/auth/token` (service-spec; JSON or form-encoded). */
export const TOKEN_REQUEST_SCHEMA = {
  $id: 'TokenRequest',
  type: 'object',
  required: ['grant_type'],
  properties: {
    grant_type: { const: 'client_credentials' },
    client_id: { type: 'string', pattern: '^ak_live_[0-9A-Za-z]+$', description: 'Omit when using HTTP Basic.' },
    client_secret: { type: 'string', pattern: '^sk_live_[0-9A-Za-z]+$', description: 'Omit when using HTTP Basic.' },
    scope: { type: 'string', description: "Space-separated subset of the key's scopes." },
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

import { AUDIT_EVENT_TYPES } from '../events/audit-events';
import { idOf, TIMESTAMP } from './common.schema';

/** `POST /api/v1/auth/token` with `grant_type=client_credentials` (docs/api.md section 4; JSON or form-encoded). */
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
    expires_in: { type: 'integer', minimum: 1, maximum: 3600, description: '3600; less for a key that expires within the hour (no token outlives its key).' },
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
      enum: [
        'invalid_request',
        'invalid_client',
        'invalid_grant',
        'unsupported_grant_type',
        'invalid_scope',
        'unauthorized_client',
        'temporarily_unavailable',
        'server_error',
      ],
      description:
        "unauthorized_client: the credentials (or the refresh token) are right, but the request comes from an address outside the API key's allowed_ips. A wrong secret is invalid_client wherever it comes from.",
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

const NULLABLE_TIMESTAMP = { type: ['string', 'null'], format: 'date-time' } as const;

/** A key as the settings API shows it (list, revoke, PATCH); never carries a secret. */
export const API_KEY_SCHEMA = {
  $id: 'ApiKey',
  type: 'object',
  required: [
    'object',
    'id',
    'name',
    'client_id',
    'scopes',
    'status',
    'created_at',
    'last_used_at',
    'revoked_at',
    'expires_at',
    'allowed_ips',
    'secret_last_used_at',
    'previous_secret_expires_at',
    'previous_secret_last_used_at',
    'exposed_at',
    'exposed_url',
  ],
  properties: {
    object: { const: 'api_key' },
    id: idOf('key'),
    organization_id: idOf('org'),
    name: { type: 'string' },
    client_id: { type: 'string' },
    scopes: { type: 'array', items: { type: 'string' } },
    status: {
      enum: ['active', 'revoked', 'expired'],
      description:
        'revoked: revoked in the settings area, or by the platform because its secret was reported public (then exposed_at is set). expired: its expires_at has passed (from that instant on). Only an active key can be rolled or changed.',
    },
    created_at: TIMESTAMP,
    last_used_at: { ...NULLABLE_TIMESTAMP, description: 'Last token exchange with either secret, or refresh. Recorded every few seconds, not per request.' },
    revoked_at: NULLABLE_TIMESTAMP,
    expires_at: { ...NULLABLE_TIMESTAMP, description: 'When the key stops authenticating; null: never. Fixed for the life of the key.' },
    allowed_ips: {
      type: 'array',
      items: { type: 'string' },
      description:
        'IPv4/IPv6 addresses and CIDR blocks the key may be used from, in canonical form (IPv6 in RFC 5952 form, a single address without /32 or /128); empty: any address. Checked at the token endpoints and carried in access tokens (claim allowed_ips), which every resource service checks.',
    },
    secret_last_used_at: { ...NULLABLE_TIMESTAMP, description: 'Last token exchange with the current secret; null after a roll until the new secret is used.' },
    previous_secret_expires_at: {
      ...NULLABLE_TIMESTAMP,
      description: 'While the secret replaced by the last roll still works: when it stops. Null when no previous secret works.',
    },
    previous_secret_last_used_at: {
      ...NULLABLE_TIMESTAMP,
      description: 'Last token exchange with the previous secret (before or since the roll), shown while it still works: whether integrations still use it.',
    },
    exposed_at: {
      ...NULLABLE_TIMESTAMP,
      description:
        "When a GitHub secret-scanning report found one of the key's working secrets in public and the platform revoked the key for it (status revoked; event invoicing.auth.api_key_revoked.v1 with reason exposed; audit record api_key.exposed). Null otherwise. The first report is kept.",
    },
    exposed_url: {
      type: ['string', 'null'],
      maxLength: 2048,
      description:
        'Where the secret was found, as the report gave it. Untrusted text: show it, do not follow it automatically. Null when the key was not exposed or the report gave no URL.',
    },
  },
} as const;

export const CREATED_API_KEY_SCHEMA = {
  $id: 'CreatedApiKey',
  type: 'object',
  required: ['object', 'id', 'name', 'client_id', 'client_secret', 'scopes', 'status', 'created_at', 'expires_at', 'allowed_ips'],
  properties: {
    object: { const: 'api_key' },
    id: idOf('key'),
    name: { type: 'string' },
    client_id: { type: 'string' },
    client_secret: { type: 'string', description: 'Shown once, in this response only.' },
    scopes: { type: 'array', items: { type: 'string' } },
    status: { const: 'active' },
    created_at: TIMESTAMP,
    expires_at: API_KEY_SCHEMA.properties.expires_at,
    allowed_ips: API_KEY_SCHEMA.properties.allowed_ips,
  },
} as const;

/** `POST /api/v1/settings/api-keys/{id}/roll`: the key after the roll, with its new secret. */
export const ROLLED_API_KEY_SCHEMA = {
  $id: 'RolledApiKey',
  type: 'object',
  required: [...API_KEY_SCHEMA.required, 'client_secret', 'sessions_ended'],
  properties: {
    ...API_KEY_SCHEMA.properties,
    client_secret: { type: 'string', description: 'The new Secret Key. Shown once, in this response only; the Client ID stays the same.' },
    sessions_ended: {
      type: 'boolean',
      description:
        'Whether every session of the key was ended (end_sessions). False when not asked, and when asked but the session store could not be reached: the roll has happened and this secret is the one that works; roll again with end_sessions, or revoke the key, to end the sessions.',
    },
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

const SHA256_HEX = { type: 'string', pattern: '^[0-9a-f]{64}$' } as const;

/**
 * `GET /api/v1/settings/audit-events`: one record of the organization's audit log, as stored (ADR
 * 0024). The same record, without `object`, is the `data` of the audit stream's events
 * (`src/events/schemas/audit-event.v1.schema.json`).
 */
export const AUDIT_EVENT_OBJECT_SCHEMA = {
  $id: 'AuditEvent',
  type: 'object',
  required: ['object', 'id', 'organization_id', 'seq', 'type', 'occurred_at', 'actor', 'api_key_id', 'client_address', 'data', 'prev_hash', 'hash'],
  properties: {
    object: { const: 'audit_event' },
    id: idOf('evt'),
    organization_id: idOf('org'),
    seq: { type: 'integer', minimum: 1, description: "Position in the organization's chain: 1 for its first record, then each record the previous one + 1." },
    type: {
      type: 'string',
      description: `What happened: ${AUDIT_EVENT_TYPES.join(', ')}. Treat the list as open: a later version may add types, never change what one means.`,
    },
    occurred_at: {
      type: 'string',
      format: 'date-time',
      description:
        'When it happened: RFC 3339, UTC, milliseconds. Not always increasing with seq (api_key.expired carries the instant of expires_at, a revocation the instant it was made): the order of the log is seq.',
    },
    actor: {
      type: 'object',
      required: ['kind', 'id'],
      description: 'Who did it.',
      properties: {
        kind: { enum: ['user', 'api_key', 'system'], description: 'user: a signed-in user of the organization. api_key: a key (a refresh-token reuse). system: the platform (an expiry, a secret-scanning report, an alert, the create-key command, a failing webhook endpoint disabled).' },
        id: { type: ['string', 'null'], description: 'usr_... for a user, key_... for a key; null for the system.' },
      },
    },
    api_key_id: { type: ['string', 'null'], pattern: '^key_[0-9a-f]{32}$', description: 'The key concerned; null for account records.' },
    client_address: {
      type: ['string', 'null'],
      description: "The IP address the request came from (the connection's, or what a trusted proxy forwarded); null when no request caused it (an expiry, a secret-scanning report).",
    },
    data: {
      type: 'object',
      description:
        'Details, by type, never a secret, a token or a password: account.signed_up {email}; api_key.created {name, scopes, expires_at, allowed_ips}; api_key.rolled {previous_secret_expires_at, end_sessions}; api_key.allowed_ips_changed {allowed_ips, previous_allowed_ips, version}; api_key.revoked {sessions_ended}; api_key.expired {expires_at}; api_key.exposed {sessions_ended, url, source}; refresh_token.reuse_detected {sessions_ended, session_ids (at most 20)}; api_key.auth_failures_alert {failures_across_addresses, window_seconds}; account.login_failed {user_id}; account.login_failures_alert {user_id, failures_across_addresses, window_seconds}; account.login_failures_summary {user_id, failures, address_blocks, sample_addresses, window_started_at, window_ended_at}; api_key.auth_failures_summary {failures, address_blocks, sample_addresses, window_started_at, window_ended_at}; audit.failure_records_suppressed {records_suppressed, ceiling, user_ids, api_key_ids, window_started_at, window_ended_at}; webhook_endpoint.disabled {endpoint_id, url, reason (failing), failing_since} (the webhook service disabled an endpoint no attempt had succeeded on for 5 days; actor system); organization.profile_updated {changed_fields, version, and when the IBAN changed iban_last4 and previous_iban_last4 (its last 4 characters, null when none), never the whole IBAN} (Settings → Organization); {} for log-ins and log-outs. Failures are aggregated per account or key and window (ADR 0035): the first failed log-in and each alert at once, a summary when the window ends.',
    },
    prev_hash: { ...SHA256_HEX, description: 'hash of the record with seq - 1; 64 zeros for seq 1.' },
    hash: {
      ...SHA256_HEX,
      description:
        'SHA-256 (lower-case hex) of the UTF-8 text "invoicing-audit-v1" + LF + prev_hash + LF + the RFC 8785 canonical JSON of the record without object, prev_hash and hash. Keep the latest seq and hash outside the platform: the verify-audit command checks the chain against it (ADR 0024).',
    },
  },
} as const;

/**
 * `POST /api/v1/secret-scanning/github`: GitHub's secret-scanning report (ADR 0025). Documentation
 * only: the route reads the raw bytes (the signature covers them) and checks this shape by hand.
 */
export const GITHUB_SECRET_SCANNING_REPORT_SCHEMA = {
  $id: 'GithubSecretScanningReport',
  type: 'array',
  maxItems: 1000,
  description: 'The matches GitHub found, as its secret scanning partner program sends them. Fields other than these are ignored.',
  items: {
    type: 'object',
    required: ['token', 'type'],
    properties: {
      token: { type: 'string', minLength: 1, maxLength: 256, description: 'The string that matched the registered pattern.' },
      type: { type: 'string', maxLength: 2048, description: 'The token type name registered with GitHub; answered back as token_type, not checked.' },
      url: { type: 'string', maxLength: 2048, description: 'Where it was found; may be empty. Kept as the key\'s exposed_url and in the audit record.' },
      source: { type: 'string', maxLength: 2048, description: 'What kind of place GitHub found it in (for example content or commit); may be absent. Kept in the audit record.' },
    },
  },
} as const;

/** The answer to a secret-scanning report: GitHub's feedback format, one label per match. */
export const GITHUB_SECRET_SCANNING_LABELS_SCHEMA = {
  $id: 'GithubSecretScanningLabels',
  type: 'array',
  items: {
    type: 'object',
    required: ['token_raw', 'token_type', 'label'],
    properties: {
      token_raw: { type: 'string', description: 'The reported token, as sent.' },
      token_type: { type: 'string', description: 'The reported type, as sent.' },
      label: {
        enum: ['true_positive', 'false_positive'],
        description:
          'true_positive: a Secret Key this platform issued, whatever its state now (active, revoked, expired). false_positive: anything else, including a string with the sk_live_ prefix whose checksum fails (decided without a look-up).',
      },
    },
  },
} as const;

import * as api from '../api';
import { AUDIT_EVENT_TYPES } from '../events/audit-events';
import { RESOURCE_MANIFEST, RESOURCES, representationsOf } from '../manifest';
import { ALL_SCOPES } from '../scopes';
import * as webhooks from '../webhooks/webhooks';
import { codeSamples } from './code-samples';

/**
 * The OpenAPI 3.1 document of the whole public API, generated from the same JSON Schemas the
 * services validate requests with (and the list filters, scopes and error formats they enforce), so
 * the document cannot drift from the code that serves it.
 */
export function buildOpenApiDocument(options: { serverUrl: string; version?: string }): Record<string, unknown> {
  const schemas: Record<string, unknown> = {};
  const ref = (schema: { $id: string }) => {
    const { $id, ...rest } = schema as { $id: string } & Record<string, unknown>;
    schemas[$id] = rest;
    return { $ref: `#/components/schemas/${$id}` };
  };
  const problem = ref(api.PROBLEM_SCHEMA);
  const oauthError = ref(api.OAUTH_ERROR_SCHEMA);
  ref(api.CLIENT_CREDENTIALS_GRANT_SCHEMA);
  ref(api.REFRESH_TOKEN_GRANT_SCHEMA);
  const tokenRequest = ref(api.TOKEN_REQUEST_SCHEMA);
  const revocationRequest = ref(api.REVOCATION_REQUEST_SCHEMA);
  const problemResponse = (description: string, headers?: Record<string, unknown>) => ({
    description,
    ...(headers ? { headers } : {}),
    content: { 'application/problem+json': { schema: problem } },
  });
  const oauthResponse = (description: string) => ({ description, content: { 'application/json': { schema: oauthError } } });
  const retryAfter = { 'Retry-After': { schema: { type: 'integer' }, description: 'Seconds to wait.' } };
  const wwwAuthenticate = { 'WWW-Authenticate': { schema: { type: 'string' }, description: 'RFC 6750 Bearer challenge.' } };


  const paths: Record<string, unknown> = {
    '/api/v1/auth/token': {
      post: {
        tags: ['auth'],
        operationId: 'createToken',
        summary: 'Exchange API key credentials for a token pair, or rotate a refresh token (grant_type=refresh_token)',
        description:
          'grant_type=client_credentials: client credentials in the body (JSON or form) or with HTTP Basic. Each exchange starts a new session (refresh-token family). An API key holds at most 50,000 live sessions (configurable): past that, the session whose refresh token was least recently issued is ended, and its refresh token answers invalid_grant; its access tokens live out their hour. Reuse one session and refresh it rather than exchanging per call. Repeated failed client authentications answer 429 with Retry-After to the address they came from (for that client, or for every client): never to the same client elsewhere, so a stranger who knows a Client ID cannot lock its owner out. The client address is that of the connection, or the one a trusted proxy (the gateway) forwarded.\n\n' +
          'A key past its expires_at, and the previous secret of a roll once its overlap has ended, answer exactly like a wrong secret (401 invalid_client). A key with allowed_ips: from any other address, a request whose credentials are right answers 400 unauthorized_client and spends nothing (a wrong secret is still 401, so only its holder learns that an allowlist exists); the access tokens issued carry the list (claim allowed_ips).\n\n' +
          'grant_type=refresh_token (RFC 6749 section 6), for standard OAuth client libraries: the same rotation, reuse detection and revocation as /api/v1/auth/refresh. Client authentication is optional; when sent it is checked (401 invalid_client) and the refresh token must belong to that key (otherwise invalid_grant, and the token is not spent). An optional scope narrows this access token only. From the instant a key expires, its refresh tokens answer invalid_grant.',
        security: [{}, { clientBasic: [] }],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: tokenRequest },
            'application/x-www-form-urlencoded': { schema: tokenRequest },
          },
        },
        responses: {
          200: { description: 'Tokens (Cache-Control: no-store).', content: { 'application/json': { schema: ref(api.TOKEN_RESPONSE_SCHEMA) } } },
          400: oauthResponse(
            "invalid_request, unsupported_grant_type, invalid_scope, invalid_grant (refresh grant: unknown, expired, spent, revoked or another key's refresh token, or its key expired) or unauthorized_client (right credentials, from an address outside the key's allowed_ips; nothing spent)",
          ),
          401: oauthResponse('invalid_client: unknown client, wrong secret, revoked or expired key, or a previous secret whose overlap has ended (one answer for all)'),
          429: { ...oauthResponse('Too many failed client authentications from this address (for this client, or in all)'), headers: retryAfter },
          503: oauthResponse('temporarily_unavailable'),
        },
      },
    },
    '/api/v1/auth/refresh': {
      post: {
        tags: ['auth'],
        operationId: 'refreshToken',
        summary: 'Rotate a refresh token for a new token pair',
        description:
          'Each refresh token works once. Presenting a spent one answers invalid_grant and revokes every session of the API key at once (announced on Kafka topic auth.revocations.v1). Rolling the key\'s secret does not end its sessions (unless asked to): their refresh tokens keep working. From an address outside the key\'s allowed_ips the answer is unauthorized_client and the refresh token is not spent.',
        security: [{}],
        requestBody: { required: true, content: { 'application/json': { schema: ref(api.REFRESH_REQUEST_SCHEMA) } } },
        responses: {
          200: { description: 'A new pair.', content: { 'application/json': { schema: { $ref: '#/components/schemas/TokenResponse' } } } },
          400: oauthResponse("invalid_request, invalid_grant (unknown, expired, spent or revoked, or its key expired) or unauthorized_client (from an address outside the key's allowed_ips; not spent)"),
          503: oauthResponse('temporarily_unavailable'),
        },
      },
    },
    '/api/v1/auth/revoke': {
      post: {
        tags: ['auth'],
        operationId: 'revokeToken',
        summary: 'Revoke a refresh token or an access token of the authenticated key (RFC 7009)',
        description:
          'Ends the session (refresh-token family) the token belongs to: its refresh tokens stop working, and its access tokens are refused by every resource service within the revocation bound (event invoicing.auth.sessions_revoked.v1, reason session_revoked, on Kafka topic auth.revocations.v1). An unknown, expired, malformed or another key\'s token answers 200 as well and changes nothing. Client authentication (HTTP Basic or client_id + client_secret in the body) is required. It is not restricted by the key\'s allowed_ips: a session can be ended from anywhere.',
        security: [{}, { clientBasic: [] }],
        requestBody: {
          required: true,
          content: {
            'application/json': { schema: revocationRequest },
            'application/x-www-form-urlencoded': { schema: revocationRequest },
          },
        },
        responses: {
          200: { description: 'Revoked, or nothing to revoke; empty body (Cache-Control: no-store).' },
          400: oauthResponse('invalid_request (no token, malformed body)'),
          401: oauthResponse('invalid_client: missing or failed client authentication (also a revoked or expired key, or a previous secret whose overlap has ended)'),
          429: { ...oauthResponse('Too many failed client authentications from this address (for this client, or in all)'), headers: retryAfter },
          503: oauthResponse('temporarily_unavailable'),
        },
      },
    },
    '/.well-known/oauth-authorization-server': {
      get: {
        tags: ['auth'],
        operationId: 'getAuthorizationServerMetadata',
        summary: 'OAuth 2.0 authorization server metadata (RFC 8414), for discovery-based clients',
        security: [{}],
        responses: {
          200: {
            description: 'The metadata (Cache-Control: public, max-age=3600).',
            content: { 'application/json': { schema: ref(api.AUTHORIZATION_SERVER_METADATA_SCHEMA) } },
          },
        },
      },
    },
  };

  const sessionSecurity = [{ session: [], csrf: [] }];
  const account = ref(api.ACCOUNT_SCHEMA);
  paths['/api/v1/account/csrf'] = {
    get: { tags: ['settings'], operationId: 'getCsrfToken', summary: 'A CSRF token for the session the request carries (none before sign-in); sets the HttpOnly nonce cookie it is bound to. Fetch a new one after sign-up, log-in and log-out', security: [{}], responses: { 200: { description: 'Token', content: { 'application/json': { schema: { type: 'object', properties: { csrf_token: { type: 'string' } } } } } } } },
  };
  paths['/api/v1/account/signup'] = {
    post: {
      tags: ['settings'], operationId: 'signup', summary: 'Create an organization and its first user; starts a session', security: [{ csrf: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.SIGNUP_SCHEMA) } } },
      responses: { 201: { description: 'Signed up', content: { 'application/json': { schema: account } } }, 403: problemResponse('CSRF or origin'), 409: problemResponse('Email taken (counts as a failed log-in for the caller\'s address)'), 422: problemResponse('Invalid fields; a password that is too common (too_common), too easy (too_simple) or too close to the email or organization name (too_similar)'), 429: problemResponse('Too many failed log-ins or refused sign-ups from this address', retryAfter) },
    },
  };
  paths['/api/v1/account/login'] = {
    post: {
      tags: ['settings'], operationId: 'login', summary: 'Log in; starts a session (HttpOnly cookie)', security: [{ csrf: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.LOGIN_SCHEMA) } } },
      responses: { 200: { description: 'Logged in', content: { 'application/json': { schema: account } } }, 401: problemResponse('Wrong email or password'), 403: problemResponse('CSRF or origin'), 429: problemResponse('Too many failures for this email from this address, or from this address', retryAfter) },
    },
  };
  paths['/api/v1/account/logout'] = { post: { tags: ['settings'], operationId: 'logout', summary: 'End the session', security: sessionSecurity, responses: { 204: { description: 'Logged out' }, 403: problemResponse('CSRF') } } };
  paths['/api/v1/account/me'] = { get: { tags: ['settings'], operationId: 'me', summary: 'The signed-in user', security: [{ session: [] }], responses: { 200: { description: 'Account', content: { 'application/json': { schema: account } } }, 401: problemResponse('No session') } } };
  paths['/api/v1/settings/api-keys'] = {
    get: {
      tags: ['settings'], operationId: 'listApiKeys', summary: "The organization's API keys (never their secrets), live ones by default", security: [{ session: [] }],
      description:
        'Each key with its expiry (status expired from the instant it passes), its allowed_ips, and the last use of its current secret and, during the overlap after a roll, of its previous one. A key the platform revoked because a secret-scanning report found one of its working secrets in public carries exposed_at and exposed_url (where it was found). Without status, only active keys are listed: an organization holds at most MAX_LIVE_KEYS_PER_ORGANIZATION of them (200 by default), so however many keys were revoked or have expired, every live key is on the first pages. Revoked and expired keys are listed with status=revoked,expired. Pages go from newest to oldest: continue with starting_after set to the last id of the page while has_more is true. Cache-Control: no-store.',
      parameters: [
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 100 }, description: 'Keys per page.' },
        { name: 'starting_after', in: 'query', schema: api.idOf('key'), description: 'The id of the last key of the previous page; this page holds older keys. Keys are compared by id, so a key that changes status between two pages changes nothing for the walk.' },
        {
          name: 'status',
          in: 'query',
          style: 'form',
          explode: false,
          schema: { type: 'array', items: { enum: ['active', 'revoked', 'expired'] }, minItems: 1, default: ['active'] },
          description: 'Only keys in these statuses, comma-separated (status=revoked,expired); each as the status field shows it at the time of the request. Default: active.',
        },
      ],
      responses: {
        200: {
          description: 'A page of keys (Cache-Control: no-store)',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['object', 'data', 'has_more'],
                properties: {
                  object: { const: 'list' },
                  data: { type: 'array', items: { $ref: '#/components/schemas/ApiKey' }, description: 'Newest first, at most limit keys.' },
                  has_more: { type: 'boolean', description: 'Whether older keys in these statuses follow: ask again with starting_after set to the id of the last key of data.' },
                },
              },
            },
          },
        },
        400: problemResponse('A parameter at fault, each named in errors[] (field, code): limit not an integer from 1 to 100 (out_of_range), starting_after not a key_ id (invalid_format), a status other than active, revoked and expired (invalid_value), a parameter given twice (repeated), or a parameter this list does not take (unknown_parameter)'),
        401: problemResponse('No session'),
      },
    },
    post: {
      tags: ['settings'], operationId: 'createApiKey', summary: 'Create an API key; this response and a roll\'s are the only ones that carry a client_secret', security: sessionSecurity,
      description: 'expires_at (optional) is fixed for the life of the key: at most one year ahead. Seven days before it (at once for a key that expires sooner) the event invoicing.auth.api_key_expiring.v1 is published; at the instant, the key stops authenticating at the token endpoints, and within about a second invoicing.auth.api_key_revoked.v1 (reason expired) makes every resource service refuse its access tokens. allowed_ips (optional, at most 100 entries) is answered in canonical form; it can be changed later with PATCH.',
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.CREATE_API_KEY_SCHEMA) } } },
      responses: { 201: { description: 'Created', content: { 'application/json': { schema: ref(api.CREATED_API_KEY_SCHEMA) } } }, 401: problemResponse('No session'), 403: problemResponse('CSRF or origin'), 409: problemResponse('The organization holds the most live keys it may (key_limit_reached, 200 by default); revoke one first'), 429: problemResponse('Too many new keys in this organization this minute (KEY_CREATIONS_PER_ORGANIZATION_PER_MINUTE, 100 by default); nothing was created', retryAfter), 422: problemResponse('Invalid name or unknown scope; expires_at not an RFC 3339 date-time with an offset (invalid_format), not in the future (in_past) or more than a year ahead (too_far); an allowed_ips entry that is not an address or CIDR block, or has bits set after its prefix (allowed_ips[i], invalid_address), is listed twice (duplicate), or more than 100 entries (too_many)') },
    },
  };
  const apiKey = ref(api.API_KEY_SCHEMA);
  const keyId = [{ name: 'id', in: 'path', required: true, schema: api.idOf('key') }];
  const keyNotActive = problemResponse('The key is revoked or expired (errors[0]: field status, code key_revoked or key_expired); nothing changed');
  paths['/api/v1/settings/api-keys/{id}'] = {
    patch: {
      tags: ['settings'], operationId: 'updateApiKey', summary: "Rename a key or replace its allowed_ips", security: sessionSecurity,
      description:
        "Only name and allowed_ips change; every other field is fixed for the life of the key, and naming one refuses the whole request (422, code immutable, with what to do instead: a new key for other scopes or another expiry, a roll for a new secret). allowed_ips, when sent, replaces the whole list (empty: any address; absent: unchanged) and takes effect at once at the token endpoints. Access tokens already issued carry the list of their issue: the event invoicing.auth.api_key_allowed_ips_changed.v1 makes every resource service check them against the new list instead, within the revocation bound, so a narrower list refuses them (403) and a wider one admits them without a new token.",
      parameters: keyId,
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.UPDATE_API_KEY_SCHEMA) } } },
      responses: {
        200: { description: 'The key as changed (allowed_ips in canonical form)', content: { 'application/json': { schema: apiKey } } },
        401: problemResponse('No session'),
        403: problemResponse('CSRF or origin'),
        404: problemResponse('No such key in this organization'),
        409: keyNotActive,
        422: problemResponse('A field that cannot change (immutable), an unknown field (unknown_field), an empty body, a blank name, or allowed_ips entries at fault (allowed_ips[i] with invalid_address or duplicate; too_many past 100)'),
        429: problemResponse('Too many rolls and allowlist changes in this organization this minute', retryAfter),
      },
    },
  };
  paths['/api/v1/settings/api-keys/{id}/roll'] = {
    post: {
      tags: ['settings'], operationId: 'rollApiKeySecret', summary: "Replace a key's secret; the previous one keeps working for the overlap asked", security: sessionSecurity,
      description:
        "A new Secret Key replaces the current one, which keeps working beside it for previous_secret_expires_in seconds (0: stops at once; at most 7 days), so integrations can switch without an outage. The Client ID, scopes, expiry and allowed_ips stay; so do the key's sessions and their refresh tokens, unless end_sessions is true (a leaked secret; it requires previous_secret_expires_in 0): then every session is ended after the new secret is in place (event invoicing.auth.sessions_revoked.v1, reason secret_rolled), and no exchange that checked the old secret opens a session after that. If the sessions cannot be ended at that moment (Redis unreachable), the answer is still 200 with the new secret and sessions_ended false: roll again with end_sessions. A key has at most two working secrets: rolling during an overlap drops the older one. The new secret is in this response only (Cache-Control: no-store).",
      parameters: keyId,
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.ROLL_API_KEY_SCHEMA) } } },
      responses: {
        200: { description: 'Rolled: the key, its new client_secret and whether its sessions were ended', content: { 'application/json': { schema: ref(api.ROLLED_API_KEY_SCHEMA) } } },
        401: problemResponse('No session'),
        403: problemResponse('CSRF or origin'),
        404: problemResponse('No such key in this organization'),
        409: keyNotActive,
        422: problemResponse('previous_secret_expires_in missing, not an integer, or outside 0 to 604800; end_sessions with an overlap (requires_no_overlap); an unknown field'),
        429: problemResponse('Too many rolls and allowlist changes in this organization this minute', retryAfter),
      },
    },
  };
  paths['/api/v1/settings/api-keys/{id}/revoke'] = {
    post: {
      tags: ['settings'], operationId: 'revokeApiKey', summary: 'Revoke a key: it stops authenticating and all its sessions are revoked', security: sessionSecurity,
      description:
        'The key stops authenticating at once, all its sessions end, and invoicing.auth.api_key_revoked.v1 (reason revoked_by_user) makes every resource service refuse its access tokens within about a second; the organization\'s audit log records api_key.revoked. The platform revokes keys itself with the same event and other reasons: expired (at the instant of expires_at) and exposed (a working secret of the key was reported public, POST /api/v1/secret-scanning/github). A key that is already revoked or expired is answered as it is, and nothing changes.',
      parameters: keyId,
      responses: { 200: { description: 'Revoked', content: { 'application/json': { schema: apiKey } } }, 401: problemResponse('No session'), 403: problemResponse('CSRF'), 404: problemResponse('No such key in this organization') },
    },
  };

  const auditEvent = ref(api.AUDIT_EVENT_OBJECT_SCHEMA);
  paths['/api/v1/settings/audit-events'] = {
    get: {
      tags: ['settings'], operationId: 'listAuditEvents', summary: "The organization's audit log, newest first", security: [{ session: [] }],
      description:
        "Security events of the signed-in user's organization (ADR 0024): keys created, rolled, given new allowed_ips, revoked, expired or exposed; refresh-token reuse; sign-up, log-ins, failed log-ins, log-outs; alerts on repeated failures; webhook endpoints the platform disabled after 5 days of failed deliveries (webhook_endpoint.disabled, recorded from the webhook service's event, within seconds); changes of the organization's profile (organization.profile_updated: the fields changed, never a whole IBAN). Failed log-ins and failed key authentications are aggregated per account or key and window (ADR 0035): the window's first failed log-in and each alert at once, a summary with the counts and sample address blocks when the window ends, and at most AUDIT_FAILURE_RECORDS_PER_ORGANIZATION_PER_WINDOW of the former per organization, so strangers cannot bury the log. Token exchanges and refreshes are not recorded. Each record is written in the transaction of what it records (a webhook endpoint's disabling: in the transaction that receives its event, once however often it arrives) and chained to the previous record of the organization by its hash, so a record changed, removed or reordered afterwards is detected (the verify-audit command). Records are never changed or deleted through the API. The same records are published on Kafka topic auth.audit.v1. Pages go from newest to oldest: continue with starting_after set to the last id of the page while has_more is true. Cache-Control: no-store.",
      parameters: [
        { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 }, description: 'Records per page.' },
        { name: 'starting_after', in: 'query', schema: api.idOf('evt'), description: 'The id of the last record of the previous page; this page holds older records. A record of another organization ends the list (an empty page).' },
        { name: 'type', in: 'query', schema: { type: 'string', enum: [...AUDIT_EVENT_TYPES] }, description: 'Only records of this type (given once: a repeated type is 400).' },
        { name: 'api_key_id', in: 'query', schema: api.idOf('key'), description: 'Only records about this key.' },
      ],
      responses: {
        200: {
          description: 'A page of records (Cache-Control: no-store)',
          content: {
            'application/json': {
              schema: {
                type: 'object',
                required: ['object', 'data', 'has_more'],
                properties: {
                  object: { const: 'list' },
                  data: { type: 'array', items: auditEvent, description: 'Newest first (highest seq first), at most limit records.' },
                  has_more: { type: 'boolean', description: 'Whether older records follow: ask again with starting_after set to the id of the last record of data.' },
                },
              },
            },
          },
        },
        400: problemResponse('A parameter at fault, each named in errors[] (field, code): limit not an integer from 1 to 100 (out_of_range), starting_after not an evt_ id or api_key_id not a key_ id (invalid_format), an unknown type (invalid_value), a parameter given twice (repeated), or a parameter this list does not take (unknown_parameter)'),
        401: problemResponse('No session'),
      },
    },
  };

  // Settings → Organization (ADR 0039): the seller's details printed on invoices, one profile per organization.
  const organizationProfile = ref(api.ORGANIZATION_PROFILE_SCHEMA);
  const profileAnswer = (description: string) => ({ description, content: { 'application/json': { schema: organizationProfile } } });
  paths['/api/v1/settings/organization'] = {
    get: {
      tags: ['settings'],
      operationId: 'getOrganizationProfile',
      summary: "The organization's profile: legal name, address, VAT id, billing email, IBAN, BIC and payment terms",
      description:
        "One profile per organization. An organization that never set one answers every field null, version 0 and updated_at null. Cache-Control: no-store (the answer holds the IBAN).",
      security: [{ session: [] }],
      responses: { 200: profileAnswer('The profile (Cache-Control: no-store)'), 401: problemResponse('No session') },
    },
    patch: {
      tags: ['settings'],
      operationId: 'updateOrganizationProfile',
      summary: "Change fields of the organization's profile; null clears one",
      description:
        "Only the fields sent change; null clears one; an address is replaced whole. The whole request is checked before anything changes: a field at fault, or one the profile does not have, refuses it all (422, each named in errors[] with its code: unknown_field, invalid_type, out_of_range, invalid_characters (control characters; line breaks only in payment_terms), required (a blank value: send null to clear), invalid_format (VAT id, BIC, email, an IBAN's characters), invalid_country, invalid_length (an IBAN of a SEPA country not of that country's length), invalid_checksum (an IBAN whose check digits do not match: a typo)). " +
        "IBAN, BIC and VAT id are answered normalized (upper case, without spaces). A request that changes something raises version by one, sets updated_at, records organization.profile_updated in the audit log (the fields changed; of an IBAN only its last 4 characters) and publishes invoicing.settings.organization_profile_changed.v1 (the whole profile) on Kafka topic invoicing.domain.v1, all in one transaction; concurrent requests apply one after the other, each whole. A request that changes nothing (the values already there, or an empty object) records nothing and answers the profile as it is. Cache-Control: no-store.",
      security: sessionSecurity,
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.UPDATE_ORGANIZATION_PROFILE_SCHEMA) } } },
      responses: {
        200: profileAnswer('The profile after the change (or as it is, when nothing changed; Cache-Control: no-store)'),
        400: problemResponse('The body is not valid JSON; nothing changed'),
        401: problemResponse('No session'),
        403: problemResponse('CSRF or origin'),
        415: problemResponse('The body is not application/json; nothing changed'),
        422: problemResponse('Fields at fault, each named in errors[] (field, code); nothing changed'),
      },
    },
  };

  paths['/api/v1/secret-scanning/github'] = {
    post: {
      tags: ['secret-scanning'],
      operationId: 'reportGithubSecretScanningMatches',
      summary: 'GitHub secret scanning: Secret Keys found in public; a working one is revoked at once',
      description:
        "Called by GitHub's secret scanning partner program, not by integrations (ADR 0025). No session or token: the body must be signed by one of GitHub's keys, which the deployment configures (GITHUB_SECRET_SCANNING_KEYS or GITHUB_SECRET_SCANNING_KEYS_FILE, the document GitHub publishes at https://api.github.com/meta/public_keys/secret_scanning); the signature is checked over the exact bytes received, before the body is parsed. Then each match is labelled: a string that is not a checksum-valid Secret Key is a false_positive without any look-up; a Secret Key this platform issued is a true_positive, whatever its state. One that still works (the current secret of an active key, or its previous secret during a roll's overlap) revokes its key at once: every session ends, invoicing.auth.api_key_revoked.v1 with reason exposed makes every resource service refuse its access tokens within about a second, and the key's owner sees exposed_at and exposed_url on the key and an api_key.exposed record in the audit log. The key is revoked, not rolled: a new secret would be handed to nobody. A reported secret that no longer works changes nothing.",
      security: [{}],
      parameters: [
        { name: 'Github-Public-Key-Identifier', in: 'header', required: true, schema: { type: 'string', maxLength: 256 }, description: 'The key_identifier of the GitHub key that signed the body.' },
        {
          name: 'Github-Public-Key-Signature',
          in: 'header',
          required: true,
          schema: { type: 'string', maxLength: 256 },
          description: 'Base64 (standard alphabet, padded) of the ASN.1 DER encoded ECDSA signature (NIST P-256, SHA-256) over the raw request body.',
        },
      ],
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.GITHUB_SECRET_SCANNING_REPORT_SCHEMA) } } },
      responses: {
        200: {
          description: 'One label per reported match, in report order (Cache-Control: no-store)',
          content: { 'application/json': { schema: ref(api.GITHUB_SECRET_SCANNING_LABELS_SCHEMA) } },
        },
        400: problemResponse('A signature header missing or empty; after the signature, a body that is not UTF-8 JSON or not an array. Nothing changed (an odd match inside an array is skipped or its fields blanked, never the whole report)'),
        401: problemResponse('The key identifier names no configured GitHub key, or the signature does not verify over the body. Nothing changed'),
        404: problemResponse('This deployment accepts no secret-scanning reports (no GitHub keys configured)'),
        413: problemResponse('A body over 1 MiB, or more than 1000 matches. Nothing changed'),
        415: problemResponse('A body that is not application/json. Nothing changed'),
        503: problemResponse('A working key of the report could not be revoked now (the others were); send the report again', retryAfter),
      },
    },
  };

  for (const resource of RESOURCES) {
    const { createSchema: create, objectSchema: object, kind: noun } = RESOURCE_MANIFEST[resource];
    const objectRef = ref(object);
    const common = {
      401: problemResponse('Missing, malformed, expired, revoked or wrongly signed token', wwwAuthenticate),
      403: problemResponse(
        "The token lacks the scope (insufficient_scope, with a WWW-Authenticate challenge), or the request comes from an address outside its API key's allowed_ips (no challenge: a new token would not help)",
        wwwAuthenticate,
      ),
      429: problemResponse('Rate limited', retryAfter),
      503: problemResponse('A dependency is unavailable', retryAfter),
    };
    paths[`/api/v1/${resource}`] = {
      post: {
        tags: [resource],
        operationId: `create${noun[0].toUpperCase()}${noun.slice(1)}`,
        summary: `Create ${article(noun)} ${noun}`,
        security: [{ bearer: [`write:${resource}`] }],
        parameters: [{ name: 'Idempotency-Key', in: 'header', required: false, schema: { type: 'string', maxLength: 255 }, description: 'Replays the first response for 24 hours; another body is 422; in flight is 409.' }],
        requestBody: { required: true, content: { 'application/json': { schema: ref(create) } } },
        responses: {
          201: { description: 'Created', headers: { Location: { schema: { type: 'string' } } }, content: { 'application/json': { schema: objectRef } } },
          400: problemResponse('Malformed JSON'),
          409: problemResponse('Duplicate unique value, or the Idempotency-Key is in flight'),
          413: problemResponse('Body over 1 MiB'),
          415: problemResponse('Body is not JSON'),
          422: problemResponse('A field fails validation or a reference points at nothing in the organization'),
          ...common,
        },
      },
      get: {
        tags: [resource],
        operationId: `list${resource[0].toUpperCase()}${resource.slice(1)}`,
        summary: `List ${resource}, newest first`,
        description:
          'Newest first. A page holds at most `limit` objects, and fewer when they are large (about 512 KiB of content per page, at least one object): continue with `starting_after` while `has_more` is true. Filters combine with AND; send the same filters with `starting_after` for the next page. An unknown parameter, one given twice, or a malformed value is 400 naming it. Lists of large objects (invoices) run one at a time per organization and server, with up to 16 waiting behind (its own lists only); past that, 429 with Retry-After: 1.',
        security: [{ bearer: [`read:${resource}`] }],
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'starting_after', in: 'query', schema: api.idOf(RESOURCE_MANIFEST[resource].idPrefix), description: 'The last id of the previous page.' },
          ...api.listFilterParameters(resource),
        ],
        responses: {
          200: { description: 'A page', content: { 'application/json': { schema: api.listOf(`#/components/schemas/${object.$id}`) } } },
          400: problemResponse('Bad query parameter'),
          ...common,
          429: problemResponse('Rate limited (per API key), or too many list requests of the organization in progress', retryAfter),
        },
      },
    };
    // Other representations (representations.ts): the same URL with another Accept.
    const representations = Object.entries(representationsOf(resource));
    const negotiated = representations.length > 0;
    paths[`/api/v1/${resource}/{id}`] = {
      get: {
        tags: [resource],
        operationId: `get${noun[0].toUpperCase()}${noun.slice(1)}`,
        summary: `Get ${article(noun)} ${noun}`,
        ...(negotiated
          ? {
              description:
                `JSON by default. With Accept: ${representations.map(([type]) => type).join(' or ')}, the ${noun} as a document of that type (the media types below); ` +
                'quality values are honoured (RFC 9110), and an Accept that allows none of them is 406 naming those there are. Every answer carries Vary: Accept. ' +
                `Documents are rendered off the request threads, ${api.DOCUMENT_RENDERS_PER_ORGANIZATION} at a time per organization and server with up to ${api.DOCUMENT_QUEUE_PER_ORGANIZATION} waiting; past that, 429 with Retry-After: 1.`,
            }
          : {}),
        security: [{ bearer: [`read:${resource}`] }],
        parameters: [
          { name: 'id', in: 'path', required: true, schema: api.idOf(RESOURCE_MANIFEST[resource].idPrefix) },
          ...representations.flatMap(([, r]) =>
            Object.entries(r.parameters ?? {}).map(([name, { description, ...schema }]) => ({ name, in: 'query', required: false, schema, description })),
          ),
        ],
        responses: {
          200: {
            description: 'The object',
            ...(negotiated
              ? {
                  headers: {
                    Vary: { schema: { type: 'string' }, description: 'Accept (on every answer of this operation, errors included).' },
                    'Content-Disposition': { schema: { type: 'string' }, description: 'With a document: inline; filename="<number>.<pdf|xml>".' },
                  },
                }
              : {}),
            content: {
              'application/json': { schema: objectRef },
              ...Object.fromEntries(representations.map(([type, r]) => [type, { schema: { type: 'string', ...(r.binary ? { format: 'binary' } : {}), description: r.description } }])),
            },
          },
          ...(negotiated ? { 400: problemResponse('A query parameter with a value outside its schema') } : {}),
          404: problemResponse('Absent, or another organization\'s'),
          ...(negotiated
            ? {
                406: problemResponse(`The Accept header allows none of application/json, ${representations.map(([type]) => type).join(', ')}`),
                422: problemResponse('The document cannot be made from the data (an e-invoice: the fields the standard needs and the data lacks, named in errors)'),
              }
            : {}),
          ...common,
          ...(negotiated
            ? {
                429: problemResponse('Rate limited (per API key), or too many documents of the organization being rendered', retryAfter),
                503: problemResponse('A dependency is unavailable; or, for a document, the server has too many renders queued, the render took longer than its limit, or the request reached its deadline while it waited', retryAfter),
              }
            : {}),
        },
      },
    };
  }

  // Webhook endpoints and the events sent to them (docs/api.md section 15).
  const bearerCommon = {
    401: problemResponse('Missing, malformed, expired, revoked or wrongly signed token', wwwAuthenticate),
    403: problemResponse("The token lacks the scope, or the request comes from an address outside its API key's allowed_ips", wwwAuthenticate),
    503: problemResponse('A dependency is unavailable', retryAfter),
  };
  const endpointRef = ref(webhooks.WEBHOOK_ENDPOINT_SCHEMA);
  const eventRef = ref(webhooks.WEBHOOK_EVENT_SCHEMA);
  ref(webhooks.WEBHOOK_ATTEMPT_SCHEMA);
  const endpointId = { name: 'id', in: 'path', required: true, schema: api.idOf('wep') };
  const eventId = { name: 'id', in: 'path', required: true, schema: api.idOf('wev') };
  const paging = (prefix: string) => [
    { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
    { name: 'starting_after', in: 'query', schema: api.idOf(prefix), description: 'The last id of the previous page.' },
  ];
  const json = (schema: unknown, description: string) => ({ description, content: { 'application/json': { schema } } });
  const tag = 'webhooks';
  const write = [{ bearer: ['write:webhook_endpoints'] }];
  const read = [{ bearer: ['read:webhook_endpoints'] }];
  const notFound = problemResponse("Absent, deleted, or another organization's");
  paths['/api/v1/webhook-endpoints'] = {
    post: {
      tags: [tag],
      operationId: 'createWebhookEndpoint',
      summary: 'Register a webhook endpoint',
      description: `The answer carries the endpoint's signing secret (whsec_..., or the whpk_... public key of a v1a endpoint): shown once. At most ${webhooks.WEBHOOK_LIMITS.endpointsPerOrganization} endpoints per organization. The url must be https and resolve to public addresses only.`,
      security: write,
      requestBody: { required: true, content: { 'application/json': { schema: ref(webhooks.CREATE_WEBHOOK_ENDPOINT_SCHEMA) } } },
      responses: { 201: json(endpointRef, 'Registered, with its secret'), 409: problemResponse('The organization has as many endpoints as allowed'), 422: problemResponse('A field fails validation (a url that is not https, or resolves to a private address)'), ...bearerCommon },
    },
    get: {
      tags: [tag],
      operationId: 'listWebhookEndpoints',
      summary: 'List webhook endpoints, newest first',
      security: read,
      parameters: paging('wep'),
      responses: { 200: json(api.listOf('#/components/schemas/WebhookEndpoint'), 'A page'), 400: problemResponse('Bad query parameter'), ...bearerCommon },
    },
  };
  paths['/api/v1/webhook-endpoints/{id}'] = {
    get: { tags: [tag], operationId: 'getWebhookEndpoint', summary: 'Get a webhook endpoint', security: read, parameters: [endpointId], responses: { 200: json(endpointRef, 'The endpoint'), 404: notFound, ...bearerCommon } },
    patch: {
      tags: [tag],
      operationId: 'updateWebhookEndpoint',
      summary: 'Change, disable or enable a webhook endpoint',
      security: write,
      parameters: [endpointId],
      requestBody: { required: true, content: { 'application/json': { schema: ref(webhooks.UPDATE_WEBHOOK_ENDPOINT_SCHEMA) } } },
      responses: { 200: json(endpointRef, 'The endpoint'), 404: notFound, 422: problemResponse('A field fails validation'), ...bearerCommon },
    },
    delete: {
      tags: [tag],
      operationId: 'deleteWebhookEndpoint',
      summary: 'Delete a webhook endpoint',
      description: 'Nothing is sent to it again; its pending deliveries are dropped.',
      security: write,
      parameters: [endpointId],
      responses: {
        200: json({ type: 'object', required: ['object', 'id', 'deleted'], properties: { object: { const: 'webhook_endpoint' }, id: api.idOf('wep'), deleted: { const: true } } }, 'Deleted'),
        404: notFound,
        ...bearerCommon,
      },
    },
  };
  paths['/api/v1/webhook-endpoints/{id}/roll-secret'] = {
    post: {
      tags: [tag],
      operationId: 'rollWebhookEndpointSecret',
      summary: "Roll a webhook endpoint's signing secret",
      description: 'The new secret is shown once; the previous one keeps signing beside it (two signatures in webhook-signature) for 24 hours.',
      security: write,
      parameters: [endpointId],
      responses: { 200: json(endpointRef, 'The endpoint with its new secret'), 404: notFound, ...bearerCommon },
    },
  };
  paths['/api/v1/webhook-endpoints/{id}/test'] = {
    post: {
      tags: [tag],
      operationId: 'sendWebhookTestEvent',
      summary: 'Send a test event to a webhook endpoint',
      security: write,
      parameters: [endpointId],
      responses: { 202: json(eventRef, `The ${webhooks.WEBHOOK_TEST_EVENT_TYPE} event, queued for this endpoint`), 404: notFound, ...bearerCommon },
    },
  };
  paths['/api/v1/webhook-endpoints/{id}/attempts'] = {
    get: {
      tags: [tag],
      operationId: 'listWebhookDeliveryAttempts',
      summary: "List a webhook endpoint's delivery attempts, newest first",
      security: read,
      parameters: [endpointId, ...paging('wat'), { name: 'event', in: 'query', schema: api.idOf('wev'), description: 'Only the attempts of this event.' }],
      responses: { 200: json(api.listOf('#/components/schemas/WebhookDeliveryAttempt'), 'A page'), 400: problemResponse('Bad query parameter'), 404: notFound, ...bearerCommon },
    },
  };
  paths['/api/v1/webhook-endpoints/{id}/replay'] = {
    post: {
      tags: [tag],
      operationId: 'replayWebhookDeliveries',
      summary: 'Send every failed delivery to an endpoint since a time again',
      description: `At most ${webhooks.WEBHOOK_LIMITS.replayMaxDeliveries} deliveries per request, oldest first; the same webhook-id as before.`,
      security: write,
      parameters: [endpointId],
      requestBody: { required: true, content: { 'application/json': { schema: ref(webhooks.REPLAY_WEBHOOK_DELIVERIES_SCHEMA) } } },
      responses: {
        202: json({ type: 'object', required: ['object', 'endpoint', 'deliveries_queued'], properties: { object: { const: 'webhook_replay' }, endpoint: api.idOf('wep'), deliveries_queued: { type: 'integer', minimum: 0 } } }, 'Queued'),
        404: notFound,
        409: problemResponse('The endpoint is disabled'),
        422: problemResponse('since is not a date-time'),
        ...bearerCommon,
      },
    },
  };
  const eventScopes = [...new Set(Object.values(webhooks.WEBHOOK_EVENT_CATALOGUE).map((e) => `read:${e.scope}`))];
  paths['/api/v1/events'] = {
    get: {
      tags: [tag],
      operationId: 'listEvents',
      summary: 'List the events of the last 30 days, newest first',
      description: "Each event is listed to a token holding read: of its resource (read:webhook_endpoints for the key lifecycle and test events); a token with no read: scope at all is refused.",
      security: eventScopes.map((scope) => ({ bearer: [scope] })),
      parameters: [
        ...paging('wev'),
        { name: 'type', in: 'query', schema: { enum: [...webhooks.WEBHOOK_EVENT_TYPES, webhooks.WEBHOOK_TEST_EVENT_TYPE] } },
        { name: 'created[gte]', in: 'query', schema: { type: 'string', format: 'date-time' } },
        { name: 'created[lte]', in: 'query', schema: { type: 'string', format: 'date-time' } },
      ],
      responses: { 200: json(api.listOf('#/components/schemas/WebhookEvent'), 'A page'), 400: problemResponse('Bad query parameter'), ...bearerCommon },
    },
  };
  paths['/api/v1/events/{id}'] = {
    get: {
      tags: [tag],
      operationId: 'getEvent',
      summary: 'Get an event as it was delivered',
      security: eventScopes.map((scope) => ({ bearer: [scope] })),
      parameters: [eventId],
      responses: { 200: json(eventRef, 'The event'), 404: problemResponse("Absent, older than 30 days, another organization's, or not readable with the token's scopes"), ...bearerCommon },
    },
  };
  paths['/api/v1/events/{id}/resend'] = {
    post: {
      tags: [tag],
      operationId: 'resendEvent',
      summary: 'Send an event again',
      description: 'To the endpoint named, or to every endpoint it was sent to; at once, with the same webhook-id.',
      security: [{ bearer: ['write:webhook_endpoints'] }],
      parameters: [eventId],
      requestBody: { required: false, content: { 'application/json': { schema: { type: 'object', additionalProperties: false, properties: { endpoint: api.idOf('wep') } } } } },
      responses: {
        202: json({ type: 'object', required: ['object', 'event', 'endpoints'], properties: { object: { const: 'webhook_resend' }, event: api.idOf('wev'), endpoints: { type: 'array', items: api.idOf('wep') } } }, 'Queued'),
        404: notFound,
        422: problemResponse('No enabled endpoint of the organization has this id'),
        ...bearerCommon,
      },
    },
  };

  // Settings, then Webhooks (ADR 0038): the same calls for a signed-in user, forwarded by the auth
  // service to those above with a token of one scope it mints; answers as there, plus the session's.
  for (const [path, operations] of Object.entries(paths).filter(([p]) => p.startsWith('/api/v1/webhook-endpoints'))) {
    paths[path.replace('/api/v1/', '/api/v1/settings/')] = Object.fromEntries(
      Object.entries(operations as Record<string, Record<string, unknown>>).map(([method, op]) => {
        const { [401]: _token, [403]: _scope, ...answers } = op.responses as Record<string, unknown>;
        return [
          method,
          {
            ...op,
            tags: ['settings'],
            operationId: `settings${(op.operationId as string).replace(/^./, (c) => c.toUpperCase())}`,
            security: method === 'get' ? [{ session: [] }] : sessionSecurity,
            description: `${op.description ? `${op.description as string} ` : ''}Forwarded to ${path} for the signed-in user's organization (ADR 0038).`,
            responses: {
              ...answers,
              401: problemResponse('No session'),
              ...(method === 'get' ? {} : { 403: problemResponse('CSRF') }),
              502: problemResponse('The webhook service gave an answer that is not its own (or refused the forwarded token)'),
              503: problemResponse('The webhook service did not answer in time', retryAfter),
            },
          },
        ];
      }),
    );
  }
  paths['/api/v1/settings/webhook-event-types'] = {
    get: {
      tags: ['settings'],
      operationId: 'listWebhookEventTypes',
      summary: 'The event types an endpoint may subscribe to, with what each means',
      security: [{ session: [] }],
      responses: {
        200: json({ type: 'object', required: ['data'], properties: { data: { type: 'array', items: { type: 'object', required: ['type', 'description'], properties: { type: { type: 'string' }, description: { type: 'string' } } } } } }, 'Every type'),
        401: problemResponse('No session'),
      },
    },
  };

  // What the platform POSTs to an endpoint, per event type (OpenAPI 3.1 `webhooks`).
  const objectSchemaOfType = (type: string): Record<string, unknown> => {
    const kind = type.split('.')[0];
    const resource = RESOURCES.find((r) => RESOURCE_MANIFEST[r].kind === kind);
    if (resource) return { $ref: `#/components/schemas/${RESOURCE_MANIFEST[resource].objectSchema.$id}` };
    if (kind === 'api_key') return ref(api.API_KEY_SCHEMA);
    return kind === 'webhook_endpoint' ? endpointRef : { type: 'object', required: ['object', 'id'], properties: { object: { const: kind }, id: { type: 'string' } } };
  };
  const signatureHeaders = {
    'webhook-id': { required: true, schema: api.idOf('wev'), description: 'The event id: the same on every attempt (deduplicate on it).' },
    'webhook-timestamp': { required: true, schema: { type: 'string', pattern: '^[0-9]+$' }, description: 'Seconds since the epoch, the attempt\'s time.' },
    'webhook-signature': { required: true, schema: { type: 'string' }, description: 'Space-separated `v1,<base64 HMAC-SHA256>` (or `v1a,<base64 ed25519>`) of `<id>.<timestamp>.<body>`; two during a secret roll\'s overlap.' },
  };
  const webhookSection = Object.fromEntries(
    [...webhooks.WEBHOOK_EVENT_TYPES, webhooks.WEBHOOK_TEST_EVENT_TYPE].map((type) => [
      type,
      {
        post: {
          tags: [tag],
          operationId: `webhook_${type.replace(/\./g, '_')}`,
          summary: (webhooks.WEBHOOK_EVENT_CATALOGUE as Record<string, { description: string }>)[type]?.description ?? 'A test event, sent by POST /api/v1/webhook-endpoints/{id}/test.',
          security: [{}],
          parameters: Object.entries(signatureHeaders).map(([name, h]) => ({ name, in: 'header', ...h })),
          requestBody: {
            required: true,
            content: {
              'application/json': {
                schema: { allOf: [eventRef, { type: 'object', properties: { type: { const: type }, data: { type: 'object', properties: { object: objectSchemaOfType(type) } } } }] },
              },
            },
          },
          responses: { 200: { description: 'Any 2xx within 15 s acknowledges the delivery; anything else is retried.' }, 400: { description: 'Refused (a bad signature): retried like any failure.' } },
        },
      },
    ]),
  );

  // Request examples (curl, and the SDK where it has a call), shown by the reference page (ADR 0027).
  const samples = codeSamples(options.serverUrl);
  for (const operations of Object.values(paths) as Array<Record<string, Record<string, unknown>>>) {
    for (const operation of Object.values(operations)) {
      const forOperation = samples[operation.operationId as string];
      if (forOperation) operation['x-codeSamples'] = forOperation;
    }
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Invoicing public API',
      version: options.version ?? '1.0.0',
      description:
        'Create an API key in Settings → API → Create Key, exchange it at /api/v1/auth/token for a one-hour access token, send it as Authorization: Bearer, refresh before expiry at /api/v1/auth/refresh (or with grant_type=refresh_token at /api/v1/auth/token), revoke at /api/v1/auth/revoke (RFC 7009). A key may expire (expires_at), have its secret rolled with an overlap in which both secrets work, and be limited to IP addresses (allowed_ips); a key whose working secret is found in public by GitHub secret scanning is revoked at once (exposed_at). Security events of an organization are kept in a tamper-evident audit log (/api/v1/settings/audit-events). OAuth client libraries can configure themselves from /.well-known/oauth-authorization-server (RFC 8414). Errors: RFC 6749 on /api/v1/auth/*, RFC 9457 problem+json elsewhere.',
    },
    servers: [{ url: options.serverUrl }],
    tags: [
      { name: 'auth', description: 'OAuth 2.0 token issuance (client_credentials, refresh_token), refresh rotation, RFC 7009 revocation and RFC 8414 metadata.' },
      { name: 'settings', description: "Settings area (cookie session + CSRF): sign-up, login, API key management (create, list, rename and allowed IPs, secret roll, revoke), the organization's profile (legal name, address, VAT id, IBAN...) and its audit log." },
      { name: 'secret-scanning', description: "Leaked-secret reports from GitHub's secret scanning partner program, signed by GitHub." },
      ...RESOURCES.map((name) => ({ name, description: `Create, list and get ${name} (Bearer access token with read:${name} / write:${name}).` })),
      { name: 'webhooks', description: 'Webhook endpoints (read:webhook_endpoints / write:webhook_endpoints), the events of the last 30 days, and what is POSTed to an endpoint: each event, signed to the Standard Webhooks specification.' },
    ],
    paths,
    webhooks: webhookSection,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: `Access token. Scopes: ${ALL_SCOPES.join(', ')}.` },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_id:client_secret (RFC 6749 section 2.3.1).' },
        session: { type: 'apiKey', in: 'cookie', name: '__Host-session', description: 'Settings-area session (HttpOnly, Secure, SameSite=Strict; named `session` without the prefix in development over plain HTTP).' },
        csrf: {
          type: 'apiKey',
          in: 'header',
          name: 'X-CSRF-Token',
          description: 'The token from GET /api/v1/account/csrf, bound to the session and nonce cookies. A browser call must also come from an allowed Origin, with Sec-Fetch-Site same-origin.',
        },
      },
    },
  };
}

/** "an invoice", "a client". */
const article = (noun: string) => (/^[aeiou]/i.test(noun) ? 'an' : 'a');


import * as api from '../api';
import { ALL_SCOPES, RESOURCES, Resource } from '../scopes';

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

  const RESOURCE_SCHEMAS: Record<Resource, { create: { $id: string }; object: { $id: string }; noun: string }> = {
    invoices: { create: api.CREATE_INVOICE_SCHEMA, object: api.INVOICE_SCHEMA, noun: 'invoice' },
    clients: { create: api.CREATE_CLIENT_SCHEMA, object: api.CLIENT_SCHEMA, noun: 'client' },
    payments: { create: api.CREATE_PAYMENT_SCHEMA, object: api.PAYMENT_SCHEMA, noun: 'payment' },
    products: { create: api.CREATE_PRODUCT_SCHEMA, object: api.PRODUCT_SCHEMA, noun: 'product' },
    expenses: { create: api.CREATE_EXPENSE_SCHEMA, object: api.EXPENSE_SCHEMA, noun: 'expense' },
  };

  const paths: Record<string, unknown> = {
    '/api/v1/auth/token': {
      post: {
        tags: ['auth'],
        operationId: 'createToken',
        summary: 'Exchange API key credentials for a token pair, or rotate a refresh token (grant_type=refresh_token)',
        description:
          'grant_type=client_credentials: client credentials in the body (JSON or form) or with HTTP Basic. Each exchange starts a new session (refresh-token family). An API key holds at most 50,000 live sessions (configurable): past that, the session whose refresh token was least recently issued is ended, and its refresh token answers invalid_grant; its access tokens live out their hour. Reuse one session and refresh it rather than exchanging per call. Repeated failures from one client or address answer 429 with Retry-After.\n\n' +
          'grant_type=refresh_token (RFC 6749 section 6), for standard OAuth client libraries: the same rotation, reuse detection and revocation as /api/v1/auth/refresh. Client authentication is optional; when sent it is checked (401 invalid_client) and the refresh token must belong to that key (otherwise invalid_grant, and the token is not spent). An optional scope narrows this access token only.',
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
          400: oauthResponse('invalid_request, unsupported_grant_type, invalid_scope or invalid_grant (refresh grant: unknown, expired, spent, revoked or another key\'s refresh token)'),
          401: oauthResponse('invalid_client: unknown client, wrong secret or revoked key (one answer for all)'),
          429: { ...oauthResponse('Too many failed client authentications'), headers: retryAfter },
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
          'Each refresh token works once. Presenting a spent one answers invalid_grant and revokes every session of the API key at once (announced on Kafka topic auth.revocations.v1).',
        security: [{}],
        requestBody: { required: true, content: { 'application/json': { schema: ref(api.REFRESH_REQUEST_SCHEMA) } } },
        responses: {
          200: { description: 'A new pair.', content: { 'application/json': { schema: { $ref: '#/components/schemas/TokenResponse' } } } },
          400: oauthResponse('invalid_request or invalid_grant (unknown, expired, spent or revoked)'),
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
          'Ends the session (refresh-token family) the token belongs to: its refresh tokens stop working, and its access tokens are refused by every resource service within the revocation bound (event invoicing.auth.sessions_revoked.v1, reason session_revoked, on Kafka topic auth.revocations.v1). An unknown, expired, malformed or another key\'s token answers 200 as well and changes nothing. Client authentication (HTTP Basic or client_id + client_secret in the body) is required.',
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
          401: oauthResponse('invalid_client: missing or failed client authentication'),
          429: { ...oauthResponse('Too many failed client authentications'), headers: retryAfter },
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
    get: { tags: ['settings'], operationId: 'getCsrfToken', summary: 'A CSRF token (also set as the csrf_token cookie)', security: [{}], responses: { 200: { description: 'Token', content: { 'application/json': { schema: { type: 'object', properties: { csrf_token: { type: 'string' } } } } } } } },
  };
  paths['/api/v1/account/signup'] = {
    post: {
      tags: ['settings'], operationId: 'signup', summary: 'Create an organization and its first user; starts a session', security: [{ csrf: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.SIGNUP_SCHEMA) } } },
      responses: { 201: { description: 'Signed up', content: { 'application/json': { schema: account } } }, 403: problemResponse('CSRF'), 409: problemResponse('Email taken'), 422: problemResponse('Invalid fields') },
    },
  };
  paths['/api/v1/account/login'] = {
    post: {
      tags: ['settings'], operationId: 'login', summary: 'Log in; starts a session (HttpOnly cookie)', security: [{ csrf: [] }],
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.LOGIN_SCHEMA) } } },
      responses: { 200: { description: 'Logged in', content: { 'application/json': { schema: account } } }, 401: problemResponse('Wrong email or password'), 403: problemResponse('CSRF'), 429: problemResponse('Throttled', retryAfter) },
    },
  };
  paths['/api/v1/account/logout'] = { post: { tags: ['settings'], operationId: 'logout', summary: 'End the session', security: sessionSecurity, responses: { 204: { description: 'Logged out' }, 403: problemResponse('CSRF') } } };
  paths['/api/v1/account/me'] = { get: { tags: ['settings'], operationId: 'me', summary: 'The signed-in user', security: [{ session: [] }], responses: { 200: { description: 'Account', content: { 'application/json': { schema: account } } }, 401: problemResponse('No session') } } };
  paths['/api/v1/settings/api-keys'] = {
    get: { tags: ['settings'], operationId: 'listApiKeys', summary: "The organization's API keys (never their secrets)", security: [{ session: [] }], responses: { 200: { description: 'Keys', content: { 'application/json': { schema: api.listOf('#/components/schemas/ApiKey') } } }, 401: problemResponse('No session') } },
    post: {
      tags: ['settings'], operationId: 'createApiKey', summary: 'Create an API key; the only response that carries client_secret', security: sessionSecurity,
      requestBody: { required: true, content: { 'application/json': { schema: ref(api.CREATE_API_KEY_SCHEMA) } } },
      responses: { 201: { description: 'Created', content: { 'application/json': { schema: ref(api.CREATED_API_KEY_SCHEMA) } } }, 401: problemResponse('No session'), 403: problemResponse('CSRF'), 422: problemResponse('Invalid name or unknown scope') },
    },
  };
  ref(api.API_KEY_SCHEMA);
  paths['/api/v1/settings/api-keys/{id}/revoke'] = {
    post: {
      tags: ['settings'], operationId: 'revokeApiKey', summary: 'Revoke a key: it stops authenticating and all its sessions are revoked', security: sessionSecurity,
      parameters: [{ name: 'id', in: 'path', required: true, schema: api.idOf('key') }],
      responses: { 200: { description: 'Revoked', content: { 'application/json': { schema: { $ref: '#/components/schemas/ApiKey' } } } }, 401: problemResponse('No session'), 403: problemResponse('CSRF'), 404: problemResponse('No such key in this organization') },
    },
  };

  for (const resource of RESOURCES) {
    const { create, object, noun } = RESOURCE_SCHEMAS[resource];
    const objectRef = ref(object);
    const common = {
      401: problemResponse('Missing, malformed, expired, revoked or wrongly signed token', wwwAuthenticate),
      403: problemResponse('The token lacks the scope', wwwAuthenticate),
      429: problemResponse('Rate limited', retryAfter),
      503: problemResponse('A dependency is unavailable', retryAfter),
    };
    paths[`/api/v1/${resource}`] = {
      post: {
        tags: [resource],
        operationId: `create${noun[0].toUpperCase()}${noun.slice(1)}`,
        summary: `Create a ${noun}`,
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
        security: [{ bearer: [`read:${resource}`] }],
        parameters: [
          { name: 'limit', in: 'query', schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
          { name: 'starting_after', in: 'query', schema: api.idOf(RESOURCE_PREFIX[resource]), description: 'The last id of the previous page.' },
          ...Object.entries(api.LIST_FILTERS[resource]).map(([name, schema]) => ({ name, in: 'query', schema })),
        ],
        responses: {
          200: { description: 'A page', content: { 'application/json': { schema: api.listOf(`#/components/schemas/${object.$id}`) } } },
          400: problemResponse('Bad query parameter'),
          ...common,
        },
      },
    };
    paths[`/api/v1/${resource}/{id}`] = {
      get: {
        tags: [resource],
        operationId: `get${noun[0].toUpperCase()}${noun.slice(1)}`,
        summary: `Get a ${noun}`,
        security: [{ bearer: [`read:${resource}`] }],
        parameters: [{ name: 'id', in: 'path', required: true, schema: api.idOf(RESOURCE_PREFIX[resource]) }],
        responses: { 200: { description: 'The object', content: { 'application/json': { schema: objectRef } } }, 404: problemResponse('Absent, or another organization\'s'), ...common },
      },
    };
  }

  return {
    openapi: '3.1.0',
    info: {
      title: 'Invoicing public API',
      version: options.version ?? '1.0.0',
      description:
        'Create an API key in Settings → API → Create Key, exchange it at /api/v1/auth/token for a one-hour access token, send it as Authorization: Bearer, refresh before expiry at /api/v1/auth/refresh (or with grant_type=refresh_token at /api/v1/auth/token), revoke at /api/v1/auth/revoke (RFC 7009). OAuth client libraries can configure themselves from /.well-known/oauth-authorization-server (RFC 8414). Errors: RFC 6749 on /api/v1/auth/*, RFC 9457 problem+json elsewhere.',
    },
    servers: [{ url: options.serverUrl }],
    tags: [
      { name: 'auth', description: 'OAuth 2.0 token issuance (client_credentials, refresh_token), refresh rotation, RFC 7009 revocation and RFC 8414 metadata.' },
      { name: 'settings', description: 'Settings area (cookie session + CSRF): sign-up, login and API key management.' },
      ...RESOURCES.map((name) => ({ name, description: `Create, list and get ${name} (Bearer access token with read:${name} / write:${name}).` })),
    ],
    paths,
    components: {
      schemas,
      securitySchemes: {
        bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT', description: `Access token. Scopes: ${ALL_SCOPES.join(', ')}.` },
        clientBasic: { type: 'http', scheme: 'basic', description: 'client_id:client_secret (RFC 6749 section 2.3.1).' },
        session: { type: 'apiKey', in: 'cookie', name: 'session', description: 'Settings-area session (HttpOnly).' },
        csrf: { type: 'apiKey', in: 'header', name: 'X-CSRF-Token', description: 'Must equal the csrf_token cookie.' },
      },
    },
  };
}

const RESOURCE_PREFIX: Record<Resource, string> = { invoices: 'inv', clients: 'cli', payments: 'pay', products: 'prd', expenses: 'exp' };

import { OAuthError } from './oauth-error';

/** Client authentication as sent: HTTP Basic or `client_id` + `client_secret` in the body. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Whether the client authenticated with HTTP Basic (changes the 401 challenge). */
  usedBasic: boolean;
}

export interface ClientCredentialsRequest extends ClientCredentials {
  /** Requested scopes (a subset of the key's), or null for all of them. */
  scope: string | null;
}

export interface RefreshRequest {
  refreshToken: string;
}

/** `grant_type=refresh_token` at the token endpoint (RFC 6749 section 6). */
export interface RefreshGrantRequest extends RefreshRequest {
  /** Requested scopes (a subset of the session's), or null for all of them. */
  scope: string | null;
  /** Checked when sent (the token must then belong to that key); null when the client sent none. */
  client: ClientCredentials | null;
}

export type TokenRequest =
  | ({ grantType: 'client_credentials' } & ClientCredentialsRequest)
  | ({ grantType: 'refresh_token' } & RefreshGrantRequest);

export const TOKEN_TYPE_HINTS = ['refresh_token', 'access_token'] as const;
export type TokenTypeHint = (typeof TOKEN_TYPE_HINTS)[number];

/** An RFC 7009 revocation request. */
export interface RevocationRequest {
  token: string;
  /** The client's guess; unknown values are ignored, as RFC 7009 section 2.1 allows. */
  tokenTypeHint: TokenTypeHint | null;
  client: ClientCredentials;
}

type Body = Record<string, unknown>;

function asBody(body: unknown): Body {
  if (body === undefined || body === null) return {};
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw OAuthError.invalidRequest('The request body must be a JSON object or a form.');
  }
  return body as Body;
}

/** A single string parameter; RFC 6749 section 3.2: parameters must not be repeated. */
function param(body: Body, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw OAuthError.invalidRequest(`The ${name} parameter must be a single string.`);
  return value;
}

function required(body: Body, name: string): string {
  const value = param(body, name);
  if (value === undefined || value === '') throw OAuthError.invalidRequest(`The ${name} parameter is required.`);
  return value;
}

/** RFC 6749 section 2.3.1: `Basic base64(urlencode(client_id) ":" urlencode(client_secret))`. */
function parseBasic(header: string): { id: string; secret: string } {
  const match = /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header.trim());
  if (!match) throw OAuthError.invalidRequest('The Authorization header must use the Basic scheme.');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw OAuthError.invalidRequest('The Basic credentials are malformed.');
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw OAuthError.invalidRequest('The Basic credentials are malformed.');
  }
}

/**
 * The client authentication a request carries, or null when it carries none: HTTP Basic or
 * `client_id` + `client_secret` in the body, never both (RFC 6749 section 2.3.1). A `client_id`
 * without a secret is returned with an empty secret, so that it fails authentication (401) like any
 * other wrong credential rather than passing as "no authentication".
 */
function readClientCredentials(body: Body, authorization: string | undefined): ClientCredentials | null {
  const bodyId = param(body, 'client_id');
  const bodySecret = param(body, 'client_secret');
  if (authorization !== undefined) {
    if (bodySecret !== undefined) {
      throw OAuthError.invalidRequest('Use either HTTP Basic or client_secret in the body, not both.');
    }
    const basic = parseBasic(authorization);
    if (bodyId !== undefined && bodyId !== basic.id) {
      throw OAuthError.invalidRequest('client_id in the body does not match the Basic credentials.');
    }
    return { clientId: basic.id, clientSecret: basic.secret, usedBasic: true };
  }
  if (bodyId === undefined && bodySecret === undefined) return null;
  if (bodyId === undefined || bodyId === '') throw OAuthError.invalidRequest('The client_id parameter is required.');
  return { clientId: bodyId, clientSecret: bodySecret ?? '', usedBasic: false };
}

/**
 * A client-credentials grant: the client credentials in the body or in an HTTP Basic header
 * (exactly one of the two).
 */
function clientCredentialsGrant(body: Body, authorization: string | undefined): ClientCredentialsRequest {
  const scope = param(body, 'scope');
  if (authorization === undefined) {
    // Both are required in the body; named in the error so the integrator sees which one is missing.
    return { clientId: required(body, 'client_id'), clientSecret: required(body, 'client_secret'), usedBasic: false, scope: scope || null };
  }
  const client = readClientCredentials(body, authorization);
  if (!client) throw OAuthError.invalidRequest('The Authorization header must use the Basic scheme.');
  return { ...client, scope: scope || null };
}

/**
 * Reads a token-endpoint request: `client_credentials` (client authentication required) or
 * `refresh_token` (client authentication checked when sent, so a client that authenticates
 * everywhere, as generic OAuth libraries do, and one that does not, as `/api/v1/auth/refresh`
 * allows, both work).
 */
export function parseTokenRequest(rawBody: unknown, authorization: string | undefined): TokenRequest {
  const body = asBody(rawBody);
  const grantType = required(body, 'grant_type');
  switch (grantType) {
    case 'client_credentials':
      return { grantType, ...clientCredentialsGrant(body, authorization) };
    case 'refresh_token':
      return {
        grantType,
        refreshToken: required(body, 'refresh_token'),
        scope: param(body, 'scope') || null,
        client: readClientCredentials(body, authorization),
      };
    default:
      throw new OAuthError(400, 'unsupported_grant_type', 'The grant_type must be client_credentials or refresh_token.');
  }
}

export function parseRefreshRequest(rawBody: unknown): RefreshRequest {
  const body = asBody(rawBody);
  const grantType = param(body, 'grant_type');
  if (grantType !== undefined && grantType !== 'refresh_token') {
    throw new OAuthError(400, 'unsupported_grant_type', 'This endpoint takes the refresh_token grant only.');
  }
  return { refreshToken: required(body, 'refresh_token') };
}

/**
 * Reads an RFC 7009 revocation request. Client authentication is required: its absence is 401
 * `invalid_client` (with the Basic challenge, which tells a client how to authenticate).
 */
export function parseRevocationRequest(rawBody: unknown, authorization: string | undefined): RevocationRequest {
  const body = asBody(rawBody);
  const client = readClientCredentials(body, authorization);
  if (!client) throw OAuthError.invalidClient(true);
  const token = required(body, 'token');
  const hint = param(body, 'token_type_hint');
  return {
    token,
    tokenTypeHint: (TOKEN_TYPE_HINTS as readonly string[]).includes(hint ?? '') ? (hint as TokenTypeHint) : null,
    client,
  };
}

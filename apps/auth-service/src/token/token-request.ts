import { OAuthError } from './oauth-error';

export interface ClientCredentialsRequest {
  clientId: string;
  clientSecret: string;
  /** Requested scopes (a subset of the key's), or null for all of them. */
  scope: string | null;
  /** Whether the client authenticated with HTTP Basic (changes the 401 challenge). */
  usedBasic: boolean;
}

export interface RefreshRequest {
  refreshToken: string;
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
 * Reads a client-credentials grant from a JSON or form body, with the client credentials in the
 * body or in an HTTP Basic header (exactly one of the two).
 */
export function parseClientCredentialsRequest(rawBody: unknown, authorization: string | undefined): ClientCredentialsRequest {
  const body = asBody(rawBody);
  const grantType = required(body, 'grant_type');
  if (grantType !== 'client_credentials') {
    throw new OAuthError(400, 'unsupported_grant_type', 'Only the client_credentials grant is supported here.');
  }
  const scope = param(body, 'scope');
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
    return { clientId: basic.id, clientSecret: basic.secret, scope: scope || null, usedBasic: true };
  }
  return {
    clientId: required(body, 'client_id'),
    clientSecret: required(body, 'client_secret'),
    scope: scope || null,
    usedBasic: false,
  };
}

export function parseRefreshRequest(rawBody: unknown): RefreshRequest {
  const body = asBody(rawBody);
  const grantType = param(body, 'grant_type');
  if (grantType !== undefined && grantType !== 'refresh_token') {
    throw new OAuthError(400, 'unsupported_grant_type', 'This endpoint takes the refresh_token grant only.');
  }
  return { refreshToken: required(body, 'refresh_token') };
}

import { InvalidClient, InvalidRequest } from './oauth-errors';

/**
 * What every OAuth endpoint reads the same way: the body's parameters and client authentication.
 * Each grant (`grants/`) and the revocation endpoint read their own parameters with these.
 */

/** A request's parameters: a JSON object or a form, as Fastify parsed it. */
export type OAuthParams = Readonly<Record<string, unknown>>;

/** Client authentication as sent: HTTP Basic or `client_id` + `client_secret` in the body. */
export interface ClientCredentials {
  clientId: string;
  clientSecret: string;
  /** Whether the client authenticated with HTTP Basic (changes the 401 challenge). */
  usedBasic: boolean;
}

const NO_PARAMS: OAuthParams = Object.freeze({});

export function asParams(body: unknown): OAuthParams {
  if (body === undefined || body === null) return NO_PARAMS;
  if (typeof body !== 'object' || Array.isArray(body)) {
    throw new InvalidRequest('The request body must be a JSON object or a form.');
  }
  return body as OAuthParams;
}

/** A single string parameter; RFC 6749 section 3.2: parameters must not be repeated. */
export function param(params: OAuthParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new InvalidRequest(`The ${name} parameter must be a single string.`);
  return value;
}

export function required(params: OAuthParams, name: string): string {
  const value = param(params, name);
  if (value === undefined || value === '') throw new InvalidRequest(`The ${name} parameter is required.`);
  return value;
}

/** RFC 6749 section 2.3.1: `Basic base64(urlencode(client_id) ":" urlencode(client_secret))`. */
function parseBasic(header: string): { id: string; secret: string } {
  const match = /^Basic ([A-Za-z0-9+/]+=*)$/i.exec(header.trim());
  if (!match) throw new InvalidRequest('The Authorization header must use the Basic scheme.');
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  if (colon < 0) throw new InvalidRequest('The Basic credentials are malformed.');
  try {
    return {
      id: decodeURIComponent(decoded.slice(0, colon).replace(/\+/g, ' ')),
      secret: decodeURIComponent(decoded.slice(colon + 1).replace(/\+/g, ' ')),
    };
  } catch {
    throw new InvalidRequest('The Basic credentials are malformed.');
  }
}

/**
 * The client authentication a request carries, or null when it carries none: HTTP Basic or
 * `client_id` + `client_secret` in the body, never both (RFC 6749 section 2.3.1). A `client_id`
 * without a secret is returned with an empty secret, so that it fails authentication (401) like any
 * other wrong credential rather than passing as "no authentication".
 */
export function readClientCredentials(params: OAuthParams, authorization: string | undefined): ClientCredentials | null {
  const bodyId = param(params, 'client_id');
  const bodySecret = param(params, 'client_secret');
  if (authorization !== undefined) {
    if (bodySecret !== undefined) {
      throw new InvalidRequest('Use either HTTP Basic or client_secret in the body, not both.');
    }
    const basic = parseBasic(authorization);
    if (bodyId !== undefined && bodyId !== basic.id) {
      throw new InvalidRequest('client_id in the body does not match the Basic credentials.');
    }
    return { clientId: basic.id, clientSecret: basic.secret, usedBasic: true };
  }
  if (bodyId === undefined && bodySecret === undefined) return null;
  if (bodyId === undefined || bodyId === '') throw new InvalidRequest('The client_id parameter is required.');
  return { clientId: bodyId, clientSecret: bodySecret ?? '', usedBasic: false };
}

/**
 * Client authentication where it is required (RFC 7009 revocation): its absence is 401
 * `invalid_client` with the Basic challenge, which tells a client how to authenticate.
 */
export function requireClientCredentials(params: OAuthParams, authorization: string | undefined): ClientCredentials {
  const client = readClientCredentials(params, authorization);
  if (!client) throw InvalidClient.of(true);
  return client;
}

import { Strategy } from 'passport-strategy';
import type { IncomingHttpHeaders } from 'node:http';

export type BearerVerify = (
  token: string,
  /** The client address (Fastify's `request.ip`), for the key's allowlist. */
  address: string | undefined,
  done: (error: unknown, user?: unknown, info?: string) => void,
) => void;


/** RFC 6750 section 2.1: `Bearer` then a b64token. */
const BEARER = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)$/i;

export const REALM = 'invoicing';

/** Why a request is refused: the `WWW-Authenticate` challenge and the detail for the body. */
export interface BearerFailure {
  challenge: string;
  detail: string;
}

export const NO_TOKEN_DETAIL = 'An access token is required (Authorization: Bearer <token>).';

/** Failures are few and fixed per reason: built once, not per refused request. */
const failures = new Map<string, BearerFailure>();
export function bearerFailure(description?: string): BearerFailure {
  const key = description ?? '';
  let failure = failures.get(key);
  if (!failure) {
    failure = description
      ? { challenge: bearerChallenge('invalid_token', description), detail: description.replace(/["\\]/g, '') }
      : { challenge: bearerChallenge(), detail: NO_TOKEN_DETAIL };
    // Descriptions come from a fixed set (InvalidTokenError); the bound only guards against misuse.
    if (failures.size < 100) failures.set(key, failure);
  }
  return failure;
}

/** The token of an `Authorization: Bearer` header, or why there is none. */
export function readBearer(header: string | undefined): string | BearerFailure {
  if (!header) return bearerFailure();
  const match = BEARER.exec(header);
  return match ? match[1] : bearerFailure('The Authorization header does not hold a Bearer token.');
}

/** An RFC 6750 `WWW-Authenticate` challenge. */
export function bearerChallenge(error?: string, description?: string, scope?: string): string {
  let challenge = `Bearer realm="${REALM}"`;
  if (error) challenge += `, error="${error}"`;
  if (description) challenge += `, error_description="${description.replace(/["\\]/g, '')}"`;
  if (scope) challenge += `, scope="${scope}"`;
  return challenge;
}

/**
 * Passport strategy that reads the access token from the Authorization header only. RFC 6750 also
 * allows form and query parameters; they are not accepted here because URLs end up in logs.
 */
export class HeaderBearerStrategy extends Strategy {
  name = 'access-token';

  constructor(private readonly verifyToken: BearerVerify) {
    super();
  }

  override authenticate(req: { headers: IncomingHttpHeaders; ip?: string }): void {
    const token = readBearer(req.headers.authorization);
    if (typeof token !== 'string') {
      this.fail(token, 401);
      return;
    }
    this.verifyToken(token, req.ip, (error, user, info) => {
      if (error) this.error(error as Error);
      else if (!user) this.fail(bearerFailure(info ?? 'The access token is invalid.'), 401);
      else this.success(user);
    });
  }
}

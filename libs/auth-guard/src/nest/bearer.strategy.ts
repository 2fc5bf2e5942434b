import { Strategy } from 'passport-strategy';
import type { IncomingHttpHeaders } from 'node:http';

export type BearerVerify = (
  token: string,
  done: (error: unknown, user?: unknown, info?: string) => void,
) => void;

/** RFC 6750 section 2.1: `Bearer` then a b64token. */
const BEARER = /^Bearer[ ]+([A-Za-z0-9\-._~+/]+=*)$/i;

export const REALM = 'invoicing';

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

  override authenticate(req: { headers: IncomingHttpHeaders }): void {
    const header = req.headers.authorization;
    if (!header) {
      this.fail(bearerChallenge(), 401);
      return;
    }
    const match = BEARER.exec(header);
    if (!match) {
      this.fail(bearerChallenge('invalid_token', 'The Authorization header does not hold a Bearer token.'), 401);
      return;
    }
    this.verifyToken(match[1], (error, user, info) => {
      if (error) this.error(error as Error);
      else if (!user) this.fail(bearerChallenge('invalid_token', info ?? 'The access token is invalid.'), 401);
      else this.success(user);
    });
  }
}

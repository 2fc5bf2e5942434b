import { OAuthErrorCode, PlatformError } from '@invoicing/service-kit';

/**
 * The token endpoints' refusals (RFC 6749 section 5.2), one class per `error` code. They are
 * PlatformErrors like every other answer of the service: the edge writes them as
 * `{"error", "error_description"}` under `/api/v1/auth/` (ADR 0006, ADR 0032), and `code` is the
 * RFC 6749 code. Immutable and stackless, so the refusals that never vary are built once and thrown
 * again (as the resource services' 401s are): an unknown client or a spent token costs no allocation.
 */
export abstract class OAuthError extends PlatformError {
  declare readonly oauthError: OAuthErrorCode;

  protected constructor(status: number, error: OAuthErrorCode, description: string, headers?: Readonly<Record<string, string>>) {
    super(status, error, description, { oauthError: error, headers });
  }
}

/** A parameter missing, repeated or malformed; a body that is neither a JSON object nor a form. */
export class InvalidRequest extends OAuthError {
  constructor(description: string) {
    super(400, 'invalid_request', description);
  }
}

const BASIC_CHALLENGE = Object.freeze({ 'WWW-Authenticate': 'Basic realm="invoicing", charset="UTF-8"' });

/**
 * One identical answer for an unknown client, a wrong secret, a revoked or expired key and a
 * previous secret whose overlap has ended. A client that used HTTP Basic is told how to
 * authenticate (RFC 6749 section 5.2: the challenge of the scheme it used).
 */
export class InvalidClient extends OAuthError {
  private static readonly withBasic = new InvalidClient(true);
  private static readonly withoutBasic = new InvalidClient(false);

  private constructor(usedBasic: boolean) {
    super(401, 'invalid_client', 'Client authentication failed.', usedBasic ? BASIC_CHALLENGE : undefined);
  }

  static of(usedBasic: boolean): InvalidClient {
    return usedBasic ? InvalidClient.withBasic : InvalidClient.withoutBasic;
  }
}

/** A refresh token that is not (or no longer) one of the client's; nothing was spent unless it says so. */
export class InvalidGrant extends OAuthError {
  private static readonly plain = new InvalidGrant('The refresh token is invalid, expired, revoked or already used.');

  constructor(description: string) {
    super(400, 'invalid_grant', description);
  }

  /** Unknown, malformed, another key's, of a key no longer usable, or of a session that is gone. */
  static unknown(): InvalidGrant {
    return InvalidGrant.plain;
  }
}

/** A `scope` that is malformed or not a subset of the key's (or the session's) scopes. */
export class InvalidScope extends OAuthError {
  constructor(description: string) {
    super(400, 'invalid_scope', description);
  }
}

/** A `grant_type` this endpoint does not take. */
export class UnsupportedGrantType extends OAuthError {
  constructor(description: string) {
    super(400, 'unsupported_grant_type', description);
  }
}

/**
 * The right credentials (or refresh token), from an address outside the key's `allowed_ips`. Only a
 * caller who proved the secret learns of the allowlist; everyone else gets the 401 of a wrong secret.
 */
export class AddressNotAllowed extends OAuthError {
  private static readonly instance = new AddressNotAllowed();

  private constructor() {
    super(400, 'unauthorized_client', "The API key may not be used from this client's address (its allowed_ips).");
  }

  static of(): AddressNotAllowed {
    return AddressNotAllowed.instance;
  }
}

/**
 * A failed client authentication from an address over its budget (ADR 0022): 429 with Retry-After.
 * RFC 6749 has no code for it; `temporarily_unavailable` says "try later".
 */
export class ClientAuthThrottled extends OAuthError {
  constructor(readonly retryAfterSeconds: number) {
    super(429, 'temporarily_unavailable', `Too many failed client authentications; retry in ${retryAfterSeconds} seconds.`, {
      'Retry-After': String(retryAfterSeconds),
    });
  }
}

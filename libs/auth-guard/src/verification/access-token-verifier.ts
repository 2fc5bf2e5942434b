import { ACCESS_TOKEN_ALG, ACCESS_TOKEN_TYP, AccessTokenClaims, CLIENT_ID_PREFIX, REFRESH_TOKEN_PREFIX, SECRET_KEY_PREFIX } from '@invoicing/contracts';
import { createVerifier, TokenError } from 'fast-jwt';

/** Why a token was refused; `description` is safe to send to the caller. */
export class InvalidTokenError extends Error {
  constructor(readonly description: string) {
    // Refused tokens are expected traffic (the 401 path): no stack to capture, none is ever read.
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(description);
    Error.stackTraceLimit = limit;
    this.name = 'InvalidTokenError';
  }
}

/** Why a token is refused, as {@link AccessTokenVerifier.check} answers it: one instance per reason. */
export class TokenRefusal {
  private constructor(
    /** Safe to send to the caller. */
    readonly description: string,
  ) {}

  private static readonly known = new Map<string, TokenRefusal>();

  /** The reasons are a fixed set (see `describe` below), so the map stays small. */
  static of(description: string): TokenRefusal {
    let known = TokenRefusal.known.get(description);
    if (!known) {
      known = Object.freeze(new TokenRefusal(description));
      TokenRefusal.known.set(description, known);
    }
    return known;
  }
}

export function isTokenRefusal(result: AccessTokenClaims | TokenRefusal): result is TokenRefusal {
  return result instanceof TokenRefusal;
}

export interface VerifierOptions {
  keys: ReadonlyMap<string, Buffer>;
  issuer: string;
  audience: string;
  /** Seconds of clock skew tolerated on `exp` (and `nbf`). */
  clockToleranceSeconds?: number;
  /** Accepted tokens remembered (default 10,000); 0 verifies every request in full. */
  cacheSize?: number;
}

const REQUIRED_CLAIMS = ['iss', 'aud', 'sub', 'client_id', 'org_id', 'scope', 'sid', 'jti', 'iat', 'exp'];
const STRING_CLAIMS = ['sub', 'client_id', 'org_id', 'scope', 'sid', 'jti'] as const;
/** A remembered token is verified in full again after this long at most (as fast-jwt's cache did). */
const CACHE_TTL_MS = 10 * 60 * 1000;

/** An accepted token: its claims, and the window in which the full check would accept it again. */
interface Accepted {
  claims: AccessTokenClaims;
  from: number;
  until: number;
}

/**
 * Local, synchronous access-token verification (docs/api.md section 5): the algorithm is pinned to
 * HS256 and the key is chosen by `kid` from the ring, never by the token's own `alg`; `typ`, `iss`,
 * `aud` and `exp` are checked. No I/O: it runs on every request.
 *
 * An accepted token is remembered, keyed by the token string itself, for as long as the full check
 * would accept it (`exp` plus the tolerance, at most 10 minutes): the next request carrying it costs
 * a Map lookup, i.e. V8's hash of the string. fast-jwt's own cache, used before, keyed every lookup
 * by a SHA-256 of the token, which cost more per request than the HMAC it saved (docs/perf.md), and
 * its `cacheKeyBuilder` option warns at start-up. Only accepted tokens are remembered, so refused
 * ones cannot fill it; it is bounded, the oldest entry going first. Revocation is not cached here:
 * the strategy checks it on every request.
 */
export class AccessTokenVerifier {
  private readonly byKid = new Map<string, (token: string) => Record<string, unknown>>();
  private readonly accepted = new Map<string, Accepted>();
  private readonly cacheSize: number;
  private readonly toleranceMs: number;

  constructor(options: VerifierOptions) {
    this.cacheSize = options.cacheSize ?? 10000;
    this.toleranceMs = (options.clockToleranceSeconds ?? 5) * 1000;
    for (const [kid, key] of options.keys) {
      this.byKid.set(
        kid,
        createVerifier({
          key,
          algorithms: [ACCESS_TOKEN_ALG],
          allowedIss: options.issuer,
          allowedAud: options.audience,
          checkTyp: ACCESS_TOKEN_TYP,
          requiredClaims: REQUIRED_CLAIMS,
          clockTolerance: this.toleranceMs,
          // Accepted tokens are remembered by check() below.
          cache: false,
        }),
      );
    }
  }

  /** The token's claims; throws {@link InvalidTokenError} saying why a token is refused. */
  verify(token: string): AccessTokenClaims {
    const result = this.check(token);
    if (isTokenRefusal(result)) throw new InvalidTokenError(result.description);
    return result;
  }

  /**
   * The same decision as {@link verify}, without throwing: the claims, or a {@link TokenRefusal}.
   * A refused token is ordinary traffic (the 401 path); a malformed one or an unknown key is refused
   * without building an exception at all.
   */
  check(token: string): AccessTokenClaims | TokenRefusal {
    const now = Date.now();
    const known = this.accepted.get(token);
    if (known !== undefined) {
      if (now >= known.from && now <= known.until) return known.claims;
      this.accepted.delete(token);
    }
    const kid = readKid(token);
    const verify = kid === null ? undefined : this.byKid.get(kid);
    if (!verify) return kid === null ? notAToken(token) : UNKNOWN_KEY;
    let claims: Record<string, unknown>;
    try {
      claims = verify(token);
    } catch (e) {
      return TokenRefusal.of(describe(e));
    }
    for (const name of STRING_CLAIMS) {
      if (typeof claims[name] !== 'string') return TokenRefusal.of('The access token is malformed.');
    }
    this.remember(token, claims as unknown as AccessTokenClaims, now);
    return claims as unknown as AccessTokenClaims;
  }

  /** The window mirrors fast-jwt's date checks: `nbf - tolerance <= now <= exp + tolerance`. */
  private remember(token: string, claims: AccessTokenClaims, now: number): void {
    if (this.cacheSize <= 0) return;
    const nbf = (claims as { nbf?: unknown }).nbf;
    const from = typeof nbf === 'number' ? nbf * 1000 - this.toleranceMs : -Infinity;
    const until = Math.min(now + CACHE_TTL_MS, claims.exp * 1000 + this.toleranceMs);
    if (this.accepted.size >= this.cacheSize) {
      // A Map iterates in insertion order: its first key is the oldest entry.
      this.accepted.delete(this.accepted.keys().next().value as string);
    }
    this.accepted.set(token, { claims, from, until });
  }
}

/**
 * Headers are few (one per signing key), and every token of one key carries the same first segment:
 * decode each once. Bounded, so that garbage headers cannot grow it.
 */
const kidByHeader = new Map<string, string | null>();

function readKid(token: string): string | null {
  const dot = token.indexOf('.');
  if (dot <= 0 || dot > 512) return null;
  const segment = token.slice(0, dot);
  const known = kidByHeader.get(segment);
  if (known !== undefined) return known;
  const kid = decodeKid(segment);
  if (kid !== null && kidByHeader.size < 64) kidByHeader.set(segment, kid);
  return kid;
}

function decodeKid(segment: string): string | null {
  try {
    const header = JSON.parse(Buffer.from(segment, 'base64url').toString('utf8')) as unknown;
    const kid = (header as { kid?: unknown } | null)?.kid;
    return typeof kid === 'string' ? kid : null;
  } catch {
    return null;
  }
}

function describe(e: unknown): string {
  if (e instanceof TokenError) {
    switch (e.code) {
      case TokenError.codes.expired:
        return 'The access token expired.';
      case TokenError.codes.invalidSignature:
        return 'The access token signature is invalid.';
      case TokenError.codes.invalidAlgorithm:
        return 'The access token is not signed with HS256.';
      case TokenError.codes.invalidType:
        return 'The token is not an access token.';
      case TokenError.codes.invalidClaimValue:
      case TokenError.codes.missingRequiredClaim:
        return 'The access token was not issued for this API.';
      case TokenError.codes.inactive:
        return 'The access token is not valid yet.';
      default:
        return 'The access token is malformed.';
    }
  }
  return 'The access token is malformed.';
}

const UNKNOWN_KEY = TokenRefusal.of('The access token is malformed or signed with an unknown key.');

/**
 * A Bearer value that is not a JWT at all. The credentials integrators most often send there by
 * mistake are named, with the way to an access token: the refusal points at the fix. Checked on the
 * prefix alone; nothing of the value is echoed.
 */
function notAToken(token: string): TokenRefusal {
  if (token.startsWith(SECRET_KEY_PREFIX) || token.startsWith(CLIENT_ID_PREFIX)) {
    return TokenRefusal.of(
      'This is an API key credential, not an access token: exchange the API Key and Secret Key at POST /api/v1/auth/token (grant_type=client_credentials) and send the access_token it returns.',
    );
  }
  if (token.startsWith(REFRESH_TOKEN_PREFIX)) {
    return TokenRefusal.of('This is a refresh token, not an access token: exchange it at POST /api/v1/auth/token (grant_type=refresh_token) and send the access_token it returns.');
  }
  return UNKNOWN_KEY;
}

import { ACCESS_TOKEN_ALG, ACCESS_TOKEN_TYP, AccessTokenClaims } from '@invoicing/contracts';
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

export interface VerifierOptions {
  keys: ReadonlyMap<string, Buffer>;
  issuer: string;
  audience: string;
  /** Seconds of clock skew tolerated on `exp`/`iat`. */
  clockToleranceSeconds?: number;
}

const REQUIRED_CLAIMS = ['iss', 'aud', 'sub', 'client_id', 'org_id', 'scope', 'sid', 'jti', 'iat', 'exp'];
const STRING_CLAIMS = ['sub', 'client_id', 'org_id', 'scope', 'sid', 'jti'] as const;

/**
 * Local, synchronous access-token verification (contract section 5): the algorithm is pinned to
 * HS256 and the key is chosen by `kid` from the ring, never by the token's own `alg`; `typ`, `iss`,
 * `aud` and `exp` are checked. No I/O: it runs on every request.
 */
export class AccessTokenVerifier {
  private readonly byKid = new Map<string, (token: string) => Record<string, unknown>>();

  constructor(options: VerifierOptions) {
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
          clockTolerance: (options.clockToleranceSeconds ?? 5) * 1000,
          // Verified results are cached per token until they expire; revocation is checked separately.
          cache: 10000,
        }),
      );
    }
  }

  verify(token: string): AccessTokenClaims {
    const kid = readKid(token);
    const verify = kid === null ? undefined : this.byKid.get(kid);
    if (!verify) throw new InvalidTokenError('The access token is malformed or signed with an unknown key.');
    let claims: Record<string, unknown>;
    try {
      claims = verify(token);
    } catch (e) {
      throw new InvalidTokenError(describe(e));
    }
    for (const name of STRING_CLAIMS) {
      if (typeof claims[name] !== 'string') throw new InvalidTokenError('The access token is malformed.');
    }
    return claims as unknown as AccessTokenClaims;
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

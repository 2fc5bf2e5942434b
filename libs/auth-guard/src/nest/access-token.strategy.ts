import { Injectable } from '@nestjs/common';
import { AddressAllowlist, parsePublicId, parseAllowedIps, type AccessTokenClaims } from '@invoicing/contracts';
import { PassportStrategy } from '@nestjs/passport';
import { ProblemException } from '@invoicing/service-kit';
import { AccessTokenVerifier, isTokenRefusal } from '../verification/access-token-verifier';
import { RevocationFeed } from '../revocation/revocation-feed';
import { RevocationView } from '../revocation/revocation-view';
import { BearerFailure, bearerFailure, HeaderBearerStrategy, readBearer } from './bearer.strategy';
import type { CallerIdentity } from './caller';

export const ACCESS_TOKEN_STRATEGY = 'access-token';

/** As the verifier answers a claim of the wrong type: a signed `org_id` that is no organization id. */
const INVALID_ORGANIZATION = 'The access token is malformed.';

export const REVOCATIONS_UNAVAILABLE_DETAIL =
  'This service cannot confirm right now that access tokens have not been revoked (its revocation feed is unavailable); retry shortly.';
/** Seconds a client is asked to wait: the feed has been cut for at least `maxStalenessMs` already. */
export const REVOCATIONS_UNAVAILABLE_RETRY_AFTER_SECONDS = 5;

/**
 * The answer to a valid token while the revocation view is stale (ADR 0017): 503 problem+json with
 * Retry-After. One immutable, stackless instance, as for the 401s: an outage is no time to allocate
 * per refusal.
 */
export const REVOCATIONS_UNAVAILABLE = new ProblemException(
  503,
  REVOCATIONS_UNAVAILABLE_DETAIL,
  undefined,
  Object.freeze({ 'Retry-After': String(REVOCATIONS_UNAVAILABLE_RETRY_AFTER_SECONDS) }),
);

export const ADDRESS_NOT_ALLOWED_DETAIL =
  "The access token may not be used from this client address: its API key's allowed_ips do not include it.";

/**
 * The answer to a valid token presented from outside its key's allowlist (ADR 0023): 403
 * problem+json naming the reason. The token is genuine, so no challenge: a new token would not help.
 */
export const ADDRESS_NOT_ALLOWED = new ProblemException(403, ADDRESS_NOT_ALLOWED_DETAIL);

/**
 * Signature and claims, then the in-memory revocation view: no network I/O on this path. A token
 * that fails either is refused (401) as always; a valid one the view does not know as revoked is
 * accepted only while the view is fresh, else the request is answered 503 (ADR 0017).
 */
@Injectable()
export class AccessTokenStrategy extends PassportStrategy(HeaderBearerStrategy, ACCESS_TOKEN_STRATEGY) {
  constructor(
    private readonly verifier: AccessTokenVerifier,
    private readonly revocations: RevocationView,
    private readonly feed: RevocationFeed,
  ) {
    super();
  }

  /**
   * The verifier's cache hands back the same claims object for a token it has seen, so the caller
   * built from it is kept beside it: a repeated token costs no allocation here.
   */
  private readonly callers = new WeakMap<AccessTokenClaims, CallerIdentity>();

  /**
   * The whole check for one request, synchronously: what passport runs through `authenticate` and
   * `validate`, without passport's per-request context (see AccessTokenGuard). Throws
   * {@link REVOCATIONS_UNAVAILABLE} while the revocation view is stale.
   */
  authenticateHeader(header: string | undefined, address: string | undefined): CallerIdentity | BearerFailure {
    const token = readBearer(header);
    if (typeof token !== 'string') return token;
    const result = this.validate(token, address);
    return Array.isArray(result) ? bearerFailure(result[1]) : result;
  }

  /**
   * The caller of a valid, unrevoked token, or why it is refused; throws while the view is stale,
   * and {@link ADDRESS_NOT_ALLOWED} when `address` (the client's, as Fastify resolved it through
   * TRUSTED_PROXIES) is outside the key's allowlist.
   */
  validate(token: string, address?: string): CallerIdentity | [false, string] {
    // check() answers a refused token without an exception: the 401 path is ordinary traffic.
    const claims = this.verifier.check(token);
    if (isTokenRefusal(claims)) return [false, claims.description];
    // Checked on every request, never cached: a revocation applies to tokens already seen.
    if (this.revocations.isRevoked(claims)) return [false, 'The access token has been revoked.'];
    let caller = this.callers.get(claims);
    if (!caller || caller.accessToken !== token) {
      // The one place the organization claim is parsed: past the guard, code holds the uuid.
      const organizationId = parsePublicId('org', claims.org_id);
      if (organizationId === null) return [false, INVALID_ORGANIZATION];
      const allowlist = allowlistOf(claims);
      if (allowlist === false) return [false, INVALID_ORGANIZATION];
      caller = {
        organizationId,
        organizationPublicId: claims.org_id,
        apiKeyId: claims.sub,
        clientId: claims.client_id,
        sessionId: claims.sid,
        scopes: new Set(claims.scope.split(' ')),
        tokenId: claims.jti,
        accessToken: token,
        allowlist,
      };
      this.callers.set(claims, caller);
    }
    // Not known as revoked, but the view has heard nothing from Kafka for too long to vouch for it:
    // fail closed (ADR 0017). Invalid, expired and known-revoked tokens keep their 401 above: that
    // answer does not depend on the feed, and a 503 would only invite the client to retry it.
    // Likewise while the view is past its bound on keys (RevocationView.overflowed).
    if (this.feed.stale || this.revocations.overflowed) throw REVOCATIONS_UNAVAILABLE;
    // The key's allowlist: as changed since the token was issued if it was (the view), else the
    // token's own. A key without one costs a null check and, while no list has changed, a size read.
    const changed = this.revocations.changedAllowlist(caller.apiKeyId);
    const allowlist = changed === undefined ? caller.allowlist : changed;
    if (allowlist !== null && !allowlist.allows(address)) throw ADDRESS_NOT_ALLOWED;
    return caller;
  }
}

/**
 * The token's `allowed_ips` claim as a matcher: null when absent (any address), false when it is
 * not a list of canonical entries. The auth service signs only canonical lists; checking again costs
 * once per token, and a list that would not parse is no list to trust.
 */
function allowlistOf(claims: AccessTokenClaims): AddressAllowlist | null | false {
  const entries: unknown = claims.allowed_ips;
  if (entries === undefined) return null;
  const parsed = parseAllowedIps(entries);
  if (!parsed.ok || parsed.value.length === 0 || parsed.value.join(',') !== (entries as string[]).join(',')) return false;
  return AddressAllowlist.of(parsed.value);
}

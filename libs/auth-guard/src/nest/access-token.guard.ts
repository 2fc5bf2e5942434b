import { ExecutionContext, Injectable } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { ProblemException } from '@invoicing/service-kit';
import type { IncomingHttpHeaders } from 'node:http';
import { ACCESS_TOKEN_STRATEGY, AccessTokenStrategy } from './access-token.strategy';
import { bearerChallenge, BearerFailure, bearerFailure } from './bearer.strategy';
import type { CallerIdentity } from './caller';
import { SCOPES_METADATA } from './scopes.decorator';

/**
 * Authenticates the request's access token (401 with an RFC 6750 challenge otherwise) and checks
 * the handler's `@Scopes()` (403 `insufficient_scope` naming the missing scope). While the
 * revocation view is stale, a valid token is answered 503 with Retry-After before its scopes are
 * looked at (ADR 0017).
 */
@Injectable()
export class AccessTokenGuard extends AuthGuard(ACCESS_TOKEN_STRATEGY) {
  constructor(
    private readonly reflector: Reflector,
    private readonly strategy: AccessTokenStrategy,
  ) {
    super({ session: false });
  }

  /**
   * The registered passport strategy decides, as under `AuthGuard`, but called directly:
   * `@nestjs/passport`'s own `canActivate` builds a passport context, a closure per request and
   * two promises around a check that is synchronous and costs ~0.5 µs; that wrapping was 16 µs of
   * the 17 µs a request spent here (docs/perf.md). The strategy stays registered with passport, so
   * `AuthGuard('access-token')` elsewhere behaves the same, and failures still go through
   * `handleRequest`.
   */
  override canActivate(context: ExecutionContext): boolean {
    // The request is the first argument of an HTTP context. `switchToHttp()` would assign three new
    // closures to the context on every call just to hand it back.
    const request = context.getArgByIndex<{ headers: IncomingHttpHeaders; ip?: string; user?: CallerIdentity }>(0);
    // `ip`: Fastify's client address, the socket's or what a TRUSTED_PROXIES peer forwarded.
    const outcome = this.strategy.authenticateHeader(request.headers.authorization, request.ip);
    request.user = isBearerFailure(outcome)
      ? this.handleRequest(null, false, outcome, context)
      : this.handleRequest(null, outcome, undefined, context);
    return true;
  }

  override handleRequest<TUser = CallerIdentity>(
    error: unknown,
    user: unknown,
    info: unknown,
    context: ExecutionContext,
  ): TUser {
    if (error) throw error;
    if (!user) {
      // The strategy hands its failure over as it is: challenge and detail, nothing to parse back.
      throw unauthorized(isBearerFailure(info) ? info : bearerFailure());
    }
    const caller = user as CallerIdentity;
    const required = this.requiredScopes(context);
    for (const scope of required) {
      if (!caller.scopes.has(scope)) {
        const missing = required.filter((s) => !caller.scopes.has(s)).join(' ');
        throw new ProblemException(403, `The access token lacks the scope ${missing}.`, undefined, {
          'WWW-Authenticate': bearerChallenge('insufficient_scope', undefined, missing),
        });
      }
    }
    return user as TUser;
  }

  /** `@Scopes()` of the handler (or its class), read once per handler rather than per request. */
  private readonly scopesByHandler = new WeakMap<object, readonly string[]>();
  private requiredScopes(context: ExecutionContext): readonly string[] {
    const handler = context.getHandler();
    let scopes = this.scopesByHandler.get(handler);
    if (!scopes) {
      scopes = this.reflector.getAllAndOverride<string[] | undefined>(SCOPES_METADATA, [handler, context.getClass()]) ?? [];
      this.scopesByHandler.set(handler, scopes);
    }
    return scopes;
  }
}

/**
 * The 401 of each failure, built once: failures are a fixed set (bearerFailure), and the exception
 * is immutable (frozen headers, no stack), so throwing the same instance for every request refused
 * for the same reason answers exactly as a new one would, without an allocation per refusal.
 */
const unauthorizedByFailure = new WeakMap<BearerFailure, ProblemException>();
function unauthorized(failure: BearerFailure): ProblemException {
  let exception = unauthorizedByFailure.get(failure);
  if (!exception) {
    exception = new ProblemException(401, failure.detail, undefined, Object.freeze({ 'WWW-Authenticate': failure.challenge }));
    unauthorizedByFailure.set(failure, exception);
  }
  return exception;
}

function isBearerFailure(info: unknown): info is BearerFailure {
  return typeof info === 'object' && info !== null && typeof (info as BearerFailure).challenge === 'string';
}

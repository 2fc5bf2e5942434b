import { CanActivate, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import type { CallerIdentity } from '@invoicing/auth-guard';
import { ProblemException } from '@invoicing/service-kit';
import { RateLimiter } from './rate-limiter';

/** Runs after AccessTokenGuard: 429 problem+json with Retry-After when the caller's key is over its rate. */
@Injectable()
export class RateLimitGuard implements CanActivate {
  constructor(@Inject(RateLimiter) private readonly limiter: RateLimiter) {}

  canActivate(context: ExecutionContext): boolean {
    // The request is an HTTP context's first argument (switchToHttp() would build three closures).
    const caller = context.getArgByIndex<{ user?: CallerIdentity }>(0).user;
    if (!caller) return true;
    const wait = this.limiter.take(caller.apiKeyId);
    if (wait > 0) {
      throw new ProblemException(429, `Too many requests for this API key; retry in ${wait} seconds.`, undefined, {
        'Retry-After': String(wait),
      });
    }
    return true;
  }
}

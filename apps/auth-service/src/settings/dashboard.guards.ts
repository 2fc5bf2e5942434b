import { CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ProblemException } from '@invoicing/service-kit';
import type { FastifyRequest } from 'fastify';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { DashboardSessions, DashboardUser } from './dashboard-sessions';
import { SessionCookies } from './session-cookies';

type DashboardRequest = FastifyRequest & { dashboardUser?: DashboardUser };

/** Requires a settings-area session cookie; 401 problem+json otherwise. */
@Injectable()
export class DashboardSessionGuard implements CanActivate {
  constructor(
    private readonly sessions: DashboardSessions,
    private readonly cookies: SessionCookies,
  ) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<DashboardRequest>();
    const user = await this.sessions.find(this.cookies.session(request));
    if (!user) throw new ProblemException(401, 'Sign in to continue.');
    request.dashboardUser = user;
    return true;
  }
}

/** A loopback origin (any port): only a process on the caller's own machine serves one. */
const LOOPBACK_ORIGIN = /^https?:\/\/(?:localhost|127\.0\.0\.1|\[::1\])(?::\d{1,5})?$/;

/**
 * Cross-site request forgery protection for state-changing settings calls, on top of SameSite=Strict
 * cookies (ADR 0022), three checks, each enough on its own against a plain cross-site form:
 * - `X-CSRF-Token` must be the token issued for this session and nonce cookie (SessionCookies);
 * - fetch metadata: a browser's `Sec-Fetch-Site` other than same-origin (or none, a typed URL) is refused;
 * - an `Origin`, when sent, must be one of the configured origins: compared as a string, never with
 *   the Host header, which a DNS-rebinding page controls.
 * A request with neither header is not a browser's cross-site request (browsers send Origin on every
 * POST); the token still has to verify.
 */
@Injectable()
export class CsrfGuard implements CanActivate {
  private readonly origins: ReadonlySet<string>;
  private readonly loopbackAllowed: boolean;

  constructor(
    @Inject(AUTH_CONFIG) config: AuthConfig,
    private readonly cookies: SessionCookies,
  ) {
    this.origins = new Set(config.ALLOWED_ORIGINS.length > 0 ? config.ALLOWED_ORIGINS : [new URL(config.JWT_ISSUER).origin]);
    this.loopbackAllowed = config.ALLOWED_ORIGINS.length === 0 && config.NODE_ENV !== 'production';
  }

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const site = request.headers['sec-fetch-site'];
    if (site !== undefined && site !== 'same-origin' && site !== 'none') {
      throw new ProblemException(403, 'Cross-site requests are not allowed here.');
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !this.originAllowed(origin)) {
      throw new ProblemException(403, 'Cross-origin requests are not allowed here.');
    }
    if (!this.cookies.csrfValid(request)) {
      throw new ProblemException(403, 'The CSRF token is missing or invalid; reload the page and try again.');
    }
    return true;
  }

  private originAllowed(origin: string): boolean {
    return this.origins.has(origin) || (this.loopbackAllowed && LOOPBACK_ORIGIN.test(origin));
  }
}

/** The signed-in settings-area user (set by DashboardSessionGuard). */
export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): DashboardUser => {
  const user = context.switchToHttp().getRequest<DashboardRequest>().dashboardUser;
  if (!user) throw new Error('@CurrentUser() used without DashboardSessionGuard');
  return user;
});

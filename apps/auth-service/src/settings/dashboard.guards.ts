import { CanActivate, createParamDecorator, ExecutionContext, Inject, Injectable } from '@nestjs/common';
import { ProblemException } from '@invoicing/service-kit';
import type { FastifyRequest } from 'fastify';
import { timingSafeEqual } from 'node:crypto';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { CSRF_COOKIE, DashboardSessions, DashboardUser, SESSION_COOKIE } from './dashboard-sessions';

type DashboardRequest = FastifyRequest & { dashboardUser?: DashboardUser };

/** Requires a settings-area session cookie; 401 problem+json otherwise. */
@Injectable()
export class DashboardSessionGuard implements CanActivate {
  constructor(private readonly sessions: DashboardSessions) {}

  async canActivate(context: ExecutionContext): Promise<boolean> {
    const request = context.switchToHttp().getRequest<DashboardRequest>();
    const user = await this.sessions.find(request.cookies?.[SESSION_COOKIE]);
    if (!user) throw new ProblemException(401, 'Sign in to continue.');
    request.dashboardUser = user;
    return true;
  }
}

/**
 * Cross-site request forgery protection for state-changing settings calls, on top of SameSite=Strict
 * cookies: the `X-CSRF-Token` header must equal the `csrf_token` cookie (a cross-site page can
 * neither read the cookie nor set the header), and an `Origin`, when sent, must be this site.
 */
@Injectable()
export class CsrfGuard implements CanActivate {
  constructor(@Inject(AUTH_CONFIG) private readonly config: AuthConfig) {}

  canActivate(context: ExecutionContext): boolean {
    const request = context.switchToHttp().getRequest<FastifyRequest>();
    const header = request.headers['x-csrf-token'];
    const cookie = request.cookies?.[CSRF_COOKIE];
    if (typeof header !== 'string' || !cookie || !sameText(header, cookie)) {
      throw new ProblemException(403, 'The CSRF token is missing or invalid; reload the page and try again.');
    }
    const origin = request.headers.origin;
    if (origin !== undefined && !this.originAllowed(origin, request)) {
      throw new ProblemException(403, 'Cross-origin requests are not allowed here.');
    }
    return true;
  }

  private originAllowed(origin: string, request: FastifyRequest): boolean {
    if (this.config.ALLOWED_ORIGINS.length > 0) return this.config.ALLOWED_ORIGINS.includes(origin);
    try {
      // With trustProxy, request.host is the gateway's X-Forwarded-Host when there is one.
      return new URL(origin).host === request.host;
    } catch {
      return false;
    }
  }
}

function sameText(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  return x.length === y.length && timingSafeEqual(x, y);
}

/** The signed-in settings-area user (set by DashboardSessionGuard). */
export const CurrentUser = createParamDecorator((_data: unknown, context: ExecutionContext): DashboardUser => {
  const user = context.switchToHttp().getRequest<DashboardRequest>().dashboardUser;
  if (!user) throw new Error('@CurrentUser() used without DashboardSessionGuard');
  return user;
});

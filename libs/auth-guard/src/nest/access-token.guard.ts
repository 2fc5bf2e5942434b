import { ExecutionContext, ForbiddenException, Injectable, UnauthorizedException } from '@nestjs/common';
import { Reflector } from '@nestjs/core';
import { AuthGuard } from '@nestjs/passport';
import { ACCESS_TOKEN_STRATEGY } from './access-token.strategy';
import { bearerChallenge } from './bearer.strategy';
import type { CallerIdentity } from './caller';
import { SCOPES_METADATA } from './scopes.decorator';

interface ReplyWithHeaders {
  header(name: string, value: string): unknown;
}

/**
 * Authenticates the request's access token (401 with an RFC 6750 challenge otherwise) and checks
 * the handler's `@Scopes()` (403 `insufficient_scope` naming the missing scope).
 */
@Injectable()
export class AccessTokenGuard extends AuthGuard(ACCESS_TOKEN_STRATEGY) {
  constructor(private readonly reflector: Reflector) {
    super({ session: false });
  }

  override handleRequest<TUser = CallerIdentity>(
    error: unknown,
    user: unknown,
    info: unknown,
    context: ExecutionContext,
  ): TUser {
    if (error) throw error;
    const reply = context.switchToHttp().getResponse<ReplyWithHeaders>();
    if (!user) {
      reply.header('WWW-Authenticate', typeof info === 'string' ? info : bearerChallenge());
      throw new UnauthorizedException(
        typeof info === 'string' && info.includes('error_description')
          ? info.replace(/^.*error_description="([^"]*)".*$/, '$1')
          : 'An access token is required (Authorization: Bearer <token>).',
      );
    }
    const caller = user as CallerIdentity;
    const required =
      this.reflector.getAllAndOverride<string[] | undefined>(SCOPES_METADATA, [context.getHandler(), context.getClass()]) ?? [];
    const missing = required.filter((s) => !caller.scopes.has(s));
    if (missing.length > 0) {
      const scope = missing.join(' ');
      reply.header('WWW-Authenticate', bearerChallenge('insufficient_scope', undefined, scope));
      throw new ForbiddenException(`The access token lacks the scope ${scope}.`);
    }
    return user as TUser;
  }
}

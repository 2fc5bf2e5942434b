import { Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { GrantRegistry } from './grants/grant-registry';
import { RefreshTokenGrant } from './grants/refresh-token.grant';
import type { TokenResponse } from './token-pair';
import { parseRevocationRequest, TokenRevocationService } from './token-revocation.service';

/**
 * RFC 6749 token endpoints and RFC 7009 revocation. JSON or form bodies; every error of these
 * routes, including those Fastify raises before a handler, is written in RFC 6749 section 5.2 form
 * by the edge (`errorForm` in auth-app.ts, ADR 0006). Each grant reads its own parameters
 * (`grants/`); this controller only routes.
 */
@Controller('api/v1/auth')
export class TokenController {
  constructor(
    private readonly grants: GrantRegistry,
    private readonly refreshTokens: RefreshTokenGrant,
    private readonly revocations: TokenRevocationService,
  ) {}

  @Post('token')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  token(@Req() request: FastifyRequest): Promise<TokenResponse> {
    return this.grants.handle(request.body, request.headers.authorization, request.ip);
  }

  /** The refresh grant's own door (docs/api.md section 4): `{refresh_token}`, no client authentication. */
  @Post('refresh')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  refresh(@Req() request: FastifyRequest): Promise<TokenResponse> {
    return this.refreshTokens.handleRefreshEndpoint(request.body, request.ip);
  }

  /** RFC 7009: 200 with an empty body whether or not there was anything to revoke. */
  @Post('revoke')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  async revoke(@Req() request: FastifyRequest): Promise<void> {
    await this.revocations.revoke(parseRevocationRequest(request.body, request.headers.authorization), request.ip);
  }
}

import { Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { RefreshService } from './refresh.service';
import type { TokenResponse } from './token-pair';
import { TokenRevocationService } from './token-revocation.service';
import { TokenExchangeService } from './token-exchange.service';
import { parseRefreshRequest, parseRevocationRequest, parseTokenRequest } from './token-request';

/**
 * RFC 6749 token endpoints and RFC 7009 revocation. JSON or form bodies; errors in RFC 6749 section
 * 5.2 form (rendered by `sendOAuthError`, which the app uses for every error under /api/v1/auth/).
 */
@Controller('api/v1/auth')
export class TokenController {
  constructor(
    private readonly exchange: TokenExchangeService,
    private readonly refreshes: RefreshService,
    private readonly revocations: TokenRevocationService,
  ) {}

  @Post('token')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  token(@Req() request: FastifyRequest): Promise<TokenResponse> {
    const grant = parseTokenRequest(request.body, request.headers.authorization);
    return grant.grantType === 'refresh_token' ? this.refreshes.refreshGrant(grant, request.ip) : this.exchange.exchange(grant, request.ip);
  }

  @Post('refresh')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  refresh(@Req() request: FastifyRequest): Promise<TokenResponse> {
    return this.refreshes.refresh(parseRefreshRequest(request.body).refreshToken, { address: request.ip });
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

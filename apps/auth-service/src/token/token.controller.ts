import { Controller, Header, HttpCode, Post, Req } from '@nestjs/common';
import type { FastifyRequest } from 'fastify';
import { RefreshService } from '../refresh/refresh.service';
import type { TokenResponse } from '../issuance/token-pair';
import { TokenExchangeService } from './token-exchange.service';
import { parseClientCredentialsRequest, parseRefreshRequest } from './token-request';

/**
 * RFC 6749 token endpoints. JSON or form bodies; errors in RFC 6749 section 5.2 form (rendered by
 * `sendOAuthError`, which the app uses for every error under /api/v1/auth/).
 */
@Controller('api/v1/auth')
export class TokenController {
  constructor(
    private readonly exchange: TokenExchangeService,
    private readonly refreshes: RefreshService,
  ) {}

  @Post('token')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  token(@Req() request: FastifyRequest): Promise<TokenResponse> {
    return this.exchange.exchange(parseClientCredentialsRequest(request.body, request.headers.authorization), request.ip);
  }

  @Post('refresh')
  @HttpCode(200)
  @Header('Cache-Control', 'no-store')
  @Header('Pragma', 'no-cache')
  refresh(@Req() request: FastifyRequest): Promise<TokenResponse> {
    return this.refreshes.refresh(parseRefreshRequest(request.body).refreshToken);
  }
}

import { Controller, Get, Header, HttpCode, Inject, Post, Req, Res, UseGuards } from '@nestjs/common';
import { compileBody } from '@invoicing/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { LOGIN_SCHEMA, LoginRequest, SIGNUP_SCHEMA, SignupRequest } from '@invoicing/contracts';
import { AccountsService, AccountView } from './accounts.service';
import { CsrfGuard, CurrentUser, DashboardSessionGuard } from './dashboard.guards';
import { DashboardSessions, DashboardUser, SESSION_COOKIE } from './dashboard-sessions';
import { SessionCookies } from './session-cookies';

const validateSignup = compileBody<SignupRequest>(SIGNUP_SCHEMA);
const validateLogin = compileBody<LoginRequest>(LOGIN_SCHEMA);

/** Accounts of the settings area (contract section 9). */
@Controller('api/v1/account')
export class AccountController {
  private readonly cookies: SessionCookies;

  constructor(
    private readonly accounts: AccountsService,
    private readonly sessions: DashboardSessions,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.cookies = new SessionCookies(config.COOKIE_SECURE ? config.COOKIE_SECURE === 'true' : config.NODE_ENV === 'production');
  }

  @Get('csrf')
  @Header('Cache-Control', 'no-store')
  csrf(@Res({ passthrough: true }) reply: FastifyReply): { csrf_token: string } {
    return { csrf_token: this.cookies.rotateCsrf(reply) };
  }

  @Post('signup')
  @UseGuards(CsrfGuard)
  @Header('Cache-Control', 'no-store')
  async signup(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<AccountView> {
    const { user, view } = await this.accounts.signup(validateSignup(request.body));
    await this.startSession(reply, user);
    void reply.status(201);
    return view;
  }

  @Post('login')
  @HttpCode(200)
  @UseGuards(CsrfGuard)
  @Header('Cache-Control', 'no-store')
  async login(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<AccountView> {
    const { user, view } = await this.accounts.login(validateLogin(request.body), request.ip);
    await this.sessions.end(request.cookies?.[SESSION_COOKIE]);
    await this.startSession(reply, user);
    return view;
  }

  @Post('logout')
  @HttpCode(204)
  @UseGuards(CsrfGuard)
  async logout(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    await this.sessions.end(request.cookies?.[SESSION_COOKIE]);
    this.cookies.clearSession(reply);
    this.cookies.rotateCsrf(reply);
  }

  @Get('me')
  @UseGuards(DashboardSessionGuard)
  @Header('Cache-Control', 'no-store')
  me(@CurrentUser() user: DashboardUser): Promise<AccountView> {
    return this.accounts.me(user);
  }

  /** A new session id on every sign-in (no fixation) and a new CSRF token with it. */
  private async startSession(reply: FastifyReply, user: DashboardUser): Promise<void> {
    this.cookies.setSession(reply, await this.sessions.start(user));
    this.cookies.rotateCsrf(reply);
  }
}

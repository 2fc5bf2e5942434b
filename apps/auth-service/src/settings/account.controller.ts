import { Controller, Get, Header, HttpCode, Post, Req, Res, UseGuards } from '@nestjs/common';
import { compileBody } from '@invoicing/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { LOGIN_SCHEMA, LoginRequest, SIGNUP_SCHEMA, SignupRequest } from '@invoicing/contracts';
import { AccountsService, AccountView } from './accounts.service';
import { CsrfGuard, CurrentUser, DashboardSessionGuard } from './dashboard.guards';
import { DashboardSessions, DashboardUser } from './dashboard-sessions';
import { SessionCookies } from './session-cookies';

const validateSignup = compileBody<SignupRequest>(SIGNUP_SCHEMA);
const validateLogin = compileBody<LoginRequest>(LOGIN_SCHEMA);

/** Accounts of the settings area (docs/api.md section 9). */
@Controller('api/v1/account')
export class AccountController {
  constructor(
    private readonly accounts: AccountsService,
    private readonly sessions: DashboardSessions,
    private readonly cookies: SessionCookies,
  ) {}

  /** A CSRF token for the session the request carries (none before sign-in). */
  @Get('csrf')
  @Header('Cache-Control', 'no-store')
  csrf(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): { csrf_token: string } {
    return { csrf_token: this.cookies.issueCsrf(reply, this.cookies.session(request)) };
  }

  @Post('signup')
  @UseGuards(CsrfGuard)
  @Header('Cache-Control', 'no-store')
  async signup(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<AccountView> {
    const { user, view } = await this.accounts.signup(validateSignup(request.body), request.ip);
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
    await this.sessions.end(this.cookies.session(request));
    await this.startSession(reply, user);
    return view;
  }

  @Post('logout')
  @HttpCode(204)
  @UseGuards(CsrfGuard)
  async logout(@Req() request: FastifyRequest, @Res({ passthrough: true }) reply: FastifyReply): Promise<void> {
    const token = this.cookies.session(request);
    const user = await this.sessions.find(token);
    await this.sessions.end(token);
    if (user) await this.accounts.loggedOut(user, request.ip);
    this.cookies.clearSession(reply);
    this.cookies.issueCsrf(reply, undefined);
  }

  @Get('me')
  @UseGuards(DashboardSessionGuard)
  @Header('Cache-Control', 'no-store')
  me(@CurrentUser() user: DashboardUser): Promise<AccountView> {
    return this.accounts.me(user);
  }

  /**
   * A new session id on every sign-in (no fixation) and a new nonce with it: tokens issued before
   * sign-in no longer verify; the page fetches a fresh one (GET /csrf).
   */
  private async startSession(reply: FastifyReply, user: DashboardUser): Promise<void> {
    const session = await this.sessions.start(user);
    this.cookies.setSession(reply, session);
    this.cookies.issueCsrf(reply, session);
  }
}

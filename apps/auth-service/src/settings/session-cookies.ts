import type { FastifyReply } from 'fastify';
import { randomBytes } from 'node:crypto';
import { CSRF_COOKIE, SESSION_COOKIE, SESSION_TTL_SECONDS } from './dashboard-sessions';

/** Cookie attributes in one place: HttpOnly session, SameSite=Strict everywhere, Secure in production. */
export class SessionCookies {
  constructor(private readonly secure: boolean) {}

  setSession(reply: FastifyReply, token: string): void {
    void reply.setCookie(SESSION_COOKIE, token, {
      path: '/',
      httpOnly: true,
      sameSite: 'strict',
      secure: this.secure,
      maxAge: SESSION_TTL_SECONDS,
    });
  }

  clearSession(reply: FastifyReply): void {
    void reply.clearCookie(SESSION_COOKIE, { path: '/', httpOnly: true, sameSite: 'strict', secure: this.secure });
  }

  /** A fresh CSRF token, set as a cookie readable by the page; returned for the JSON body. */
  rotateCsrf(reply: FastifyReply): string {
    const token = randomBytes(24).toString('base64url');
    void reply.setCookie(CSRF_COOKIE, token, { path: '/', httpOnly: false, sameSite: 'strict', secure: this.secure });
    return token;
  }
}

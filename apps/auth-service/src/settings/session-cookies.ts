import { Inject, Injectable } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash, createHmac, randomBytes, timingSafeEqual } from 'node:crypto';
import { AUTH_CONFIG, AuthConfig, derivedSecrets } from '../config/config';
import { SESSION_TTL_SECONDS } from './dashboard-sessions';

/**
 * The settings area's cookies and CSRF tokens in one place (ADR 0008, ADR 0022).
 *
 * Cookies: SameSite=Strict and Path=/ everywhere; outside development they are Secure and carry the
 * `__Host-` prefix, which a browser accepts only from a secure origin, without a Domain: no sibling
 * subdomain can plant or overwrite them.
 *
 * CSRF: the token the page sends in `X-CSRF-Token` is an HMAC, keyed by the JWT key ring, of a
 * random nonce (an HttpOnly cookie) and of the session cookie, or of no session before sign-in.
 * A pair that merely matches (cookie `x`, header `x`) proves nothing; a token minted for another
 * session, or before this one started, does not verify. Keyed by the ring so every auth instance
 * agrees without another secret to distribute; it verifies against every key of the ring, so a
 * signing-key rotation does not refuse a page loaded before it.
 */
@Injectable()
export class SessionCookies {
  readonly secure: boolean;
  readonly sessionName: string;
  readonly nonceName: string;
  private readonly keys: Buffer[];
  private readonly signingKey: Buffer;

  constructor(@Inject(AUTH_CONFIG) config: AuthConfig) {
    this.secure = config.COOKIE_SECURE ? config.COOKIE_SECURE === 'true' : config.NODE_ENV !== 'development';
    const prefix = this.secure ? '__Host-' : '';
    this.sessionName = `${prefix}session`;
    this.nonceName = `${prefix}csrf_nonce`;
    const secrets = derivedSecrets(config, 'invoicing settings csrf v1');
    this.keys = secrets.all;
    this.signingKey = secrets.signing;
  }

  session(request: FastifyRequest): string | undefined {
    return request.cookies?.[this.sessionName];
  }

  setSession(reply: FastifyReply, token: string): void {
    void reply.setCookie(this.sessionName, token, { ...this.attributes(), httpOnly: true, maxAge: SESSION_TTL_SECONDS });
  }

  clearSession(reply: FastifyReply): void {
    void reply.clearCookie(this.sessionName, { ...this.attributes(), httpOnly: true });
  }

  /**
   * A fresh CSRF token bound to `session` (the session cookie the next calls will carry; undefined
   * before sign-in): a new nonce cookie, and the token returned for the page to send back.
   */
  issueCsrf(reply: FastifyReply, session: string | undefined): string {
    const nonce = randomBytes(24).toString('base64url');
    void reply.setCookie(this.nonceName, nonce, { ...this.attributes(), httpOnly: true });
    return this.mac(this.signingKey, nonce, session);
  }

  /** Whether the request's `X-CSRF-Token` was issued for its nonce cookie and its session cookie. */
  csrfValid(request: FastifyRequest): boolean {
    const header = request.headers['x-csrf-token'];
    const nonce = request.cookies?.[this.nonceName];
    if (typeof header !== 'string' || header.length > 100 || !nonce || nonce.length > 100) return false;
    const presented = Buffer.from(header);
    const session = this.session(request);
    let valid = false;
    // Every key, always: the answer's timing does not tell which key (if any) matched.
    for (const key of this.keys) {
      const expected = Buffer.from(this.mac(key, nonce, session));
      valid = (expected.length === presented.length && timingSafeEqual(expected, presented)) || valid;
    }
    return valid;
  }

  private mac(key: Buffer, nonce: string, session: string | undefined): string {
    const bound = session ? createHash('sha256').update(session).digest('base64url') : '-';
    return createHmac('sha256', key).update(`${nonce}.${bound}`).digest('base64url');
  }

  private attributes() {
    return { path: '/', sameSite: 'strict' as const, secure: this.secure };
  }
}

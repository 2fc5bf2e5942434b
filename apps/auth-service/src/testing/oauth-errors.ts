/* Helpers of the OAuth unit specs (Jest globals). */
import { OAuthError } from '../oauth/oauth-errors';

/** An RFC 7617 Basic header as an OAuth client sends it: each part form-encoded first (RFC 6749 section 2.3.1). */
export const basicAuth = (id: string, secret: string) => `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

/** The OAuthError `fn` throws; fails the test when it throws something else or nothing. */
export function thrownOAuthError(fn: () => unknown): OAuthError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(OAuthError);
    return e as OAuthError;
  }
  throw new Error('expected an OAuthError');
}

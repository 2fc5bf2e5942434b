import type { RawAnswer } from './raw-http';

/**
 * The cookies of one settings-area (dashboard) session, kept from each answer's Set-Cookie, and the
 * headers a state-changing call needs: the cookies and the current CSRF token, kept from the answer
 * of `GET /api/v1/account/csrf`. The token is bound to the session: fetch it again after signup or login.
 */
export class DashboardSession {
  private readonly cookies: Record<string, string> = {};
  private csrfToken = '';

  keep(answer: RawAnswer): void {
    const set = answer.headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies[pair.slice(0, i)] = pair.slice(i + 1);
    }
    if (typeof answer.json?.csrf_token === 'string') this.csrfToken = answer.json.csrf_token;
  }

  headers(): Record<string, string> {
    return {
      cookie: Object.entries(this.cookies)
        .map(([k, v]) => `${k}=${v}`)
        .join('; '),
      'x-csrf-token': this.csrfToken,
    };
  }
}

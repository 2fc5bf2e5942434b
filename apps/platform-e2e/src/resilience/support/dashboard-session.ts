import type { RawAnswer } from './raw-http';

/**
 * The cookies of one settings-area (dashboard) session, kept from each answer's Set-Cookie, and the
 * headers a state-changing call needs: the cookies and the current CSRF token (it rotates with the
 * session, at signup and login).
 */
export class DashboardSession {
  private readonly cookies: Record<string, string> = {};

  keep(answer: RawAnswer): void {
    const set = answer.headers['set-cookie'];
    for (const c of Array.isArray(set) ? set : set ? [set] : []) {
      const [pair] = c.split(';');
      const i = pair.indexOf('=');
      this.cookies[pair.slice(0, i)] = pair.slice(i + 1);
    }
  }

  headers(): Record<string, string> {
    return {
      cookie: Object.entries(this.cookies)
        .map(([k, v]) => `${k}=${v}`)
        .join('; '),
      'x-csrf-token': this.cookies.csrf_token ?? '',
    };
  }
}

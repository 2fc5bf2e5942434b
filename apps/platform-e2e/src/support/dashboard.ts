import { randomUUID } from 'node:crypto';

/**
 * A settings-area user through the base URL, as the settings page is one: signs up, keeps the
 * session cookies and the CSRF token (fetched again after signup: it is bound to the session), and
 * calls the settings API. For specs that need keys with an expiry or an allowlist, which the CLI's
 * `create-key` does not make.
 */
export class DashboardUser {
  private readonly cookies = new Map<string, string>();
  private csrf = '';

  private constructor(private readonly baseUrl: string) {}

  static async signUp(baseUrl: string, organizationName = 'E2E Lifecycle'): Promise<DashboardUser> {
    const user = new DashboardUser(baseUrl);
    await user.refreshCsrf();
    const r = await user.call('POST', '/api/v1/account/signup', {
      organization_name: organizationName,
      email: `e2e-${randomUUID().slice(0, 8)}@example.com`,
      password: 'correct horse battery staple',
    });
    if (r.status !== 201) throw new Error(`signup answered ${r.status}: ${JSON.stringify(r.body)}`);
    await user.refreshCsrf();
    return user;
  }

  private async refreshCsrf(): Promise<void> {
    this.csrf = String((await this.call('GET', '/api/v1/account/csrf')).body.csrf_token);
  }

  async call(method: string, path: string, body?: unknown): Promise<{ status: number; body: Record<string, unknown> }> {
    const headers: Record<string, string> = {};
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    if (method !== 'GET' && this.csrf) headers['x-csrf-token'] = this.csrf;
    const response = await fetch(this.baseUrl + path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
    for (const line of response.headers.getSetCookie()) {
      const [pair] = line.split(';');
      const i = pair.indexOf('=');
      this.cookies.set(pair.slice(0, i).trim(), pair.slice(i + 1));
    }
    const text = await response.text();
    return { status: response.status, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  /** A new key of this user's organization: `client_id`, `client_secret` and the key view. */
  async createKey(fields: Record<string, unknown>): Promise<Record<string, string> & { id: string; client_id: string; client_secret: string }> {
    const r = await this.call('POST', '/api/v1/settings/api-keys', { name: 'E2E key', ...fields });
    if (r.status !== 201) throw new Error(`create key answered ${r.status}: ${JSON.stringify(r.body)}`);
    return r.body as Record<string, string> & { id: string; client_id: string; client_secret: string };
  }
}

/**
 * A minimal cookie-keeping HTTP client for the settings endpoints, behaving as the page does: stores
 * cookies from Set-Cookie and sends them back, fetches a CSRF token (GET /api/v1/account/csrf) before
 * its first state-changing call and again after each sign-up, log-in or log-out (the token is bound
 * to the session), and sends it as X-CSRF-Token.
 */
export class BrowserLikeClient {
  private readonly cookies = new Map<string, string>();
  private token: string | undefined;

  constructor(
    private readonly baseUrl: string,
    private readonly origin?: string,
  ) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name) ?? this.cookies.get(`__Host-${name}`);
  }

  /** `name=value` of a cookie as the server named it (with or without the `__Host-` prefix). */
  cookiePair(name: string): string {
    const full = this.cookies.has(name) ? name : `__Host-${name}`;
    return `${full}=${this.cookies.get(full)}`;
  }

  /** Fetches a fresh CSRF token for the current cookies and keeps it. */
  async csrf(): Promise<string> {
    const r = await this.request('GET', '/api/v1/account/csrf');
    this.token = String(r.body.csrf_token);
    return this.token;
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    options: { csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; headers: Headers; text: string; body: Record<string, unknown> }> {
    if (method !== 'GET' && options.csrf === undefined && this.token === undefined) await this.csrf();
    const headers: Record<string, string> = { ...options.headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const csrf = options.csrf === undefined ? this.token : options.csrf;
    if (method !== 'GET' && csrf) headers['x-csrf-token'] = csrf;
    if (this.origin && method !== 'GET') headers.origin = this.origin;
    const response = await fetch(this.baseUrl + path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    for (const line of response.headers.getSetCookie()) {
      const [pair, ...attributes] = line.split(';');
      const [name, value] = pair.split('=');
      const expired = attributes.some((a) => /max-age=0/i.test(a.trim()) || /expires=thu, 01 jan 1970/i.test(a.trim()));
      if (expired || value === '') this.cookies.delete(name.trim());
      else this.cookies.set(name.trim(), value);
    }
    if (response.ok && /^\/api\/v1\/account\/(signup|login|logout)$/.test(path)) this.token = undefined;
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }
}

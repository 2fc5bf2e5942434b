/**
 * A minimal cookie-keeping HTTP client for the settings endpoints: stores cookies from Set-Cookie,
 * sends them back, and sends the CSRF header the page would send.
 */
export class BrowserLikeClient {
  private readonly cookies = new Map<string, string>();

  constructor(
    private readonly baseUrl: string,
    private readonly origin?: string,
  ) {}

  cookie(name: string): string | undefined {
    return this.cookies.get(name);
  }

  async csrf(): Promise<string> {
    await this.request('GET', '/api/v1/account/csrf');
    return this.cookies.get('csrf_token')!;
  }

  async request(
    method: string,
    path: string,
    body?: unknown,
    options: { csrf?: string | null; headers?: Record<string, string> } = {},
  ): Promise<{ status: number; headers: Headers; text: string; body: Record<string, unknown> }> {
    const headers: Record<string, string> = { ...options.headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (this.cookies.size > 0) headers.cookie = [...this.cookies].map(([k, v]) => `${k}=${v}`).join('; ');
    const csrf = options.csrf === undefined ? this.cookies.get('csrf_token') : options.csrf;
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
    const text = await response.text();
    return { status: response.status, headers: response.headers, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }
}

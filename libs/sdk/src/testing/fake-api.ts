/**
 * Test support for the SDK's specs (not exported from index.ts, so no bundle includes it): a fake
 * `fetch` that records every request and answers like the platform, with an auth server that
 * detects refresh-token reuse the way the real one does, and a fake clock.
 */
import type { FetchLike } from '../transport';

export const TOKEN = '/api/v1/auth/token';
export const REFRESH = '/api/v1/auth/refresh';

export interface RecordedRequest {
  method: string;
  /** Path without the query. */
  path: string;
  query: URLSearchParams;
  /** Lower-case names. */
  headers: Record<string, string>;
  /** Parsed JSON body. */
  body: unknown;
  signal: AbortSignal | undefined;
}

export type Handler = (request: RecordedRequest) => Response | Promise<Response>;

/** A JSON response. */
export function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/json', ...headers } });
}

/** An RFC 9457 problem response, as resource services send them. */
export function problem(
  status: number,
  fields: { detail?: string; errors?: Array<{ field: string; code: string; message: string }> } = {},
  headers: Record<string, string> = {},
): Response {
  const body = {
    type: `https://docs.invoicing.example/problems/${status}`,
    title: `Title ${status}`,
    status,
    detail: fields.detail ?? `detail ${status}`,
    request_id: `req_${status}`,
    ...(fields.errors ? { errors: fields.errors } : {}),
  };
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': 'application/problem+json', ...headers } });
}

/** The 401 a resource service sends for a refused token. */
export function invalidToken(): Response {
  return problem(401, { detail: 'The access token is invalid.' }, { 'www-authenticate': 'Bearer error="invalid_token"' });
}

/** An RFC 6749 error response, as the token endpoints send them. */
export function oauthError(status: number, error: string, headers: Record<string, string> = {}): Response {
  return json(status, { error, error_description: `${error} described` }, headers);
}

/** What `fetch` does when the connection fails. */
export function networkError(): never {
  throw new TypeError('fetch failed');
}

/** A clock that only moves when told, and a `sleep` that moves it and records the wait. */
export class FakeClock {
  time = Date.UTC(2030, 0, 1);
  readonly sleeps: number[] = [];

  readonly now = (): number => this.time;

  readonly sleep = async (ms: number): Promise<void> => {
    this.sleeps.push(ms);
    this.time += ms;
  };

  advance(ms: number): void {
    this.time += ms;
  }
}

/**
 * The platform, faked. Token endpoints answer by default like the auth service: each exchange
 * starts a session, each refresh token works once, and presenting one twice revokes every session
 * (`reuseDetected`). Resource routes answer what a test registers with `on` (every time) or
 * `once` (queued, first in first out, before `on`).
 */
export class FakeApi {
  readonly requests: RecordedRequest[] = [];
  /** Set when a spent refresh token was presented: the real server would revoke every session now. */
  reuseDetected = false;
  /** Access tokens refused by resource routes registered with `authenticated`. */
  readonly revokedAccessTokens = new Set<string>();
  expiresIn = 3600;

  private issued = 0;
  private readonly liveRefreshTokens = new Set<string>();
  private readonly spentRefreshTokens = new Set<string>();
  private readonly handlers = new Map<string, Handler>();
  private readonly queued = new Map<string, Handler[]>();

  constructor(readonly baseUrl = 'https://api.test') {
    this.on('POST', TOKEN, (request) => this.exchange(request));
    this.on('POST', REFRESH, (request) => this.refresh(request));
  }

  readonly fetch: FetchLike = async (url, init) => {
    const parsed = new URL(url);
    const headers: Record<string, string> = {};
    new Headers(init.headers).forEach((value, name) => (headers[name] = value));
    const request: RecordedRequest = {
      method: init.method ?? 'GET',
      path: parsed.pathname,
      query: parsed.searchParams,
      headers,
      body: typeof init.body === 'string' ? JSON.parse(init.body) : undefined,
      signal: init.signal ?? undefined,
    };
    if (`${parsed.origin}` !== this.baseUrl) throw new Error(`unexpected origin ${parsed.origin}`);
    this.requests.push(request);
    // Answers arrive on a later turn, as over a network, so concurrent callers really overlap.
    await Promise.resolve();
    const key = `${request.method} ${request.path}`;
    const handler = this.queued.get(key)?.shift() ?? this.handlers.get(key);
    if (!handler) return problem(404, { detail: `no route ${key}` });
    return handler(request);
  };

  on(method: string, path: string, handler: Handler): this {
    this.handlers.set(`${method} ${path}`, handler);
    return this;
  }

  once(method: string, path: string, ...handlers: Handler[]): this {
    const key = `${method} ${path}`;
    this.queued.set(key, [...(this.queued.get(key) ?? []), ...handlers]);
    return this;
  }

  /** Registers a resource route that refuses missing and revoked access tokens with a 401. */
  authenticated(method: string, path: string, handler: Handler): this {
    return this.on(method, path, (request) => {
      const token = request.headers['authorization']?.replace(/^Bearer /, '');
      if (!token || this.revokedAccessTokens.has(token)) return invalidToken();
      return handler(request);
    });
  }

  /** Requests to one route, in order. */
  calls(method: string, path: string): RecordedRequest[] {
    return this.requests.filter((r) => r.method === method && r.path === path);
  }

  /** Every refresh token the SDK presented, in order. */
  presentedRefreshTokens(): string[] {
    return this.calls('POST', REFRESH).map((r) => (r.body as { refresh_token: string }).refresh_token);
  }

  /** A handler that lets the auth server do its work (the token is spent) and then loses the answer. */
  lostAnswer(): Handler {
    return (request) => {
      void this.refresh(request);
      return networkError();
    };
  }

  /** A handler that never answers until the request's signal aborts it (a timeout). */
  hang(): Handler {
    return (request) =>
      new Promise<Response>((_resolve, reject) => {
        request.signal?.addEventListener('abort', () => reject(new DOMException('The operation was aborted.', 'AbortError')));
      });
  }

  /** Another process presents `refreshToken` (not recorded as a request of the SDK under test). */
  spendElsewhere(refreshToken: string): void {
    void this.refresh({ method: 'POST', path: REFRESH, query: new URLSearchParams(), headers: {}, body: { refresh_token: refreshToken }, signal: undefined });
  }

  exchange(request: RecordedRequest): Response {
    const body = request.body as Record<string, unknown>;
    if (body['grant_type'] !== 'client_credentials') return oauthError(400, 'unsupported_grant_type');
    if (body['client_secret'] !== 'sk_live_secret') return oauthError(401, 'invalid_client');
    return this.issue(typeof body['scope'] === 'string' ? body['scope'] : 'read:invoices write:invoices');
  }

  refresh(request: RecordedRequest): Response {
    const token = (request.body as { refresh_token?: unknown }).refresh_token;
    if (typeof token !== 'string') return oauthError(400, 'invalid_request');
    if (this.spentRefreshTokens.has(token)) {
      this.reuseDetected = true;
      return oauthError(400, 'invalid_grant');
    }
    if (!this.liveRefreshTokens.delete(token)) return oauthError(400, 'invalid_grant');
    this.spentRefreshTokens.add(token);
    return this.issue('read:invoices write:invoices');
  }

  private issue(scope: string): Response {
    this.issued++;
    const refreshToken = `rt_live_${this.issued}`;
    this.liveRefreshTokens.add(refreshToken);
    return json(
      200,
      { access_token: `at_${this.issued}`, token_type: 'Bearer', expires_in: this.expiresIn, refresh_token: refreshToken, scope },
      { 'cache-control': 'no-store' },
    );
  }
}

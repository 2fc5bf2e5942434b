import { parseRetryAfter, Problem, toProblem } from './problem-details.js';

/**
 * The auth service's account and settings endpoints (contract section 9), on the page's own origin:
 * the gateway routes /api/v1/account and /api/v1/settings to the auth service, so the session cookie
 * (HttpOnly, never visible here) travels with every call and no CORS is involved.
 */

export interface User {
  id: string;
  email: string;
  created_at: string;
}

export interface Organization {
  id: string;
  name: string;
}

export interface Session {
  user: User;
  organization: Organization;
}

export interface ScopeGroup {
  resource: string;
  scopes: string[];
}

export interface ApiKey {
  object: 'api_key';
  id: string;
  name: string;
  client_id: string;
  scopes: string[];
  status: 'active' | 'revoked' | string;
  created_at: string;
  last_used_at: string | null;
  revoked_at: string | null;
}

/** The create response: the only one that ever carries `client_secret`. */
export interface CreatedApiKey extends Omit<ApiKey, 'last_used_at' | 'revoked_at'> {
  client_secret: string;
}

/** A response with an error status; `problem` is always filled in, even for a non-JSON body. */
export class ApiError extends Error {
  constructor(
    readonly problem: Problem,
    readonly retryAfterSeconds: number | null,
  ) {
    super(problem.detail);
    this.name = 'ApiError';
  }

  get status(): number {
    return this.problem.status;
  }
}

/** The request never got an answer (offline, gateway down, connection reset). */
export class NetworkError extends Error {
  constructor() {
    super('Could not reach the server. Check your connection and try again.');
    this.name = 'NetworkError';
  }
}

/**
 * The double-submit token: the auth service refuses a state-changing call whose X-CSRF-Token header
 * does not match its csrf_token cookie. It rotates on login, signup and logout, so it is fetched
 * again after each.
 */
let csrfToken: string | null = null;

export async function refreshCsrfToken(): Promise<void> {
  const body = await send<{ csrf_token: string }>('GET', '/api/v1/account/csrf');
  csrfToken = body.csrf_token;
}

async function send<T>(method: 'GET' | 'POST', path: string, body?: unknown, retried = false): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  // No Content-Type without a body: the server would reject an empty JSON body.
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  if (method === 'POST') {
    if (csrfToken === null) await refreshCsrfToken();
    headers['X-CSRF-Token'] = csrfToken ?? '';
  }
  let response: Response;
  try {
    response = await fetch(path, {
      method,
      headers,
      body: body === undefined ? undefined : JSON.stringify(body),
      credentials: 'same-origin',
      cache: 'no-store',
    });
  } catch {
    throw new NetworkError();
  }
  // A token that went stale (another tab logged out and in again) gets one fresh try.
  if (response.status === 403 && method === 'POST' && !retried) {
    await refreshCsrfToken();
    return send<T>(method, path, body, true);
  }
  const text = response.status === 204 ? '' : await response.text();
  let parsed: unknown = null;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    parsed = null;
  }
  if (!response.ok) {
    throw new ApiError(toProblem(response.status, parsed), parseRetryAfter(response.headers.get('Retry-After')));
  }
  return parsed as T;
}

export const settingsApi = {
  me: () => send<Session>('GET', '/api/v1/account/me'),
  signup: (input: { organization_name: string; email: string; password: string }) => send<Session>('POST', '/api/v1/account/signup', input),
  login: (input: { email: string; password: string }) => send<Session>('POST', '/api/v1/account/login', input),
  logout: () => send<void>('POST', '/api/v1/account/logout'),
  scopes: () => send<{ data: ScopeGroup[] }>('GET', '/api/v1/settings/scopes'),
  listKeys: () => send<{ object: 'list'; data: ApiKey[]; has_more: boolean }>('GET', '/api/v1/settings/api-keys'),
  createKey: (input: { name: string; scopes: string[] }) => send<CreatedApiKey>('POST', '/api/v1/settings/api-keys', input),
  revokeKey: (id: string) => send<ApiKey>('POST', `/api/v1/settings/api-keys/${encodeURIComponent(id)}/revoke`),
};

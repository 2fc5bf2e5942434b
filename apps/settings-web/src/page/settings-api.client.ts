import { AuditEvent, auditEventsQuery, AuditFilters } from './audit-events.js';
import { KeyListQuery, keysQuery, ListPage } from './key-pages.js';
import type { OrganizationProfile, ProfilePatch } from './organization-profile.js';
import { parseRetryAfter, Problem, toProblem } from './problem-details.js';
import { ATTEMPT_PAGE_SIZE, ENDPOINT_PAGE_SIZE, pageQuery, WebhookAttempt, WebhookEndpoint, WebhookEndpointWithSecret, WebhookEventType } from './webhooks.js';

/**
 * The auth service's account and settings endpoints (docs/api.md section 9), on the page's own origin:
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

export type ApiKeyStatus = 'active' | 'revoked' | 'expired';

export interface ApiKey {
  object: 'api_key';
  id: string;
  organization_id: string;
  name: string;
  client_id: string;
  scopes: string[];
  /** A status this page does not know yet is shown as sent (format.ts `statusLabel`). */
  status: ApiKeyStatus | string;
  created_at: string;
  /** Null: the key never expires. */
  expires_at: string | null;
  /** Addresses and CIDR blocks, in the server's canonical form; empty: any address. */
  allowed_ips: string[];
  /** The last use of the key with any of its secrets. */
  last_used_at: string | null;
  /** The last use of the current secret. */
  secret_last_used_at: string | null;
  /** Set only while a rolled-over previous secret is still accepted. */
  previous_secret_expires_at: string | null;
  previous_secret_last_used_at: string | null;
  revoked_at: string | null;
  /**
   * Set when a secret-scanning report (GitHub) found the key's secret in public and the platform
   * revoked the key; `exposed_url` is where, as reported (untrusted text). Optional: a server
   * from before the feature leaves them out.
   */
  exposed_at?: string | null;
  exposed_url?: string | null;
}

/** The create response: besides the roll response, the only one that ever carries `client_secret`. */
export type CreatedApiKey = Pick<ApiKey, 'object' | 'id' | 'name' | 'client_id' | 'scopes' | 'status' | 'created_at' | 'expires_at' | 'allowed_ips'> & {
  client_secret: string;
};

/** The roll response: the key as it is now, with its new secret (shown once). */
/** The roll's answer: the new secret (shown once) and whether every session was ended as asked. */
export type RolledApiKey = ApiKey & { client_secret: string; sessions_ended: boolean };

export interface CreateKeyInput {
  name: string;
  scopes: string[];
  /** RFC 3339; left out (or null) for a key that never expires. */
  expires_at?: string | null;
  /** Left out for "any address". */
  allowed_ips?: string[];
}

export interface RollKeyInput {
  /** How long the previous secret keeps working: 0 (not at all) to 604800 (7 days). */
  previous_secret_expires_in: number;
  /** Also end the key's sessions: the tokens already issued with it stop working. */
  end_sessions?: boolean;
}

export interface UpdateKeyInput {
  allowed_ips?: string[];
  name?: string;
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
 * The CSRF token: the auth service refuses a state-changing call whose X-CSRF-Token header was not
 * issued for the session (and nonce) cookies it carries. A sign-in or sign-out starts another
 * session, so the token is fetched again after each (`newSession`).
 */
let csrfToken: string | null = null;

export async function refreshCsrfToken(): Promise<void> {
  const body = await send<{ csrf_token: string }>('GET', '/api/v1/account/csrf');
  csrfToken = body.csrf_token;
}

/** The session changed: the token in hand was bound to the old one. */
function newSession<T>(result: T): T {
  csrfToken = null;
  return result;
}

type Method = 'GET' | 'POST' | 'PATCH' | 'DELETE';

async function send<T>(method: Method, path: string, body?: unknown, retried = false): Promise<T> {
  const headers: Record<string, string> = { Accept: 'application/json' };
  // No Content-Type without a body: the server would reject an empty JSON body.
  if (body !== undefined) headers['Content-Type'] = 'application/json';
  // Every call that changes something carries the token, not only POST.
  if (method !== 'GET') {
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
  if (response.status === 403 && method !== 'GET' && !retried) {
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
  signup: (input: { organization_name: string; email: string; password: string }) =>
    send<Session>('POST', '/api/v1/account/signup', input).then(newSession),
  login: (input: { email: string; password: string }) => send<Session>('POST', '/api/v1/account/login', input).then(newSession),
  logout: () => send<void>('POST', '/api/v1/account/logout').then(newSession),
  scopes: () => send<{ data: ScopeGroup[] }>('GET', '/api/v1/settings/scopes'),
  /** A page of keys: the live ones unless `status` asks for others (docs/api.md section 9). */
  listKeys: (query: KeyListQuery = {}) => send<ListPage<ApiKey>>('GET', `/api/v1/settings/api-keys${keysQuery(query)}`),
  createKey: (input: CreateKeyInput) => send<CreatedApiKey>('POST', '/api/v1/settings/api-keys', input),
  revokeKey: (id: string) => send<ApiKey>('POST', `/api/v1/settings/api-keys/${encodeURIComponent(id)}/revoke`),
  rollKey: (id: string, input: RollKeyInput) => send<RolledApiKey>('POST', `/api/v1/settings/api-keys/${encodeURIComponent(id)}/roll`, input),
  updateKey: (id: string, input: UpdateKeyInput) => send<ApiKey>('PATCH', `/api/v1/settings/api-keys/${encodeURIComponent(id)}`, input),
  /** Settings → Organization: the profile, every field null until set (never cached: it holds the IBAN). */
  organizationProfile: () => send<OrganizationProfile>('GET', ORGANIZATION_PROFILE),
  /** Changes only the fields sent (null clears one); 422 names each field at fault, and then nothing changed. */
  updateOrganizationProfile: (patch: ProfilePatch) => send<OrganizationProfile>('PATCH', ORGANIZATION_PROFILE, patch),
  /** The organization's audit log, newest first; a GET, so no CSRF token. */
  auditEvents: (filters: AuditFilters, options: { startingAfter?: string | null; limit?: number } = {}) =>
    send<{ object: 'list'; data: AuditEvent[]; has_more: boolean }>('GET', `/api/v1/settings/audit-events${auditEventsQuery(filters, options)}`),
  /**
   * Settings → Webhooks: the auth service forwards each call to the webhook service with an access
   * token of its own (ADR 0038); the page holds none. The answers are the webhook service's
   * (docs/api.md section 15).
   */
  webhookEventTypes: () => send<{ data: WebhookEventType[] }>('GET', '/api/v1/settings/webhook-event-types'),
  listWebhookEndpoints: (startingAfter: string | null = null) =>
    send<ListPage<WebhookEndpoint>>('GET', `${WEBHOOK_ENDPOINTS}${pageQuery({ limit: ENDPOINT_PAGE_SIZE, startingAfter })}`),
  /** The only answer, with the roll's, that carries the endpoint's `secret`. */
  createWebhookEndpoint: (input: CreateWebhookEndpointInput) => send<WebhookEndpointWithSecret>('POST', WEBHOOK_ENDPOINTS, input),
  getWebhookEndpoint: (id: string) => send<WebhookEndpoint>('GET', webhookEndpoint(id)),
  updateWebhookEndpoint: (id: string, input: { status: 'enabled' | 'disabled' }) => send<WebhookEndpoint>('PATCH', webhookEndpoint(id), input),
  deleteWebhookEndpoint: (id: string) => send<{ id: string; deleted: true }>('DELETE', webhookEndpoint(id)),
  rollWebhookSecret: (id: string) => send<WebhookEndpointWithSecret>('POST', `${webhookEndpoint(id)}/roll-secret`),
  sendWebhookTest: (id: string) => send<{ id: string; type: string }>('POST', `${webhookEndpoint(id)}/test`),
  webhookAttempts: (id: string, startingAfter: string | null = null) =>
    send<ListPage<WebhookAttempt>>('GET', `${webhookEndpoint(id)}/attempts${pageQuery({ limit: ATTEMPT_PAGE_SIZE, startingAfter })}`),
  replayWebhookDeliveries: (id: string, since: string) => send<{ deliveries_queued: number }>('POST', `${webhookEndpoint(id)}/replay`, { since }),
};

const ORGANIZATION_PROFILE = '/api/v1/settings/organization';
const WEBHOOK_ENDPOINTS = '/api/v1/settings/webhook-endpoints';
const webhookEndpoint = (id: string) => `${WEBHOOK_ENDPOINTS}/${encodeURIComponent(id)}`;

export interface CreateWebhookEndpointInput {
  url: string;
  /** Event types, or `['*']` for all (types added later included). */
  enabled_events: string[];
  description?: string;
  signature_scheme: 'v1' | 'v1a';
}

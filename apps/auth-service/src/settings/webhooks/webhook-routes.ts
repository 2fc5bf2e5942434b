import { parsePublicId } from '@invoicing/contracts';

/**
 * What the settings area forwards to the webhook service (ADR 0038): the calls of its endpoints API
 * (docs/api.md section 15), each with the one method, path shape and scope it has there. Nothing else
 * is forwarded: no other path, no other method, no `/api/v1/events`.
 */
export type WebhookScope = 'read:webhook_endpoints' | 'write:webhook_endpoints';

export type WebhookCall = 'list' | 'create' | 'get' | 'update' | 'delete' | 'roll-secret' | 'test' | 'attempts' | 'replay';

export interface WebhookRoute {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Whether the path names one endpoint (`/{id}`). */
  endpoint: boolean;
  /** The path segment after the endpoint's id, if any. */
  action?: 'roll-secret' | 'test' | 'attempts' | 'replay';
  /** The scope the webhook service requires: the only one the call's access token carries. */
  scope: WebhookScope;
  /** A GET list's query string is forwarded (the webhook service validates it). */
  query?: true;
  /** A JSON body is forwarded; every other call is sent without one. */
  body?: true;
}

export const WEBHOOK_ROUTES: Readonly<Record<WebhookCall, WebhookRoute>> = {
  list: { method: 'GET', endpoint: false, scope: 'read:webhook_endpoints', query: true },
  create: { method: 'POST', endpoint: false, scope: 'write:webhook_endpoints', body: true },
  get: { method: 'GET', endpoint: true, scope: 'read:webhook_endpoints' },
  update: { method: 'PATCH', endpoint: true, scope: 'write:webhook_endpoints', body: true },
  delete: { method: 'DELETE', endpoint: true, scope: 'write:webhook_endpoints' },
  'roll-secret': { method: 'POST', endpoint: true, action: 'roll-secret', scope: 'write:webhook_endpoints' },
  test: { method: 'POST', endpoint: true, action: 'test', scope: 'write:webhook_endpoints' },
  attempts: { method: 'GET', endpoint: true, action: 'attempts', scope: 'read:webhook_endpoints', query: true },
  replay: { method: 'POST', endpoint: true, action: 'replay', scope: 'write:webhook_endpoints', body: true },
};

/** The webhook service's prefix for these calls (GATEWAY_ROUTES routes it there too). */
export const WEBHOOK_ENDPOINTS_PATH = '/api/v1/webhook-endpoints';

/** The longest query string forwarded: a list's `limit`, `starting_after` and `event` fit many times over. */
export const MAX_FORWARDED_QUERY_LENGTH = 512;

/**
 * The webhook service's path for a call, or null when `id` is not an endpoint id in its one
 * canonical form (`wep_` and 32 lowercase hex digits): such an id names no endpoint, so the answer is
 * the webhook service's 404, given here without asking. No id reaches the URL unchecked, so nothing a
 * caller sends (`..`, `%2F`, a query) can make the path another one.
 */
export function upstreamPath(call: WebhookCall, id?: string): string | null {
  const route = WEBHOOK_ROUTES[call];
  if (!route.endpoint) return WEBHOOK_ENDPOINTS_PATH;
  if (id === undefined || parsePublicId('wep', id) === null) return null;
  return `${WEBHOOK_ENDPOINTS_PATH}/${id}${route.action ? `/${route.action}` : ''}`;
}

/**
 * The raw query string of `url` (without `?`) for a call that takes one, '' otherwise; null when it
 * is longer than {@link MAX_FORWARDED_QUERY_LENGTH}.
 */
export function forwardedQuery(call: WebhookCall, url: string): string | null {
  if (!WEBHOOK_ROUTES[call].query) return '';
  const mark = url.indexOf('?');
  const query = mark === -1 ? '' : url.slice(mark + 1);
  return query.length > MAX_FORWARDED_QUERY_LENGTH ? null : query;
}

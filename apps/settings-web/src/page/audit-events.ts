import { displayStatus, formatDateTime, plural, statusLabel } from './format.js';

/**
 * Settings → Audit log, the parts without DOM (unit-tested): the record as the API sends it, the
 * filters as the page's URL and the API's query carry them, a sentence per record, who did it.
 */

export interface AuditActor {
  /** 'user' | 'api_key' | 'system'; a kind this page does not know yet is shown as sent. */
  kind: string;
  id: string | null;
}

export interface AuditEvent {
  object: 'audit_event';
  id: string;
  organization_id: string;
  seq: number;
  /** Open: a later server may record types this page does not know (shown verbatim). */
  type: string;
  occurred_at: string;
  actor: AuditActor;
  api_key_id: string | null;
  client_address: string | null;
  data: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

/** The types the API filters by, in the order of the type filter, with a few words for each. */
export const AUDIT_EVENT_TYPES: ReadonlyArray<{ type: string; label: string }> = [
  { type: 'api_key.created', label: 'Key created' },
  { type: 'api_key.rolled', label: 'Secret rolled' },
  { type: 'api_key.allowed_ips_changed', label: 'Allowed IPs changed' },
  { type: 'api_key.renamed', label: 'Key renamed' },
  { type: 'api_key.revoked', label: 'Key revoked' },
  { type: 'api_key.expired', label: 'Key expired' },
  { type: 'api_key.exposed', label: 'Secret found in public' },
  { type: 'api_key.auth_failures_alert', label: 'Failed key authentications alert' },
  { type: 'api_key.auth_failures_summary', label: 'Failed key authentications summary' },
  { type: 'refresh_token.reuse_detected', label: 'Refresh token reused' },
  { type: 'account.signed_up', label: 'Signed up' },
  { type: 'account.logged_in', label: 'Logged in' },
  { type: 'account.login_failed', label: 'Log-in failed' },
  { type: 'account.login_failures_alert', label: 'Failed log-ins alert' },
  { type: 'account.login_failures_summary', label: 'Failed log-ins summary' },
  { type: 'account.logged_out', label: 'Logged out' },
  { type: 'audit.failure_records_suppressed', label: 'Failure records held back' },
  { type: 'webhook_endpoint.disabled', label: 'Webhook endpoint disabled' },
];

/** How many records a page of the list asks for (the API takes 1 to 100). */
export const AUDIT_PAGE_SIZE = 50;

/** The filters of the list; null: not filtered by it. */
export interface AuditFilters {
  type: string | null;
  apiKeyId: string | null;
}

function param(params: URLSearchParams, name: string): string | null {
  const value = params.get(name)?.trim() ?? '';
  return value === '' ? null : value;
}

/**
 * The filters from the page's URL (`/settings/audit?type=api_key.rolled&api_key_id=key_…`), so a
 * filtered list can be bookmarked, shared and reached again with Back. Values are taken as they are:
 * the API answers 400 for one it does not know, and the page shows that beside the filter.
 */
export function filtersFromSearch(search: string): AuditFilters {
  const params = new URLSearchParams(search);
  return { type: param(params, 'type'), apiKeyId: param(params, 'api_key_id') };
}

/** The page URL's query for the filters: '' without any, else `?type=…&api_key_id=…`. */
export function filtersSearch(filters: AuditFilters): string {
  const params = new URLSearchParams();
  if (filters.type) params.set('type', filters.type);
  if (filters.apiKeyId) params.set('api_key_id', filters.apiKeyId);
  const query = params.toString();
  return query ? `?${query}` : '';
}

/** The API's query for one page: the filters, the page size and, for "Load more", the cursor. */
export function auditEventsQuery(filters: AuditFilters, options: { startingAfter?: string | null; limit?: number } = {}): string {
  const params = new URLSearchParams();
  params.set('limit', String(options.limit ?? AUDIT_PAGE_SIZE));
  if (filters.type) params.set('type', filters.type);
  if (filters.apiKeyId) params.set('api_key_id', filters.apiKeyId);
  if (options.startingAfter) params.set('starting_after', options.startingAfter);
  return `?${params.toString()}`;
}

/** A piece of a record's summary: text, a time (shown local, in a `<time>`), or an untrusted URL. */
export type SummaryPart = string | { time: string } | { url: string };

function text(data: Record<string, unknown>, name: string): string | null {
  const value = data[name];
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

function count(data: Record<string, unknown>, name: string): number | null {
  const value = data[name];
  return typeof value === 'number' && Number.isFinite(value) ? value : null;
}

function list(data: Record<string, unknown>, name: string): string[] | null {
  const value = data[name];
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : null;
}

function addresses(list: string[]): string {
  return list.length === 0 ? 'any address' : list.join(', ');
}

function sessionsEnded(n: number | null): string {
  return n === null || n === 0 ? '' : `${plural(n, 'session')} ended`;
}

/** "between <start> and <end>" of a window's record, when it says both. */
function window(data: Record<string, unknown>): SummaryPart[] {
  const started = text(data, 'window_started_at');
  const ended = text(data, 'window_ended_at');
  return started && ended ? [' between ', { time: started }, ' and ', { time: ended }] : [];
}

/** A window's failures of one account or key: how many, from how many address blocks, a few of them. */
function failuresSummary(data: Record<string, unknown>, unit: string, whose: string): SummaryPart[] {
  const n = count(data, 'failures');
  const blocks = count(data, 'address_blocks');
  const samples = list(data, 'sample_addresses') ?? [];
  return [
    `${n === null ? `Many ${unit}s` : plural(n, unit)}${whose ? ` ${whose}` : ''}`,
    ...(blocks === null ? [] : [` from about ${plural(blocks, 'address block')}`]),
    ...window(data),
    ...(samples.length > 0 ? [`; for example ${samples.join(', ')}`] : []),
  ];
}

/**
 * What happened, in a short sentence, from the record's type and `data`. The data is read
 * defensively (a field missing or of another type is left out of the sentence); a type this page
 * does not know is shown verbatim.
 */
export function eventSummary(event: Pick<AuditEvent, 'type' | 'data'>): SummaryPart[] {
  const data = event.data !== null && typeof event.data === 'object' ? event.data : {};
  switch (event.type) {
    case 'api_key.created': {
      const name = text(data, 'name');
      const scopes = list(data, 'scopes') ?? [];
      const allowed = list(data, 'allowed_ips') ?? [];
      const expires = text(data, 'expires_at');
      return [
        `${name === null ? 'Key' : `Key “${name}”`} created${scopes.length > 0 ? ` with ${scopes.join(', ')}` : ''}`,
        ...(expires ? ['; expires ', { time: expires }] : []),
        ...(allowed.length > 0 ? [`; allowed IPs ${addresses(allowed)}`] : []),
      ];
    }
    case 'api_key.rolled': {
      const until = text(data, 'previous_secret_expires_at');
      return [
        'Secret rolled; ',
        ...(until ? ['previous secret works until ', { time: until }] : ['previous secret stopped working at once']),
        ...(data.end_sessions === true ? ['; all sessions ended'] : []),
      ];
    }
    case 'api_key.allowed_ips_changed': {
      const now = list(data, 'allowed_ips');
      const before = list(data, 'previous_allowed_ips');
      if (now === null) return ['Allowed IPs changed'];
      return [`Allowed IPs changed to ${addresses(now)}${before === null ? '' : ` (was ${addresses(before)})`}`];
    }
    case 'api_key.renamed': {
      const name = text(data, 'name');
      const before = text(data, 'previous_name');
      return [name === null ? 'Key renamed' : `Key renamed to “${name}”${before === null ? '' : ` (was “${before}”)`}`];
    }
    case 'api_key.revoked': {
      const ended = sessionsEnded(count(data, 'sessions_ended'));
      return [ended ? `Revoked; ${ended}` : 'Revoked'];
    }
    case 'api_key.expired': {
      const at = text(data, 'expires_at');
      return at ? ['Expired at ', { time: at }] : ['Expired'];
    }
    case 'api_key.exposed': {
      const url = text(data, 'url');
      const source = text(data, 'source');
      const ended = sessionsEnded(count(data, 'sessions_ended'));
      return [
        url ? 'Exposed: reported at ' : 'Exposed: reported in public',
        ...(url ? [{ url }] : []),
        ...(source ? [` (${source})`] : []),
        `; key revoked${ended ? `, ${ended}` : ''}`,
      ];
    }
    case 'api_key.auth_failures_alert': {
      const n = count(data, 'failures_across_addresses');
      return [n === null ? 'Alert: many failed authentications with this key' : `Alert: ${plural(n, 'failed authentication')} with this key across addresses`];
    }
    case 'api_key.auth_failures_summary':
      return failuresSummary(data, 'failed authentication', 'with this key');
    case 'refresh_token.reuse_detected': {
      const n = count(data, 'sessions_ended') ?? 0;
      return [`Reused refresh token: ${plural(n, 'session')} ended`];
    }
    case 'account.signed_up': {
      const email = text(data, 'email');
      return [email ? `Account created by ${email}` : 'Account created'];
    }
    case 'account.logged_in':
      return ['Logged in'];
    case 'account.login_failed':
      return ['Log-in failed'];
    case 'account.login_failures_alert': {
      const n = count(data, 'failures_across_addresses');
      return [n === null ? 'Alert: many failed log-ins' : `Alert: ${plural(n, 'failed log-in')} across addresses`];
    }
    case 'account.login_failures_summary':
      return failuresSummary(data, 'failed log-in', '');
    case 'account.logged_out':
      return ['Logged out'];
    case 'audit.failure_records_suppressed': {
      const n = count(data, 'records_suppressed');
      const ceiling = count(data, 'ceiling');
      const ids = [...(list(data, 'user_ids') ?? []), ...(list(data, 'api_key_ids') ?? [])];
      return [
        n === null ? 'Failure records held back' : `${plural(n, 'more failure record')} held back`,
        ...(ceiling === null ? [] : [` (at most ${ceiling} a window)`]),
        ...window(data),
        ...(ids.length > 0 ? [`; for ${ids.join(', ')}`] : []),
      ];
    }
    case 'webhook_endpoint.disabled': {
      const endpoint = text(data, 'endpoint_id');
      const url = text(data, 'url');
      const since = text(data, 'failing_since');
      // The URL as text, not a link: it is where the platform POSTs, not a page to open.
      return [
        `Webhook endpoint${endpoint ? ` ${endpoint}` : ''}${url ? ` (${url})` : ''} disabled`,
        ...(since ? ['; every delivery failed since ', { time: since }] : data.reason === 'failing' ? ['; its deliveries kept failing'] : []),
      ];
    }
    default:
      return [event.type];
  }
}

/** The summary as plain text (times formatted as the page shows them, URLs as sent). */
export function summaryText(parts: readonly SummaryPart[], formatTime: (iso: string) => string = (iso) => formatDateTime(iso)): string {
  return parts.map((part) => (typeof part === 'string' ? part : 'time' in part ? formatTime(part.time) : part.url)).join('');
}

/** Who did it: "You" for the signed-in person, another user's id, "API key key_…", "System". */
export function actorLabel(actor: AuditActor | null | undefined, currentUserId: string | null): string {
  if (!actor) return 'Unknown';
  switch (actor.kind) {
    case 'user':
      if (actor.id !== null && actor.id === currentUserId) return 'You';
      // A failed log-in names no actor: whoever typed the password is unknown.
      return actor.id === null ? 'Someone' : `User ${actor.id}`;
    case 'api_key':
      return actor.id === null ? 'An API key' : `API key ${actor.id}`;
    case 'system':
      return 'System';
    default:
      return actor.id === null ? actor.kind : `${actor.kind} ${actor.id}`;
  }
}

/** The type filter's option text: "Secret rolled (api_key.rolled)"; an unknown type verbatim. */
export function typeOptionLabel(type: string): string {
  const known = AUDIT_EVENT_TYPES.find((t) => t.type === type);
  return known ? `${known.label} (${type})` : type;
}

/** The API key filter's option text: "ERP (key_…)", with the status of a key that no longer works. */
export function keyOptionLabel(key: { id: string; name: string; status: string; expires_at: string | null }, now: number = Date.now()): string {
  const status = displayStatus(key, now);
  return status === 'active' ? `${key.name} (${key.id})` : `${key.name}, ${statusLabel(status)} (${key.id})`;
}

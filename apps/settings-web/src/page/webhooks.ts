/**
 * Settings → Webhooks without DOM (unit-tested): what an endpoint's status, events and attempts read
 * as, the list queries, and the replay's "since" (docs/api.md section 15; the page reaches the
 * webhook service only through the auth service's /api/v1/settings/webhook-endpoints, ADR 0038).
 */

export type WebhookEndpointStatus = 'enabled' | 'disabled';

export interface WebhookEndpoint {
  object: 'webhook_endpoint';
  id: string;
  url: string;
  description: string | null;
  /** Event types, or `['*']` for all of them. */
  enabled_events: string[];
  /** A status this page does not know yet is shown as sent. */
  status: WebhookEndpointStatus | string;
  /** `requested` (someone disabled it) or `failing` (no success for days), null while enabled. */
  disabled_reason: 'requested' | 'failing' | string | null;
  signature_scheme: 'v1' | 'v1a' | string;
  /** Since when every attempt has failed; null after a success. */
  failing_since: string | null;
  created_at: string;
}

/** The create and roll answers: the endpoint and its signing secret (`whsec_`, or a v1a `whpk_` public key). */
export type WebhookEndpointWithSecret = WebhookEndpoint & { secret: string };

export interface WebhookAttempt {
  object: 'webhook_attempt';
  id: string;
  event: string;
  attempt: number;
  outcome: 'succeeded' | 'failed' | string;
  response_status: number | null;
  latency_ms: number;
  error: string | null;
  created_at: string;
}

export interface WebhookEventType {
  type: string;
  description: string;
}

/** At most 16 endpoints per organization (docs/api.md section 15): one page of 100 holds them all. */
export const ENDPOINT_PAGE_SIZE = 100;
/** Attempts come this many at a time ("Load more attempts"). */
export const ATTEMPT_PAGE_SIZE = 25;

/** `?limit=25&starting_after=wat_…`. */
export function pageQuery(options: { limit: number; startingAfter?: string | null }): string {
  const params = new URLSearchParams({ limit: String(options.limit) });
  if (options.startingAfter) params.set('starting_after', options.startingAfter);
  return `?${params.toString()}`;
}

/** The attempts view's path for an endpoint: the id travels in the query, as the audit log's filters do. */
export function attemptsPath(base: string, endpointId: string): string {
  return `${base}?${new URLSearchParams({ endpoint: endpointId }).toString()}`;
}

/** The endpoint id of the attempts view's address, or null when it holds none that could be one. */
export function endpointIdFromSearch(search: string): string | null {
  const id = new URLSearchParams(search).get('endpoint');
  return id !== null && /^wep_[0-9a-f]{32}$/.test(id) ? id : null;
}

export function isAllEvents(events: readonly string[]): boolean {
  return events.includes('*');
}

/** "All events" or the types, for a card. */
export function eventsSummary(events: readonly string[]): string {
  return isAllEvents(events) ? 'All events' : events.join(', ');
}

/** A point in time, or plain text, to be rendered by the view (a time becomes a `<time>`). */
export type StatusPart = string | { time: string };

/**
 * The status as a person reads it: a badge ("Enabled", "Disabled") and, after it, why or what to
 * watch: "failing since …" (disabled for failing, or enabled while every attempt fails), "by request".
 */
export function endpointStatus(endpoint: Pick<WebhookEndpoint, 'status' | 'disabled_reason' | 'failing_since'>): {
  badge: string;
  tone: 'active' | 'inactive' | 'warning';
  note: StatusPart[];
} {
  if (endpoint.status === 'enabled') {
    return endpoint.failing_since
      ? { badge: 'Enabled', tone: 'warning', note: ['failing since ', { time: endpoint.failing_since }] }
      : { badge: 'Enabled', tone: 'active', note: [] };
  }
  if (endpoint.status === 'disabled') {
    if (endpoint.disabled_reason === 'failing') {
      return {
        badge: 'Disabled',
        tone: 'inactive',
        note: endpoint.failing_since ? ['failing since ', { time: endpoint.failing_since }] : ['failing'],
      };
    }
    return { badge: 'Disabled', tone: 'inactive', note: endpoint.disabled_reason === 'requested' ? ['by request'] : [] };
  }
  return { badge: endpoint.status, tone: 'inactive', note: [] };
}

/** The status in one line of text ("Disabled: failing since 27 Nov 2026, 09:05"), times by `formatTime`. */
export function statusSentence(endpoint: Pick<WebhookEndpoint, 'status' | 'disabled_reason' | 'failing_since'>, formatTime: (iso: string) => string): string {
  const { badge, note } = endpointStatus(endpoint);
  const rest = note.map((part) => (typeof part === 'string' ? part : formatTime(part.time))).join('');
  return rest ? `${badge}: ${rest}` : badge;
}

export function schemeLabel(scheme: string): string {
  if (scheme === 'v1') return 'v1 (HMAC-SHA256, whsec_ secret)';
  if (scheme === 'v1a') return 'v1a (ed25519, whpk_ public key)';
  return scheme;
}

export function outcomeLabel(outcome: string): string {
  return outcome === 'succeeded' ? 'Succeeded' : outcome === 'failed' ? 'Failed' : outcome;
}

/**
 * The receiver's status code ("500"; "302 (redirect not followed)"), or why there was none ("No
 * answer: connection refused"). The service's error codes read as words: `dns_failure` → "dns failure".
 */
export function responseLabel(attempt: Pick<WebhookAttempt, 'response_status' | 'error'>): string {
  const words = attempt.error ? attempt.error.replace(/_/g, ' ') : null;
  if (attempt.response_status !== null) return words && attempt.error !== 'http_status' ? `${attempt.response_status} (${words})` : String(attempt.response_status);
  return words ? `No answer: ${words}` : 'No answer';
}

export function latencyLabel(ms: number): string {
  return ms >= 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${ms} ms`;
}

const pad = (n: number) => String(n).padStart(2, '0');

/** A `datetime-local` input's value (the reader's time zone, to the minute) for an instant. */
export function localInputValue(at: Date): string {
  return `${at.getFullYear()}-${pad(at.getMonth() + 1)}-${pad(at.getDate())}T${pad(at.getHours())}:${pad(at.getMinutes())}`;
}

/** The replay's default: a day back, the span a person most often means by "the failures of late". */
export function defaultReplaySince(now: number = Date.now()): string {
  return localInputValue(new Date(now - 24 * 3600_000));
}

/**
 * The `since` of a replay from the input's value (local time): RFC 3339 in UTC, or why not. Events
 * are kept 30 days; an older "since" is allowed (the server replays what it still has).
 */
export function replaySince(value: string, now: number = Date.now()): { ok: true; since: string } | { ok: false; message: string } {
  if (!value.trim()) return { ok: false, message: 'Enter a date and time.' };
  const at = new Date(value);
  if (Number.isNaN(at.getTime())) return { ok: false, message: 'Enter a date and time such as 2026-11-26 09:00.' };
  if (at.getTime() > now) return { ok: false, message: 'Choose a time in the past.' };
  return { ok: true, since: at.toISOString() };
}

import { InvoicingError } from './errors';
import type { RetryLimits } from './retry';
import type { TokenStore } from './token-store';
import { MemoryTokenStore } from './token-store';
import type { FetchLike } from './transport';
import { VERSION } from './version';

/** Options of `new Invoicing(...)`. */
export interface InvoicingOptions {
  /**
   * The platform's base URL, e.g. `https://api.example.com` (the `/api/v1` paths go under it):
   * https, without credentials, query or fragment; http only to localhost, 127.0.0.0/8 or [::1].
   */
  baseUrl: string;
  /** The API key's Client ID (`ak_live_...`). */
  clientId: string;
  /** The API key's Secret Key (`sk_live_...`). Keep it server-side. */
  clientSecret: string;
  /** Space-separated subset of the key's scopes to ask for, e.g. `read:invoices write:payments`. */
  scope?: string;
  /** Where tokens are kept; default: in memory. A store shared by several processes needs `lock`. */
  tokenStore?: TokenStore;
  /** Default: the global `fetch`. */
  fetch?: FetchLike;
  /** Retries after the first attempt of a call (429, 503, in-flight 409, lost answers where safe). Default 3. */
  maxRetries?: number;
  /** No retry wait may end later than this many ms after a call's first attempt. Default 30000, at most 2^31-1. */
  maxRetryTimeMs?: number;
  /** Per attempt, through an AbortSignal. Default 30000, at most 2^31-1 (what a timer can wait). */
  timeoutMs?: number;
  /** Renew when less than min(this, 10 % of the token's lifetime) is left. Default 60. */
  refreshAheadSeconds?: number;
  /** Epoch ms; default `Date.now` (for tests). */
  now?: () => number;
  /** Default: a `setTimeout` wait (for tests). */
  sleep?: (ms: number) => Promise<void>;
  /** Sent as `User-Agent` outside browsers (which do not let a script set it). */
  userAgent?: string;
}

/** The options with every default applied. */
export interface ResolvedOptions {
  baseUrl: string;
  clientId: string;
  clientSecret: string;
  scope: string | undefined;
  tokenStore: TokenStore;
  fetch: FetchLike;
  limits: RetryLimits;
  timeoutMs: number;
  refreshAheadMs: number;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  userAgent: string | undefined;
}

export const DEFAULT_USER_AGENT = `invoicing-sdk-typescript/${VERSION}`;

/**
 * The longest wait a timer can do (2^31-1 ms, about 24.8 days): `setTimeout` fires a longer one
 * after 1 ms, which would end every attempt at once or turn a long retry wait into none.
 */
export const MAX_TIMER_MS = 2 ** 31 - 1;

/** Checks the options and applies the defaults. Messages name the option, never its value. */
export function resolveOptions(options: InvoicingOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new InvoicingError('new Invoicing(options): options are required');
  const baseUrl = checkedBaseUrl(requiredString(options.baseUrl, 'baseUrl')).replace(/\/+$/, '');
  const fetchImpl = options.fetch ?? globalFetch();
  return {
    baseUrl,
    clientId: requiredString(options.clientId, 'clientId'),
    clientSecret: requiredString(options.clientSecret, 'clientSecret'),
    scope: options.scope === undefined ? undefined : requiredString(options.scope, 'scope'),
    tokenStore: options.tokenStore ?? new MemoryTokenStore(),
    fetch: fetchImpl,
    limits: {
      maxRetries: Math.floor(count(options.maxRetries, 3, 'maxRetries')),
      // No wait may end past it, so no wait is longer than a timer can do.
      maxRetryTimeMs: Math.min(count(options.maxRetryTimeMs, 30_000, 'maxRetryTimeMs'), MAX_TIMER_MS),
    },
    timeoutMs: Math.min(positive(options.timeoutMs, 30_000, 'timeoutMs'), MAX_TIMER_MS),
    refreshAheadMs: count(options.refreshAheadSeconds, 60, 'refreshAheadSeconds') * 1000,
    now: options.now ?? (() => Date.now()),
    sleep: options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, Math.min(ms, MAX_TIMER_MS)))),
    // Browsers refuse or ignore a script's User-Agent; setting it there only risks a CORS preflight failure.
    userAgent: isBrowser() ? undefined : options.userAgent ?? DEFAULT_USER_AGENT,
  };
}

/**
 * `value` when it is an https URL, or an http one to a loopback host (the local stack), with no
 * credentials, query or fragment: over plain http to anywhere else the client secret and every
 * token would cross the network in clear. The message never repeats the value.
 */
function checkedBaseUrl(value: string): string {
  const refuse = () =>
    new InvoicingError(
      'new Invoicing(options): baseUrl must be an https URL without credentials, query or fragment (http only to localhost, 127.0.0.0/8 or [::1])',
    );
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    throw refuse();
  }
  const loopback = url.hostname === 'localhost' || url.hostname === '[::1]' || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(url.hostname);
  const schemeOk = url.protocol === 'https:' || (url.protocol === 'http:' && loopback);
  if (!schemeOk || url.username !== '' || url.password !== '' || url.search !== '' || url.hash !== '' || value.includes('?') || value.includes('#')) {
    throw refuse();
  }
  return value.trim();
}

function isBrowser(): boolean {
  const scope = globalThis as { window?: unknown; WorkerGlobalScope?: unknown };
  // Web workers have no window, and a User-Agent header there would fail a cross-origin preflight.
  return typeof scope.window !== 'undefined' || typeof scope.WorkerGlobalScope !== 'undefined';
}

function globalFetch(): FetchLike {
  const candidate = (globalThis as { fetch?: unknown }).fetch;
  if (typeof candidate !== 'function') {
    throw new InvoicingError('No global fetch in this runtime (Node 18+ and browsers have one): pass options.fetch');
  }
  // Looked up at each call (a polyfill installed later still counts) and called on globalThis:
  // browsers throw "Illegal invocation" when fetch is called with another `this`.
  return (url, init) => globalThis.fetch(url, init);
}

function requiredString(value: unknown, name: string): string {
  if (typeof value !== 'string' || value.trim() === '') throw new InvoicingError(`new Invoicing(options): ${name} must be a non-empty string`);
  return value;
}

function count(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value < 0) throw new InvoicingError(`new Invoicing(options): ${name} must be a number >= 0`);
  return value;
}

function positive(value: number | undefined, fallback: number, name: string): number {
  if (value === undefined) return fallback;
  if (!Number.isFinite(value) || value <= 0) throw new InvoicingError(`new Invoicing(options): ${name} must be a number > 0`);
  return value;
}

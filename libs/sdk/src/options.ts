import { InvoicingError } from './errors';
import type { RetryLimits } from './retry';
import type { TokenStore } from './token-store';
import { MemoryTokenStore } from './token-store';
import type { FetchLike } from './transport';
import { VERSION } from './version';

/** Options of `new Invoicing(...)`. */
export interface InvoicingOptions {
  /** The platform's base URL, e.g. `https://api.example.com` (the `/api/v1` paths go under it). */
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
  /** No retry wait may end later than this many ms after a call's first attempt. Default 30000. */
  maxRetryTimeMs?: number;
  /** Per attempt, through an AbortSignal. Default 30000. */
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

/** Checks the options and applies the defaults. Messages name the option, never its value. */
export function resolveOptions(options: InvoicingOptions): ResolvedOptions {
  if (typeof options !== 'object' || options === null) throw new InvoicingError('new Invoicing(options): options are required');
  const baseUrl = requiredString(options.baseUrl, 'baseUrl').replace(/\/+$/, '');
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
      maxRetryTimeMs: count(options.maxRetryTimeMs, 30_000, 'maxRetryTimeMs'),
    },
    timeoutMs: positive(options.timeoutMs, 30_000, 'timeoutMs'),
    refreshAheadMs: count(options.refreshAheadSeconds, 60, 'refreshAheadSeconds') * 1000,
    now: options.now ?? (() => Date.now()),
    sleep: options.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms))),
    // Browsers refuse or ignore a script's User-Agent; setting it there only risks a CORS preflight failure.
    userAgent: isBrowser() ? undefined : options.userAgent ?? DEFAULT_USER_AGENT,
  };
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

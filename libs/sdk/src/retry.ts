/**
 * The retry policy: which failures are worth another attempt, and how long to wait before it.
 * Pure functions (the clock and the randomness come in as arguments), so every rule is unit-tested
 * without timers; the HTTP layer runs the loop.
 */

/** How far retrying may go for one call. */
export interface RetryLimits {
  /** Retries after the first attempt. */
  maxRetries: number;
  /** No wait may end later than this many ms after the first attempt started. */
  maxRetryTimeMs: number;
}

/** Backoff without a `Retry-After`: full jitter over an exponential window from 500 ms, capped at 8 s. */
export const BACKOFF_BASE_MS = 500;
export const BACKOFF_CAP_MS = 8_000;

/** What went wrong with one attempt. */
export type AttemptFailure =
  | { kind: 'status'; status: number; hasFieldErrors?: boolean }
  | { kind: 'connection' };

/** What the call allows. */
export interface CallRetryTraits {
  /**
   * False for the refresh call: presenting a refresh token twice revokes every session of the
   * API key, and even a 429 or a 503 may come from a proxy after the server spent the token.
   */
  retries: boolean;
  /**
   * Whether sending the request twice is harmless, so a failure with an unknown outcome (network
   * error, timeout) may be repeated: reads, creates carrying an Idempotency-Key, and the
   * client-credentials exchange (a second session is merely unused).
   */
  safeToRepeat: boolean;
  /** A create sent with an Idempotency-Key: a 409 may mean "the first request is still running". */
  idempotencyKey: boolean;
}

/** Whether the failure may be retried at all (the limits are checked by `nextRetryDelay`). */
export function isRetryable(failure: AttemptFailure, call: CallRetryTraits): boolean {
  if (!call.retries) return false;
  if (failure.kind === 'connection') return call.safeToRepeat;
  if (failure.status === 429 || failure.status === 503) return true;
  // 409 also answers a duplicate unique value (an SKU, an invoice number); that one names the
  // field, and repeating it can only fail again. The in-flight answer names none.
  if (failure.status === 409) return call.idempotencyKey && !failure.hasFieldErrors;
  return false;
}

/**
 * `Retry-After` (RFC 9110: delta-seconds or an HTTP-date) as milliseconds from `nowMs`; undefined
 * when absent or unreadable, so the caller falls back to backoff. A date in the past means "now".
 */
export function parseRetryAfter(value: string | null | undefined, nowMs: number): number | undefined {
  if (value === null || value === undefined) return undefined;
  const text = value.trim();
  if (/^\d+$/.test(text)) return Number(text) * 1000;
  // HTTP-dates start with a day name. Without this check the lenient Date.parse reads "1.5" or
  // "-3" as some date and the wait becomes nonsense.
  if (!/^[A-Za-z]{3}/.test(text)) return undefined;
  // asctime dates carry no zone but mean GMT; Date.parse would read them as local time.
  const at = Date.parse(/(GMT|UTC)$/i.test(text) ? text : `${text} GMT`);
  if (Number.isNaN(at)) return undefined;
  return Math.max(0, at - nowMs);
}

/**
 * Full-jitter exponential backoff (a uniformly random wait up to the window) so that many
 * clients throttled at once do not come back in lockstep. `retryIndex` 0 is the first retry.
 */
export function backoffDelay(retryIndex: number, random: () => number = Math.random): number {
  const window = Math.min(BACKOFF_CAP_MS, BACKOFF_BASE_MS * 2 ** retryIndex);
  return Math.floor(random() * window);
}

/**
 * How long to wait before the next attempt, or null to give up and throw the last error: when
 * `maxRetries` retries were made, or when the wait would end past `maxRetryTimeMs` since the
 * first attempt (a wait the caller cannot afford is not started at all).
 */
export function nextRetryDelay(args: {
  retriesSoFar: number;
  elapsedMs: number;
  retryAfterMs: number | undefined;
  limits: RetryLimits;
  random?: () => number;
}): number | null {
  if (args.retriesSoFar >= args.limits.maxRetries) return null;
  const delay = args.retryAfterMs ?? backoffDelay(args.retriesSoFar, args.random);
  if (args.elapsedMs + delay > args.limits.maxRetryTimeMs) return null;
  return delay;
}

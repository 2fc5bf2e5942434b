import { backoffDelay, CallRetryTraits, isRetryable, nextRetryDelay, parseRetryAfter } from './retry';

const NOW = Date.UTC(2030, 0, 1, 12, 0, 0);
const READ: CallRetryTraits = { retries: true, safeToRepeat: true, idempotencyKey: false };
const CREATE: CallRetryTraits = { retries: true, safeToRepeat: true, idempotencyKey: true };
const UNSAFE: CallRetryTraits = { retries: true, safeToRepeat: false, idempotencyKey: false };
const REFRESH: CallRetryTraits = { retries: false, safeToRepeat: false, idempotencyKey: false };

describe('parseRetryAfter', () => {
  it('reads delta-seconds as milliseconds', () => {
    expect(parseRetryAfter('0', NOW)).toBe(0);
    expect(parseRetryAfter('7', NOW)).toBe(7000);
    expect(parseRetryAfter(' 120 ', NOW)).toBe(120_000);
  });

  it('reads an HTTP-date as the time left until it, in all three RFC 9110 forms', () => {
    expect(parseRetryAfter(new Date(NOW + 42_000).toUTCString(), NOW)).toBe(42_000);
    expect(parseRetryAfter('Tuesday, 01-Jan-30 12:00:05 GMT', NOW)).toBe(5000);
    expect(parseRetryAfter('Tue Jan  1 12:00:09 2030', NOW)).toBe(9000);
  });

  it('treats a date in the past as "retry now"', () => {
    expect(parseRetryAfter(new Date(NOW - 60_000).toUTCString(), NOW)).toBe(0);
  });

  it('answers undefined for absent or unreadable values, so backoff applies', () => {
    for (const value of [null, undefined, '', 'soon', '1.5', '-3', 'Xyz, 99 Foo 2030']) {
      expect(parseRetryAfter(value, NOW)).toBeUndefined();
    }
  });
});

describe('backoffDelay', () => {
  it('draws uniformly below a window that doubles from 500 ms and stops at 8 s (full jitter)', () => {
    const windows = [0, 1, 2, 3, 4, 5, 10].map((i) => backoffDelay(i, () => 0.999999) + 1);
    expect(windows).toEqual([500, 1000, 2000, 4000, 8000, 8000, 8000]);
    expect(backoffDelay(3, () => 0)).toBe(0);
    expect(backoffDelay(3, () => 0.5)).toBe(2000);
  });
});

describe('nextRetryDelay', () => {
  const limits = { maxRetries: 3, maxRetryTimeMs: 30_000 };

  it('waits what Retry-After asked for', () => {
    expect(nextRetryDelay({ retriesSoFar: 0, elapsedMs: 0, retryAfterMs: 2000, limits })).toBe(2000);
  });

  it('backs off without Retry-After', () => {
    expect(nextRetryDelay({ retriesSoFar: 2, elapsedMs: 0, retryAfterMs: undefined, limits, random: () => 0.5 })).toBe(1000);
  });

  it('gives up after maxRetries retries', () => {
    expect(nextRetryDelay({ retriesSoFar: 2, elapsedMs: 0, retryAfterMs: 1, limits })).toBe(1);
    expect(nextRetryDelay({ retriesSoFar: 3, elapsedMs: 0, retryAfterMs: 1, limits })).toBeNull();
    expect(nextRetryDelay({ retriesSoFar: 0, elapsedMs: 0, retryAfterMs: 1, limits: { ...limits, maxRetries: 0 } })).toBeNull();
  });

  it('gives up when the wait would end past maxRetryTimeMs since the first attempt', () => {
    expect(nextRetryDelay({ retriesSoFar: 1, elapsedMs: 25_000, retryAfterMs: 5000, limits })).toBe(5000);
    expect(nextRetryDelay({ retriesSoFar: 1, elapsedMs: 25_001, retryAfterMs: 5000, limits })).toBeNull();
    expect(nextRetryDelay({ retriesSoFar: 0, elapsedMs: 0, retryAfterMs: 31_000, limits })).toBeNull();
  });
});

describe('isRetryable', () => {
  it('retries 429 and 503 on any call that allows retries', () => {
    for (const call of [READ, CREATE, UNSAFE]) {
      expect(isRetryable({ kind: 'status', status: 429 }, call)).toBe(true);
      expect(isRetryable({ kind: 'status', status: 503 }, call)).toBe(true);
    }
  });

  it('retries nothing on the refresh call, not even 429 or 503 or a lost answer', () => {
    expect(isRetryable({ kind: 'status', status: 429 }, REFRESH)).toBe(false);
    expect(isRetryable({ kind: 'status', status: 503 }, REFRESH)).toBe(false);
    expect(isRetryable({ kind: 'connection' }, REFRESH)).toBe(false);
  });

  it('retries network errors and timeouts only where repeating the request is harmless', () => {
    expect(isRetryable({ kind: 'connection' }, READ)).toBe(true);
    expect(isRetryable({ kind: 'connection' }, CREATE)).toBe(true);
    expect(isRetryable({ kind: 'connection' }, UNSAFE)).toBe(false);
  });

  it('retries a 409 of a create with an Idempotency-Key (in flight), not one naming a duplicate field', () => {
    expect(isRetryable({ kind: 'status', status: 409, hasFieldErrors: false }, CREATE)).toBe(true);
    expect(isRetryable({ kind: 'status', status: 409, hasFieldErrors: true }, CREATE)).toBe(false);
    expect(isRetryable({ kind: 'status', status: 409 }, READ)).toBe(false);
  });

  it('throws every other status at once', () => {
    for (const status of [400, 401, 403, 404, 413, 415, 422, 500, 502, 504]) {
      expect(isRetryable({ kind: 'status', status }, CREATE)).toBe(false);
    }
  });
});

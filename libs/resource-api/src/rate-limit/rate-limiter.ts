/** Keys with a bucket at once, by default: far more than the keys live on one instance in a minute. */
export const RATE_LIMITER_MAX_KEYS = 100_000;

/**
 * Token buckets per API key, in memory: `ratePerSecond` sustained, `burst` at once. Each instance
 * limits on its own (no network I/O per request, docs/api.md section 1), so the platform-wide limit is
 * the per-instance one times the number of instances behind the load balancer.
 *
 * At most `maxKeys` buckets: a full bucket is forgotten (it says nothing a new one would not), and
 * past the bound the oldest bucket goes, so that key starts again from a full burst. Memory is
 * bounded whatever the number of keys calling; the bound errs towards letting a request through,
 * never towards refusing a key for others' traffic.
 */
export class RateLimiter {
  private readonly buckets = new Map<string, { tokens: number; at: number }>();
  private lastSweep = 0;

  constructor(
    private readonly ratePerSecond: number,
    private readonly burst: number,
    private readonly now: () => number = Date.now,
    private readonly maxKeys = RATE_LIMITER_MAX_KEYS,
  ) {}

  /** Takes one token; returns 0 when allowed, otherwise the seconds to wait. */
  take(key: string): number {
    const now = this.now();
    this.sweep(now);
    let bucket = this.buckets.get(key);
    if (!bucket) {
      if (this.buckets.size >= this.maxKeys) this.makeRoom(now);
      bucket = { tokens: this.burst, at: now };
      this.buckets.set(key, bucket);
    }
    bucket.tokens = Math.min(this.burst, bucket.tokens + ((now - bucket.at) / 1000) * this.ratePerSecond);
    bucket.at = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return 0;
    }
    return Math.max(1, Math.ceil((1 - bucket.tokens) / this.ratePerSecond));
  }

  /** Forgets full buckets now and then, so memory follows the active keys only. */
  private sweep(now: number, force = false): void {
    if (!force && now - this.lastSweep < 60_000) return;
    this.lastSweep = now;
    for (const [key, b] of this.buckets) {
      if (b.tokens + ((now - b.at) / 1000) * this.ratePerSecond >= this.burst) this.buckets.delete(key);
    }
  }

  /** At the bound: full buckets go first; if none is full, the oldest (a Map iterates in insertion order). */
  private makeRoom(now: number): void {
    // A sweep walks every bucket: at most one a second, so a flood of new keys cannot make each request pay for one.
    if (now - this.lastSweep >= 1000) this.sweep(now, true);
    if (this.buckets.size >= this.maxKeys) this.buckets.delete(this.buckets.keys().next().value as string);
  }

  /** Keys holding a bucket (for tests and metrics). */
  get size(): number {
    return this.buckets.size;
  }
}

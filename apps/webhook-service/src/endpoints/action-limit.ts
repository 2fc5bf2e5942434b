import { ProblemException } from '@invoicing/service-kit';

/** Organizations tracked at once; past it the oldest window is forgotten (memory stays bounded). */
const MAX_TRACKED = 100_000;

/**
 * Tests, resends and replays make the platform POST to a URL the tenant chose, as often as it asks:
 * without a bound, a steady source of requests at any public host, and rows kept 30 days. Each
 * organization gets `perMinute` of them a minute on each instance (a fixed window), then 429 with
 * Retry-After.
 */
export class ActionLimit {
  private readonly windows = new Map<string, { startedAt: number; count: number }>();

  constructor(
    private readonly perMinute: number,
    private readonly now: () => number = Date.now,
  ) {}

  take(organizationId: string): void {
    const now = this.now();
    let window = this.windows.get(organizationId);
    if (!window || now - window.startedAt >= 60_000) {
      this.windows.delete(organizationId);
      if (this.windows.size >= MAX_TRACKED) this.windows.delete(this.windows.keys().next().value as string);
      window = { startedAt: now, count: 0 };
      this.windows.set(organizationId, window);
    }
    if (window.count >= this.perMinute) {
      const retryAfter = Math.max(1, Math.ceil((window.startedAt + 60_000 - now) / 1000));
      throw new ProblemException(429, `At most ${this.perMinute} webhook tests, resends and replays a minute per organization; retry in ${retryAfter} s.`, undefined, {
        'Retry-After': String(retryAfter),
      });
    }
    window.count += 1;
  }
}

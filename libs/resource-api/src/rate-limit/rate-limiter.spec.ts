import { RateLimiter } from './rate-limiter';

describe(RateLimiter.name, () => {
  it('allows a burst, then the sustained rate, per key', () => {
    let now = 0;
    const limiter = new RateLimiter(10, 3, () => now);
    expect([limiter.take('a'), limiter.take('a'), limiter.take('a')]).toEqual([0, 0, 0]);
    expect(limiter.take('a')).toBe(1);
    expect(limiter.take('b')).toBe(0);
    now += 100; // one token back at 10/s
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBeGreaterThan(0);
  });

  it('says how long to wait when the rate is below one a second', () => {
    let now = 0;
    const limiter = new RateLimiter(0.25, 1, () => now);
    expect(limiter.take('a')).toBe(0);
    expect(limiter.take('a')).toBe(4);
    now += 4000;
    expect(limiter.take('a')).toBe(0);
  });

  it('holds at most maxKeys buckets, forgetting full ones first, then the oldest', () => {
    let now = 0;
    const limiter = new RateLimiter(1, 2, () => now, 3);
    for (const key of ['a', 'b', 'c']) limiter.take(key);
    limiter.take('a');
    expect(limiter.take('a')).toBeGreaterThan(0); // a is empty
    for (let i = 0; i < 1000; i++) limiter.take(`flood-${i}`);
    expect(limiter.size).toBeLessThanOrEqual(3);
    // Two seconds on, every bucket is full again: the sweep frees them before any is evicted.
    now += 2000;
    limiter.take('d');
    expect(limiter.size).toBe(1);
  });
});

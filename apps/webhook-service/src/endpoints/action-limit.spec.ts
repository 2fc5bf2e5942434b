import { ProblemException } from '@invoicing/service-kit';
import { ActionLimit } from './action-limit';

describe('ActionLimit', () => {
  it('allows perMinute actions per organization a minute, then 429 with Retry-After, apart for each organization', () => {
    let now = 1_000_000;
    const limit = new ActionLimit(3, () => now);
    for (let i = 0; i < 3; i++) limit.take('a');
    let refused: unknown;
    try {
      limit.take('a');
    } catch (e) {
      refused = e;
    }
    expect(refused).toBeInstanceOf(ProblemException);
    expect((refused as ProblemException).status).toBe(429);
    expect((refused as ProblemException).headers).toEqual({ 'Retry-After': '60' });
    limit.take('b');
    now += 60_000;
    limit.take('a');
  });
});

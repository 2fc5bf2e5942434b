import { Inject, Injectable } from '@nestjs/common';
import { ProblemException } from '@invoicing/service-kit';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { REDIS } from '../sessions/session-store';
import type { RedisClient } from '../sessions/redis-connection';

const WINDOW_MS = 60_000;

/** What a budget counts: rolls and PATCHes (`changes`), or new keys (`creations`). */
export type KeyBudget = 'changes' | 'creations';

/**
 * Per-organization budgets of key operations, a fixed minute each in Redis (one INCR per operation).
 * - `changes`: at most KEY_CHANGES_PER_ORGANIZATION_PER_MINUTE rolls and allowlist changes (ADR
 *   0023). Each change is announced to every auth instance and, for an allowlist, held by every
 *   resource service for a token lifetime: a tenant changing its keys in a loop would spend the
 *   neighbours' memory and the instances' caches.
 * - `creations`: at most KEY_CREATIONS_PER_ORGANIZATION_PER_MINUTE new keys (ADR 0035). A key is never
 *   deleted: thousands made to expire a moment later were what buried a live key in the key list,
 *   and each costs a row and an audit record kept for ever.
 * The budgets are separate, so a script provisioning keys cannot stop the owner rolling a leaked
 * secret. The counts are the organization's own: nobody else's operations can use them up.
 */
@Injectable()
export class KeyChangeLimit {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  /** Counts one operation; throws 429 with Retry-After once the organization's minute is spent. */
  async spend(organizationId: string, budget: KeyBudget = 'changes'): Promise<void> {
    const key = `${this.config.REDIS_KEY_PREFIX}${budget === 'changes' ? 'kchg' : 'knew'}:{${organizationId}}`;
    const limit = budget === 'changes' ? this.config.KEY_CHANGES_PER_ORGANIZATION_PER_MINUTE : this.config.KEY_CREATIONS_PER_ORGANIZATION_PER_MINUTE;
    const [[, count], [, ttl]] = (await this.redis.multi().incr(key).pttl(key).exec()) as [[null, number], [null, number]];
    if (ttl < 0) await this.redis.pexpire(key, WINDOW_MS);
    if (count > limit) {
      const retryAfter = Math.max(1, Math.ceil((ttl < 0 ? WINDOW_MS : ttl) / 1000));
      const what = budget === 'changes' ? 'key changes' : 'new keys';
      throw new ProblemException(429, `Too many ${what} in this organization; retry in ${retryAfter} seconds.`, undefined, { 'Retry-After': String(retryAfter) });
    }
  }
}

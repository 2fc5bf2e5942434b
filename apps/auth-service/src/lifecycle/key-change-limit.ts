import { Inject, Injectable } from '@nestjs/common';
import { ProblemException } from '@invoicing/service-kit';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { REDIS } from '../sessions/session-store';
import type { RedisClient } from '../sessions/redis-connection';

const WINDOW_MS = 60_000;

/**
 * At most KEY_CHANGES_PER_ORGANIZATION_PER_MINUTE rolls and allowlist changes per organization
 * (ADR 0023). Each change is announced to every auth instance and, for an allowlist, held by every
 * resource service for a token lifetime: a tenant changing its keys in a loop would spend the
 * neighbours' memory and the instances' caches. The count is the organization's own, so nobody
 * else's changes can use it up. A fixed window in Redis: one INCR per change.
 */
@Injectable()
export class KeyChangeLimit {
  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  /** Counts one change; throws 429 with Retry-After once the organization's minute is spent. */
  async spend(organizationId: string): Promise<void> {
    const key = `${this.config.REDIS_KEY_PREFIX}kchg:{${organizationId}}`;
    const [[, count], [, ttl]] = (await this.redis.multi().incr(key).pttl(key).exec()) as [[null, number], [null, number]];
    if (ttl < 0) await this.redis.pexpire(key, WINDOW_MS);
    if (count > this.config.KEY_CHANGES_PER_ORGANIZATION_PER_MINUTE) {
      const retryAfter = Math.max(1, Math.ceil((ttl < 0 ? WINDOW_MS : ttl) / 1000));
      throw new ProblemException(429, `Too many key changes in this organization; retry in ${retryAfter} seconds.`, undefined, { 'Retry-After': String(retryAfter) });
    }
  }
}

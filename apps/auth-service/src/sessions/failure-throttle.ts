import { Inject, Injectable } from '@nestjs/common';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import type { RedisClient } from './redis-connection';
import { REDIS } from './session-store';

/** A counter of failures for one subject (a client id, an email, an address) and its limit. */
export interface ThrottleSubject {
  key: string;
  limit: number;
}

/**
 * Counts failures per subject in fixed windows in Redis. Past the limit, every attempt for that
 * subject is refused until the window ends: this caps online guessing without locking anyone out
 * for long. Separate GETs rather than MGET: the keys live in different Redis Cluster slots.
 */
@Injectable()
export class FailureThrottle {
  private readonly prefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.prefix = `${config.REDIS_KEY_PREFIX}thr:`;
  }

  /** Seconds until the first subject over its limit may try again, or null when none is. */
  async retryAfter(subjects: ThrottleSubject[]): Promise<number | null> {
    const counts = await Promise.all(subjects.map((s) => this.redis.get(this.prefix + s.key)));
    for (let i = 0; i < subjects.length; i++) {
      if (Number(counts[i] ?? 0) >= subjects[i].limit) {
        const ttl = await this.redis.pttl(this.prefix + subjects[i].key);
        return Math.max(1, Math.ceil(ttl / 1000));
      }
    }
    return null;
  }

  async recordFailure(subjects: ThrottleSubject[], windowSeconds: number): Promise<void> {
    await Promise.all(
      subjects.map((s) => this.redis.multi().incr(this.prefix + s.key).expire(this.prefix + s.key, windowSeconds, 'NX').exec()),
    );
  }
}

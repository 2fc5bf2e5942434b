import { Inject, Injectable, Logger } from '@nestjs/common';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import type { Result } from 'ioredis';
import type { RedisClient } from './redis-connection';
import { REDIS } from './session-store';

declare module 'ioredis' {
  interface RedisCommander<Context> {
    authThrottleGiveBack(key: string): Result<number, Context>;
  }
}

/** A counter of failures for one subject (a client at an address, an address, ...) and its limit. */
export interface ThrottleSubject {
  key: string;
  limit: number;
}

/**
 * What one failure is counted against: `refuse` subjects turn later attempts away while over their
 * limit; `watch` subjects never refuse anyone and only raise an alert (a warning log line, once per
 * window) when they reach theirs. A subject that refuses must be one the caller cannot make a
 * stranger share: the caller's own address, or the caller's address with what it tried. A counter per
 * client id or per email alone is a lock anyone can turn from anywhere (ADR 0022).
 */
export interface ThrottlePolicy {
  refuse: ThrottleSubject[];
  watch?: ThrottleSubject[];
  windowSeconds: number;
}

/**
 * Counts failures per subject in fixed windows in Redis. Past a refusing subject's limit, attempts
 * are refused until the window ends (the token endpoints refuse only further failures: a correct
 * secret always passes, see ClientAuthenticator). Separate commands rather than MGET: the keys live
 * in different Redis Cluster slots.
 */
@Injectable()
export class FailureThrottle {
  private readonly prefix: string;
  private readonly logger = new Logger('throttle');

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.prefix = `${config.REDIS_KEY_PREFIX}thr:`;
    redis.defineCommand('authThrottleGiveBack', { numberOfKeys: 1, lua: GIVE_BACK });
  }

  /** Seconds until every refusing subject over its limit may try again (the longest wait), or null when none is over. */
  async retryAfter(policy: ThrottlePolicy): Promise<number | null> {
    const counts = await Promise.all(policy.refuse.map((s) => this.redis.get(this.prefix + s.key)));
    const over = policy.refuse.filter((s, i) => Number(counts[i] ?? 0) >= s.limit);
    return over.length === 0 ? null : this.longestWait(over);
  }

  /** Counts one failure against every subject of the policy; returns the watched subjects it just took to their limit. */
  async recordFailure(policy: ThrottlePolicy): Promise<ThrottleSubject[]> {
    const counts = await this.increment([...policy.refuse, ...(policy.watch ?? [])], policy.windowSeconds);
    return this.alert(policy, counts.slice(policy.refuse.length));
  }

  /**
   * Takes one attempt from every refusing budget before the attempt is judged, atomically: parallel
   * requests cannot all pass a read of the counters before any failure is counted (for password
   * guessing, where each attempt then costs an Argon2id hash). Returns the seconds to wait, with
   * nothing taken, when a budget is spent; otherwise null, and the caller then settles the attempt
   * with {@link settle}: a success gives its place back, a failure keeps it and feeds the watch.
   */
  async reserve(policy: ThrottlePolicy): Promise<number | null> {
    const counts = await this.increment(policy.refuse, policy.windowSeconds);
    const over = policy.refuse.filter((s, i) => counts[i] > s.limit);
    if (over.length === 0) return null;
    await this.giveBack(policy.refuse);
    return this.longestWait(over);
  }

  /** Settles a reserved attempt; answers the watched subjects a failure just took to their limit. */
  async settle(policy: ThrottlePolicy, succeeded: boolean): Promise<ThrottleSubject[]> {
    if (succeeded) {
      await this.giveBack(policy.refuse);
      return [];
    }
    const watched = policy.watch ?? [];
    return this.alert(policy, await this.increment(watched, policy.windowSeconds));
  }

  private increment(subjects: ThrottleSubject[], windowSeconds: number): Promise<number[]> {
    return Promise.all(
      subjects.map((s) =>
        this.redis
          .multi()
          .incr(this.prefix + s.key)
          .expire(this.prefix + s.key, windowSeconds, 'NX')
          .exec()
          .then((replies) => Number(replies?.[0]?.[1] ?? 0)),
      ),
    );
  }

  /** Decrements only a counter that still exists: one that expired meanwhile must not come back, without a TTL, below zero. */
  private async giveBack(subjects: ThrottleSubject[]): Promise<void> {
    await Promise.all(subjects.map((s) => this.redis.authThrottleGiveBack(this.prefix + s.key)));
  }

  private async longestWait(subjects: ThrottleSubject[]): Promise<number> {
    const ttls = await Promise.all(subjects.map((s) => this.redis.pttl(this.prefix + s.key)));
    return Math.max(1, Math.ceil(Math.max(...ttls) / 1000));
  }

  /** Exactly at the limit: one alert per watched subject and window, however long the failures go on. */
  private alert(policy: ThrottlePolicy, watchedCounts: number[]): ThrottleSubject[] {
    const alerts = (policy.watch ?? []).filter((s, i) => watchedCounts[i] === s.limit);
    for (const s of alerts) {
      this.logger.warn({ msg: 'failures for one subject reached the alert threshold', event: 'throttle_alert', subject: s.key, failures: s.limit, window_seconds: policy.windowSeconds });
    }
    return alerts;
  }
}

const GIVE_BACK = `if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end return 0`;

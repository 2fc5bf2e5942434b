import { Inject, Injectable } from '@nestjs/common';
import type Redis from 'ioredis';
import { AUTH_CONFIG, AuthConfig } from '../config';
import { REDIS } from '../sessions/session-store';
import { OAuthError } from '../token/oauth-error';

/**
 * Counts failed client authentications per client id and per address in fixed windows. Past the
 * threshold every attempt of that client or address gets 429 with Retry-After until the window ends,
 * which caps online guessing without letting one noisy address lock a client out for long.
 */
@Injectable()
export class ClientAuthThrottle {
  constructor(
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  private keys(clientId: string | null, address: string): Array<[key: string, limit: number]> {
    const p = this.config.REDIS_KEY_PREFIX;
    const keys: Array<[string, number]> = [[`${p}thr:ip:${address}`, this.config.AUTH_THROTTLE_MAX_FAILURES_PER_ADDRESS]];
    if (clientId) keys.push([`${p}thr:cl:${clientId}`, this.config.AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT]);
    return keys;
  }

  /** Throws 429 when the client or the address is over its limit. */
  async check(clientId: string | null, address: string): Promise<void> {
    const keys = this.keys(clientId, address);
    // Separate GETs, not MGET: the keys live in different Redis Cluster slots.
    const counts = await Promise.all(keys.map(([key]) => this.redis.get(key)));
    for (let i = 0; i < keys.length; i++) {
      if (Number(counts[i] ?? 0) >= keys[i][1]) {
        const ttl = await this.redis.pttl(keys[i][0]);
        const retryAfter = Math.max(1, Math.ceil(ttl / 1000));
        throw new OAuthError(
          429,
          'temporarily_unavailable',
          `Too many failed client authentications; retry in ${retryAfter} seconds.`,
          { 'Retry-After': String(retryAfter) },
        );
      }
    }
  }

  async recordFailure(clientId: string | null, address: string): Promise<void> {
    const window = this.config.AUTH_THROTTLE_WINDOW_SECONDS;
    await Promise.all(
      this.keys(clientId, address).map(([key]) =>
        this.redis.multi().incr(key).expire(key, window, 'NX').exec(),
      ),
    );
  }
}

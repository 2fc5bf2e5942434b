import { Inject, Injectable } from '@nestjs/common';
import { createHash, randomBytes } from 'node:crypto';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import type { RedisClient } from '../sessions/redis-connection';
import { REDIS } from '../sessions/session-store';

/** Who is signed in to the settings area. */
export interface DashboardUser {
  userId: string;
  organizationId: string;
  email: string;
}

export const SESSION_TTL_SECONDS = 8 * 3600;

/**
 * Settings-area sessions in Redis. The cookie carries 256 random bits; Redis holds only their
 * SHA-256, so a read of Redis does not yield usable cookies.
 */
@Injectable()
export class DashboardSessions {
  private readonly prefix: string;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(AUTH_CONFIG) config: AuthConfig,
  ) {
    this.prefix = `${config.REDIS_KEY_PREFIX}dash:`;
  }

  private key(token: string): string {
    return this.prefix + createHash('sha256').update(token).digest('hex');
  }

  async start(user: DashboardUser): Promise<string> {
    const token = randomBytes(32).toString('base64url');
    await this.redis.set(this.key(token), JSON.stringify(user), 'EX', SESSION_TTL_SECONDS);
    return token;
  }

  /** The session's user, sliding its expiry; null when the cookie is unknown or expired. */
  async find(token: string | undefined): Promise<DashboardUser | null> {
    if (!token || token.length > 100) return null;
    const key = this.key(token);
    const value = await this.redis.getex(key, 'EX', SESSION_TTL_SECONDS);
    return value ? decodeUser(value) : null;
  }

  async end(token: string | undefined): Promise<void> {
    if (token && token.length <= 100) await this.redis.del(this.key(token));
  }
}

/**
 * The stored user, or null (signed out) unless every field is a string. A session written under
 * other field names (before the organization id had one name) must not yield `undefined` ids:
 * TypeORM drops an undefined condition from a `where`, which would lift the tenant filter.
 */
function decodeUser(value: string): DashboardUser | null {
  const stored = JSON.parse(value) as Partial<Record<keyof DashboardUser, unknown>>;
  const { userId, organizationId, email } = stored;
  if (typeof userId !== 'string' || typeof organizationId !== 'string' || typeof email !== 'string') return null;
  return { userId, organizationId, email };
}

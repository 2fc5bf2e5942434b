import type { AuthConfig } from '../config/config';
import type { RedisClient } from '../sessions/redis-connection';
import { DashboardSessions } from './dashboard-sessions';

/** A map standing in for the three Redis commands the sessions use. */
function fakeRedis(): { redis: RedisClient; values: Map<string, string> } {
  const values = new Map<string, string>();
  const redis = {
    set: async (key: string, value: string) => void values.set(key, value),
    getex: async (key: string) => values.get(key) ?? null,
    del: async (key: string) => Number(values.delete(key)),
  };
  return { redis: redis as unknown as RedisClient, values };
}

describe('DashboardSessions', () => {
  const config = { REDIS_KEY_PREFIX: 't:' } as AuthConfig;

  it('finds the user a session was started for, by its cookie only', async () => {
    const { redis, values } = fakeRedis();
    const sessions = new DashboardSessions(redis, config);
    const user = { userId: 'u-1', organizationId: 'o-1', email: 'a@example.com' };
    const token = await sessions.start(user);
    expect(await sessions.find(token)).toEqual(user);
    expect([...values.keys()].some((k) => k.includes(token))).toBe(false);
    expect(await sessions.find(`${token}x`)).toBeNull();
  });

  it('treats a session stored under other field names as signed out, never as a user without ids', async () => {
    const { redis, values } = fakeRedis();
    const sessions = new DashboardSessions(redis, config);
    const token = await sessions.start({ userId: 'u-1', organizationId: 'o-1', email: 'a@example.com' });
    const [key] = values.keys();
    values.set(key, JSON.stringify({ userUuid: 'u-1', organizationUuid: 'o-1', email: 'a@example.com' }));
    expect(await sessions.find(token)).toBeNull();
  });
});

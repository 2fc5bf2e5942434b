import { randomUUID } from 'node:crypto';
import type { RedisClient } from '../sessions/redis-connection';
import { REDIS } from '../sessions/session-store';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';

/**
 * Nobody can lock an integration out (ADR 0022): failed client authentications refuse the address
 * they came from, never the key. The client's address is the socket's, or what a trusted proxy put in
 * X-Forwarded-For; here the test process plays the gateway (TRUSTED_PROXIES=127.0.0.1) and names the
 * caller's address in the header.
 */
let app: AuthTestApp;

beforeAll(async () => {
  app = await startAuthTestApp({ TRUSTED_PROXIES: '127.0.0.1' });
});

afterAll(async () => {
  await app.close();
});

const from = (address: string) => ({ 'x-forwarded-for': address });
const exchange = (clientId: string, clientSecret: string, address: string) =>
  postJson(`${app.baseUrl}/api/v1/auth/token`, { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret }, from(address));
const WRONG_SECRET = async () => (await app.createKey()).clientSecret;

describe('a stranger who knows a Client ID', () => {
  it('cannot make the right secret answer 429, nor block the owner revoking a session', async () => {
    const victim = await app.createKey();
    const wrong = await WRONG_SECRET();
    const attacker = '203.0.113.66';
    // Three times the limit, as a script that keeps going would.
    const limit = app.config.AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT_ADDRESS;
    const statuses = [];
    for (let i = 0; i < limit * 3; i++) statuses.push((await exchange(victim.clientId, wrong, attacker)).status);
    expect(statuses.slice(0, limit).every((s) => s === 401)).toBe(true);
    expect(statuses.slice(limit).every((s) => s === 429)).toBe(true);

    // The owner, elsewhere: the exchange, and RFC 7009 revocation with the key's credentials.
    const owner = '198.51.100.7';
    const session = await exchange(victim.clientId, victim.clientSecret, owner);
    expect(session.status).toBe(200);
    const revoke = await fetch(`${app.baseUrl}/api/v1/auth/revoke`, {
      method: 'POST',
      headers: {
        ...from(owner),
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${victim.clientId}:${victim.clientSecret}`).toString('base64')}`,
      },
      body: new URLSearchParams({ token: String(session.body.refresh_token) }).toString(),
    });
    expect(revoke.status).toBe(200);

    // A correct secret is never refused, even from the throttled address (it may be a NAT the owner
    // shares with the attacker); only further failures from there are.
    expect((await exchange(victim.clientId, victim.clientSecret, attacker)).status).toBe(200);
    expect((await exchange(victim.clientId, wrong, attacker)).status).toBe(429);
    // The count across addresses is kept for alerting, and refuses nobody.
    const redis = app.service.app.get<RedisClient>(REDIS);
    expect(Number(await redis.get(`${app.config.REDIS_KEY_PREFIX}thr:cl:${victim.clientId}`))).toBe(limit);
  });

  it('counts an IPv6 caller by its /64, so walking the block buys nothing', async () => {
    const victim = await app.createKey();
    const wrong = await WRONG_SECRET();
    const limit = app.config.AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT_ADDRESS;
    for (let i = 0; i < limit; i++) expect((await exchange(victim.clientId, wrong, `2001:db8:66:1::${(i + 1).toString(16)}`)).status).toBe(401);
    expect((await exchange(victim.clientId, wrong, '2001:db8:66:1:ffff::1')).status).toBe(429);
    expect((await exchange(victim.clientId, wrong, '2001:db8:66:2::1')).status).toBe(401);
  });

  it('is refused per address across every client id it tries, and nobody else is', async () => {
    const attacker = '198.18.0.66';
    const wrong = await WRONG_SECRET();
    const victim = await app.createKey();
    const budget = app.config.AUTH_THROTTLE_MAX_FAILURES_PER_ADDRESS;
    for (let i = 0; i < budget; i++) {
      expect((await exchange(`ak_live_${randomUUID().replace(/-/g, '')}`, wrong, attacker)).status).toBe(401);
    }
    expect((await exchange(`ak_live_${randomUUID().replace(/-/g, '')}`, wrong, attacker)).status).toBe(429);
    expect((await exchange(victim.clientId, wrong, attacker)).status).toBe(429);
    expect((await exchange(victim.clientId, victim.clientSecret, attacker)).status).toBe(200);
    expect((await exchange(victim.clientId, victim.clientSecret, '198.51.100.9')).status).toBe(200);
  });
});

describe('X-Forwarded-For', () => {
  it('is ignored from a caller that is not a trusted proxy: forged addresses do not buy a fresh budget', async () => {
    const direct = await startAuthTestApp({ TRUSTED_PROXIES: '', AUTH_THROTTLE_MAX_FAILURES_PER_ADDRESS: '5' });
    try {
      const wrong = (await direct.createKey()).clientSecret;
      // A fresh client id and a fresh claimed address each time: only the per-address count can stop it.
      const send = (i: number) =>
        postJson(
          `${direct.baseUrl}/api/v1/auth/token`,
          { grant_type: 'client_credentials', client_id: `ak_live_${randomUUID().replace(/-/g, '')}`, client_secret: wrong },
          from(`203.0.113.${i + 1}`),
        );
      for (let i = 0; i < 5; i++) expect((await send(i)).status).toBe(401);
      // Counted as 127.0.0.1 (the socket), whatever the header claimed.
      expect((await send(5)).status).toBe(429);
    } finally {
      await direct.close();
    }
  });

  it('is believed from a trusted proxy', async () => {
    const victim = await app.createKey();
    const wrong = await WRONG_SECRET();
    const limit = app.config.AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT_ADDRESS;
    for (let i = 0; i < limit; i++) expect((await exchange(victim.clientId, wrong, '192.0.2.10')).status).toBe(401);
    expect((await exchange(victim.clientId, wrong, '192.0.2.10')).status).toBe(429);
    expect((await exchange(victim.clientId, wrong, '192.0.2.11')).status).toBe(401);
  });
});

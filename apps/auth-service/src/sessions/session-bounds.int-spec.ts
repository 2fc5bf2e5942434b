import { parsePublicId, REFRESH_TOKEN_TTL_SECONDS } from '@invoicing/contracts';
import type Redis from 'ioredis';
import { ApiKeyRevocationService } from '../revocation/api-key-revocation.service';
import { REDIS } from './session-store';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';

/**
 * The session store stays O(log n) per exchange (ADR 0014): a bound on live sessions per key with the
 * least recently used evicted, expired sessions dropped as new ones come, and a revoked key refused
 * at once by every instance although each caches API keys.
 */
let a: AuthTestApp;
let b: AuthTestApp;

beforeAll(async () => {
  a = await startAuthTestApp({ AUTH_MAX_SESSIONS_PER_KEY: '3' });
  // A second instance on the same Redis (same key prefix) and Postgres: what a replica sees.
  b = await startAuthTestApp({ AUTH_MAX_SESSIONS_PER_KEY: '3', REDIS_KEY_PREFIX: a.config.REDIS_KEY_PREFIX });
});

afterAll(async () => {
  await Promise.all([a.close(), b.close()]);
});

beforeEach(() => {
  a.clock.offsetMs = 0;
  b.clock.offsetMs = 0;
});

type Pair = { access_token: string; refresh_token: string };
const exchange = (app: AuthTestApp, key: { clientId: string; clientSecret: string }) =>
  postJson(`${app.baseUrl}/api/v1/auth/token`, { grant_type: 'client_credentials', client_id: key.clientId, client_secret: key.clientSecret });
const refresh = (app: AuthTestApp, refreshToken: string) => postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: refreshToken });
const redis = () => a.service.app.get<Redis>(REDIS);
const sessionKeys = (keyId: string) => {
  const uuid = parsePublicId('key', keyId);
  return { sess: `${a.config.REDIS_KEY_PREFIX}sess:{${uuid}}`, sexp: `${a.config.REDIS_KEY_PREFIX}sexp:{${uuid}}` };
};

it('holds at most AUTH_MAX_SESSIONS_PER_KEY live sessions and evicts the least recently used one', async () => {
  const key = await a.createKey();
  const pairs: Pair[] = [];
  for (let i = 0; i < 3; i++) pairs.push((await exchange(a, key)).body as Pair);
  // Rotating the first session makes it the most recently used: the second is now the oldest.
  const rotated = await refresh(a, pairs[0].refresh_token);
  expect(rotated.status).toBe(200);
  pairs[0] = rotated.body as Pair;

  const fourth = await exchange(a, key);
  expect(fourth.status).toBe(200);

  const { sess, sexp } = sessionKeys(key.id);
  expect(await redis().zcard(sexp)).toBe(3);
  expect((await redis().hkeys(sess)).filter((f) => f.startsWith('s:'))).toHaveLength(3);
  // The evicted session's refresh token is simply unknown now (not reuse: nothing else is revoked).
  expect((await refresh(a, pairs[1].refresh_token)).body.error).toBe('invalid_grant');
  expect((await refresh(a, pairs[0].refresh_token)).status).toBe(200);
  expect((await refresh(a, pairs[2].refresh_token)).status).toBe(200);
  expect((await refresh(a, (fourth.body as Pair).refresh_token)).status).toBe(200);
});

it('drops sessions whose refresh token expired when new ones are created', async () => {
  const key = await a.createKey();
  const old = (await exchange(a, key)).body as Pair;
  a.clock.offsetMs = (REFRESH_TOKEN_TTL_SECONDS + 1) * 1000;
  expect((await exchange(a, key)).status).toBe(200);
  const { sexp } = sessionKeys(key.id);
  expect(await redis().zcard(sexp)).toBe(1);
  expect((await refresh(a, old.refresh_token)).body.error).toBe('invalid_grant');
});

it('refuses a revoked key at once on an instance whose cache still holds it as active', async () => {
  const key = await a.createKey();
  // Both instances have read the key (and cached it).
  expect((await exchange(a, key)).status).toBe(200);
  const onB = (await exchange(b, key)).body as Pair;
  expect(onB.refresh_token).toBeDefined();

  await a.service.app.get(ApiKeyRevocationService).revoke(parsePublicId('org', key.organizationPublicId)!, key.id);

  const again = await exchange(b, key);
  expect(again.status).toBe(401);
  expect(again.body.error).toBe('invalid_client');
  expect((await refresh(b, onB.refresh_token)).body.error).toBe('invalid_grant');
});

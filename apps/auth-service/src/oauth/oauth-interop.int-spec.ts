import { ALL_SCOPES, parsePublicId, validateRevocationEvent } from '@invoicing/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import type Redis from 'ioredis';
import { REDIS } from '../sessions/session-store';
import { AuthTestApp, decodeJwt, postJson, startAuthTestApp } from '../testing/auth-test-app';

/**
 * The three additions for standard OAuth clients (ADR 0016): RFC 8414 metadata, the refresh grant at
 * the token endpoint, RFC 7009 revocation. Real Redis, Postgres and Kafka.
 */
let app: AuthTestApp;
let db: DataSource;

beforeAll(async () => {
  app = await startAuthTestApp();
  db = app.service.app.get<DataSource>(getDataSourceToken());
});

afterAll(async () => {
  await app.close();
});

type Key = Awaited<ReturnType<AuthTestApp['createKey']>>;
type Pair = { access_token: string; refresh_token: string; scope: string };

const basic = (key: Key) => `Basic ${Buffer.from(`${key.clientId}:${key.clientSecret}`).toString('base64')}`;
const tokenEndpoint = (body: unknown, headers?: Record<string, string>) => postJson(`${app.baseUrl}/api/v1/auth/token`, body, headers);
const refreshEndpoint = (refreshToken: string) => postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: refreshToken });

async function form(path: string, params: Record<string, string>, headers: Record<string, string> = {}) {
  const response = await fetch(`${app.baseUrl}${path}`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers },
    body: new URLSearchParams(params),
  });
  const text = await response.text();
  return { status: response.status, headers: response.headers, text, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
}

async function exchange(key: Key): Promise<Pair> {
  const r = await tokenEndpoint({ client_id: key.clientId, client_secret: key.clientSecret, grant_type: 'client_credentials' });
  expect(r.status).toBe(200);
  return r.body as unknown as Pair;
}

const refreshGrant = (refreshToken: string, extra: Record<string, string> = {}, headers?: Record<string, string>) =>
  form('/api/v1/auth/token', { grant_type: 'refresh_token', refresh_token: refreshToken, ...extra }, headers);

const revoke = (params: Record<string, string>, headers?: Record<string, string>) => form('/api/v1/auth/revoke', params, headers);

async function outboxEvents(key: Key): Promise<unknown[]> {
  const rows: Array<{ payload: unknown }> = await db.query(`SELECT payload FROM auth.outbox WHERE message_key = $1 ORDER BY id`, [key.id]);
  return rows.map((r) => r.payload);
}

describe('GET /.well-known/oauth-authorization-server', () => {
  it('serves RFC 8414 metadata whose issuer is the tokens’ iss, cacheable as a static document', async () => {
    const response = await fetch(`${app.baseUrl}/.well-known/oauth-authorization-server`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=3600');
    const metadata = (await response.json()) as Record<string, unknown>;
    const issuer = app.config.JWT_ISSUER;
    expect(metadata).toEqual({
      issuer,
      token_endpoint: `${issuer}/api/v1/auth/token`,
      revocation_endpoint: `${issuer}/api/v1/auth/revoke`,
      grant_types_supported: ['client_credentials', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: [...ALL_SCOPES],
      response_types_supported: [],
      service_documentation: `${issuer}/api/v1/docs`,
    });
    const pair = await exchange(await app.createKey());
    expect(decodeJwt(pair.access_token).payload.iss).toBe(metadata.issuer);
  });
});

describe('grant_type=refresh_token at POST /api/v1/auth/token', () => {
  it('rotates without client authentication (form and JSON), exactly like /api/v1/auth/refresh', async () => {
    const key = await app.createKey();
    const first = await exchange(key);
    const second = await refreshGrant(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.headers.get('cache-control')).toBe('no-store');
    expect(second.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: first.scope });
    expect(decodeJwt(second.body.access_token as string).payload.sid).toBe(decodeJwt(first.access_token).payload.sid);
    const third = await tokenEndpoint({ grant_type: 'refresh_token', refresh_token: second.body.refresh_token });
    expect(third.status).toBe(200);
    // One family across both endpoints: the token from the token endpoint works at /refresh.
    expect((await refreshEndpoint(third.body.refresh_token as string)).status).toBe(200);
  });

  it('rotates with client authentication by HTTP Basic and by client_secret_post', async () => {
    const key = await app.createKey();
    const pair = await exchange(key);
    const viaBasic = await refreshGrant(pair.refresh_token, {}, { authorization: basic(key) });
    expect(viaBasic.status).toBe(200);
    const viaPost = await refreshGrant(viaBasic.body.refresh_token as string, { client_id: key.clientId, client_secret: key.clientSecret });
    expect(viaPost.status).toBe(200);
  });

  it('answers 401 invalid_client for wrong credentials and spends nothing', async () => {
    const key = await app.createKey();
    const pair = await exchange(key);
    const wrong = await refreshGrant(pair.refresh_token, { client_id: key.clientId, client_secret: (await app.createKey()).clientSecret });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    const idOnly = await refreshGrant(pair.refresh_token, { client_id: key.clientId });
    expect(idOnly.status).toBe(401);
    expect((await refreshEndpoint(pair.refresh_token)).status).toBe(200);
  });

  it("refuses key A's refresh token presented with key B's credentials as invalid_grant, spending nothing", async () => {
    const a = await app.createKey();
    const b = await app.createKey();
    const pair = await exchange(a);
    const foreign = await refreshGrant(pair.refresh_token, {}, { authorization: basic(b) });
    expect(foreign.status).toBe(400);
    expect(foreign.body.error).toBe('invalid_grant');
    // Not spent, not counted as reuse: A's token still rotates, and no revocation was recorded.
    expect((await refreshGrant(pair.refresh_token, {}, { authorization: basic(a) })).status).toBe(200);
    expect(await outboxEvents(a)).toEqual([]);
    expect(await outboxEvents(b)).toEqual([]);
  });

  it('treats a spent token at the token endpoint as reuse: every session of the key is revoked', async () => {
    const key = await app.createKey();
    const a = await exchange(key);
    const b = await exchange(key);
    const a2 = await refreshGrant(a.refresh_token, {}, { authorization: basic(key) });
    expect(a2.status).toBe(200);
    const reuse = await refreshGrant(a.refresh_token, {}, { authorization: basic(key) });
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    expect((await refreshGrant(a2.body.refresh_token as string)).status).toBe(400);
    expect((await refreshEndpoint(b.refresh_token)).status).toBe(400);
    const events = await outboxEvents(key);
    expect(events).toHaveLength(1);
    const event = validateRevocationEvent(events[0]);
    expect(event.ok && event.value.data.reason).toBe('refresh_token_reuse');
  });

  it('narrows the scope on request and refuses a scope the session was not granted without spending the token', async () => {
    const key = await app.createKey(['read:invoices', 'read:clients']);
    const pair = await exchange(key);
    const outside = await refreshGrant(pair.refresh_token, { scope: 'write:invoices' });
    expect(outside.status).toBe(400);
    expect(outside.body.error).toBe('invalid_scope');
    const narrowed = await refreshGrant(pair.refresh_token, { scope: 'read:clients' });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.scope).toBe('read:clients');
    expect(decodeJwt(narrowed.body.access_token as string).payload.scope).toBe('read:clients');
    // The session keeps its grant: the next refresh without scope gets all of it again.
    const next = await refreshGrant(narrowed.body.refresh_token as string);
    expect(next.body.scope).toBe('read:invoices read:clients');
  });

  it('keeps unsupported_grant_type for other grants and invalid_request for a missing refresh_token', async () => {
    expect((await tokenEndpoint({ grant_type: 'password', username: 'u', password: 'p' })).body.error).toBe('unsupported_grant_type');
    expect((await tokenEndpoint({ grant_type: 'authorization_code', code: 'x' })).body.error).toBe('unsupported_grant_type');
    expect((await tokenEndpoint({ grant_type: 'refresh_token' })).body.error).toBe('invalid_request');
  });

  it('lets exactly one of 20 parallel refresh grants with one token succeed (25 rounds)', async () => {
    const key = await app.createKey();
    const rounds = 25;
    const outcomes: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const pair = await exchange(key);
      const results = await Promise.all(
        Array.from({ length: 20 }, (_, i) =>
          // Half authenticate, half do not: both go through the one rotation.
          refreshGrant(pair.refresh_token, {}, i % 2 === 0 ? { authorization: basic(key) } : {}),
        ),
      );
      const ok = results.filter((r) => r.status === 200).length;
      const refused = results.filter((r) => r.status === 400 && r.body.error === 'invalid_grant').length;
      outcomes.push(`${ok}/${refused}`);
    }
    expect(outcomes).toEqual(Array.from({ length: rounds }, () => '1/19'));
  });
});

describe('POST /api/v1/auth/revoke (RFC 7009)', () => {
  it('ends the session of a refresh token: 200 with an empty body, no-store, and a session_revoked event', async () => {
    const key = await app.createKey();
    const ended = await exchange(key);
    const kept = await exchange(key);
    const r = await revoke({ token: ended.refresh_token, token_type_hint: 'refresh_token' }, { authorization: basic(key) });
    expect(r.status).toBe(200);
    expect(r.text).toBe('');
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect((await refreshEndpoint(ended.refresh_token)).status).toBe(400);
    // Only that session: the other one still rotates.
    expect((await refreshEndpoint(kept.refresh_token)).status).toBe(200);

    const events = await outboxEvents(key);
    expect(events).toHaveLength(1);
    const event = validateRevocationEvent(events[0]);
    expect(event.ok).toBe(true);
    if (!event.ok) return;
    expect(event.value.type).toBe('invoicing.auth.sessions_revoked.v1');
    expect(event.value.data).toMatchObject({
      reason: 'session_revoked',
      session_ids: [decodeJwt(ended.access_token).payload.sid],
      api_key_id: key.id,
      organization_id: key.organizationPublicId,
      client_id: key.clientId,
    });

    // Revoking it again (or its spent token) changes nothing and publishes nothing more.
    expect((await revoke({ token: ended.refresh_token }, { authorization: basic(key) })).status).toBe(200);
    expect((await revoke({ token: ended.access_token }, { authorization: basic(key) })).status).toBe(200);
    expect(await outboxEvents(key)).toHaveLength(1);
  });

  it('ends the session of an access token (client_secret_post, JSON), whatever the hint says', async () => {
    const key = await app.createKey();
    const pair = await exchange(key);
    const r = await postJson(`${app.baseUrl}/api/v1/auth/revoke`, {
      token: pair.access_token,
      token_type_hint: 'refresh_token',
      client_id: key.clientId,
      client_secret: key.clientSecret,
    });
    expect(r.status).toBe(200);
    expect((await refreshEndpoint(pair.refresh_token)).status).toBe(400);
    const events = await outboxEvents(key);
    expect(events).toHaveLength(1);
    const event = validateRevocationEvent(events[0]);
    expect(event.ok && event.value.data.session_ids).toEqual([decodeJwt(pair.access_token).payload.sid]);
  });

  it('still announces a live access token whose session is already gone (evicted or expired)', async () => {
    const key = await app.createKey();
    const pair = await exchange(key);
    const sid = decodeJwt(pair.access_token).payload.sid as string;
    // As an eviction would: the session is gone, its access token lives on.
    const redis = app.service.app.get<Redis>(REDIS);
    await redis.hdel(`${app.config.REDIS_KEY_PREFIX}sess:{${parsePublicId('key', key.id)}}`, `s:${sid}`);
    const before = (await outboxEvents(key)).length;
    expect(before).toBe(0);
    expect((await revoke({ token: pair.refresh_token }, { authorization: basic(key) })).status).toBe(200);
    expect((await outboxEvents(key)).length).toBe(before);
    expect((await revoke({ token: pair.access_token }, { authorization: basic(key) })).status).toBe(200);
    const after = await outboxEvents(key);
    expect(after).toHaveLength(1);
    const event = validateRevocationEvent(after[0]);
    expect(event.ok && event.value.data).toMatchObject({ reason: 'session_revoked', session_ids: [sid] });
  });

  it('answers 200 and changes nothing for an unknown, malformed, foreign or wrongly signed token', async () => {
    const key = await app.createKey();
    const other = await app.createKey();
    const mine = await exchange(key);
    const theirs = await exchange(other);
    const [h, p] = theirs.access_token.split('.');
    const forged = `${h}.${p}.${Buffer.alloc(32).toString('base64url')}`;
    for (const token of [
      'rt_live_nope',
      `rt_live_${'A'.repeat(43)}AAAAAA`,
      'not a token at all',
      theirs.refresh_token,
      theirs.access_token,
      forged,
    ]) {
      const r = await revoke({ token }, { authorization: basic(key) });
      expect({ token, status: r.status, text: r.text }).toEqual({ token, status: 200, text: '' });
    }
    expect((await refreshEndpoint(theirs.refresh_token)).status).toBe(200);
    expect((await refreshEndpoint(mine.refresh_token)).status).toBe(200);
    expect(await outboxEvents(key)).toEqual([]);
    expect(await outboxEvents(other)).toEqual([]);
  });

  it('requires client authentication: 401 invalid_client without it or with a wrong secret, and nothing is revoked', async () => {
    const key = await app.createKey();
    const pair = await exchange(key);
    const none = await revoke({ token: pair.refresh_token });
    expect(none.status).toBe(401);
    expect(none.body.error).toBe('invalid_client');
    expect(none.headers.get('www-authenticate')).toMatch(/^Basic /);
    const wrong = await revoke({ token: pair.refresh_token, client_id: key.clientId, client_secret: (await app.createKey()).clientSecret });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error).toBe('invalid_client');
    const missingToken = await revoke({}, { authorization: basic(key) });
    expect(missingToken.status).toBe(400);
    expect(missingToken.body.error).toBe('invalid_request');
    expect((await refreshEndpoint(pair.refresh_token)).status).toBe(200);
  });
});

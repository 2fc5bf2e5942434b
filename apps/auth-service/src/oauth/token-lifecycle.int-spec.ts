import { REFRESH_TOKEN_TTL_SECONDS, validateRevocationEvent } from '@invoicing/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import type { DataSource } from 'typeorm';
import { ApiKeyCache } from '../keys/api-key-cache';
import { AuthTestApp, decodeJwt, postJson, startAuthTestApp } from '../testing/auth-test-app';

let app: AuthTestApp;
let key: Awaited<ReturnType<AuthTestApp['createKey']>>;

beforeAll(async () => {
  app = await startAuthTestApp();
  key = await app.createKey();
});

afterAll(async () => {
  await app.close();
});

beforeEach(() => {
  app.clock.offsetMs = 0;
});

const token = (body: unknown, headers?: Record<string, string>) => postJson(`${app.baseUrl}/api/v1/auth/token`, body, headers);
const refresh = (refreshToken: string) => postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: refreshToken });
const exchange = async (scope?: string) => {
  const r = await token({ client_id: key.clientId, client_secret: key.clientSecret, grant_type: 'client_credentials', ...(scope ? { scope } : {}) });
  expect(r.status).toBe(200);
  return r.body as { access_token: string; refresh_token: string; scope: string };
};

describe('POST /api/v1/auth/token', () => {
  it('exchanges JSON credentials for an RFC 9068 access token and a refresh token', async () => {
    const r = await token({ client_id: key.clientId, client_secret: key.clientSecret, grant_type: 'client_credentials' });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toEqual({
      access_token: expect.any(String),
      token_type: 'Bearer',
      expires_in: 3600,
      refresh_token: expect.stringMatching(/^rt_live_[0-9A-Za-z]{49}$/),
      scope: 'read:invoices write:invoices read:clients',
    });
    const { header, payload } = decodeJwt(r.body.access_token as string);
    expect(header).toEqual({ alg: 'HS256', typ: 'at+jwt', kid: 'dev-only' });
    expect(payload).toMatchObject({
      iss: app.config.JWT_ISSUER,
      aud: app.config.JWT_AUDIENCE,
      sub: key.id,
      client_id: key.clientId,
      org_id: key.organizationPublicId,
      scope: 'read:invoices write:invoices read:clients',
      sid: expect.stringMatching(/^ses_/),
      jti: expect.any(String),
    });
    expect((payload.exp as number) - (payload.iat as number)).toBe(3600);
  });

  it('accepts form-encoded bodies and HTTP Basic client authentication', async () => {
    const form = await fetch(`${app.baseUrl}/api/v1/auth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      body: new URLSearchParams({ grant_type: 'client_credentials', client_id: key.clientId, client_secret: key.clientSecret }),
    });
    expect(form.status).toBe(200);
    const basic = await fetch(`${app.baseUrl}/api/v1/auth/token`, {
      method: 'POST',
      headers: {
        'content-type': 'application/x-www-form-urlencoded',
        authorization: `Basic ${Buffer.from(`${key.clientId}:${key.clientSecret}`).toString('base64')}`,
      },
      body: 'grant_type=client_credentials&scope=read%3Ainvoices',
    });
    expect(basic.status).toBe(200);
    expect(((await basic.json()) as { scope: string }).scope).toBe('read:invoices');
  });

  it('narrows to requested scopes and refuses scopes the key lacks', async () => {
    expect((await exchange('read:clients read:invoices')).scope).toBe('read:invoices read:clients');
    const r = await token({ client_id: key.clientId, client_secret: key.clientSecret, grant_type: 'client_credentials', scope: 'write:payments' });
    expect(r.status).toBe(400);
    expect(r.body.error).toBe('invalid_scope');
  });

  it('gives one identical 401 for an unknown client, a wrong secret and a revoked key', async () => {
    const other = await app.createKey();
    const db = app.service.app.get<DataSource>(getDataSourceToken());
    await db.query(`UPDATE auth.api_keys SET status = 'revoked', revoked_at = now() WHERE client_id = $1`, [other.clientId]);
    const answers = await Promise.all([
      token({ client_id: 'ak_live_000000000000000000000000', client_secret: key.clientSecret, grant_type: 'client_credentials' }),
      token({ client_id: key.clientId, client_secret: other.clientSecret, grant_type: 'client_credentials' }),
      token({ client_id: other.clientId, client_secret: other.clientSecret, grant_type: 'client_credentials' }),
    ]);
    for (const a of answers) {
      expect(a.status).toBe(401);
      expect(a.body).toEqual({ error: 'invalid_client', error_description: 'Client authentication failed.' });
    }
  });

  it('rejects a secret with a wrong checksum before any store lookup', async () => {
    const lookups = jest.spyOn(app.service.app.get(ApiKeyCache), 'findByClientId');
    const typo = `${key.clientSecret.slice(0, 20)}${key.clientSecret[20] === 'a' ? 'b' : 'a'}${key.clientSecret.slice(21)}`;
    const r = await token({ client_id: key.clientId, client_secret: typo, grant_type: 'client_credentials' });
    expect(r.status).toBe(401);
    expect(lookups).not.toHaveBeenCalled();
    lookups.mockRestore();
  });

  it('answers malformed requests with RFC 6749 errors', async () => {
    const cases: Array<[unknown, Record<string, string> | undefined, number, string]> = [
      [{ client_id: key.clientId, client_secret: key.clientSecret }, undefined, 400, 'invalid_request'],
      [{ client_id: key.clientId, client_secret: key.clientSecret, grant_type: 'password' }, undefined, 400, 'unsupported_grant_type'],
      ['{"grant_type": ', undefined, 400, 'invalid_request'],
      ['grant_type=client_credentials', { 'content-type': 'text/plain' }, 400, 'invalid_request'],
      [[1, 2], undefined, 400, 'invalid_request'],
    ];
    for (const [body, headers, status, error] of cases) {
      const r = await token(body, headers);
      expect({ status: r.status, error: r.body.error }).toEqual({ status, error });
      expect(r.body.error_description).toEqual(expect.any(String));
    }
  });

  it('tells a client that sent JSON without a Content-Type which media types to send', async () => {
    // A Uint8Array body: fetch adds no Content-Type of its own.
    const body = new TextEncoder().encode(JSON.stringify({ grant_type: 'client_credentials', client_id: key.clientId, client_secret: key.clientSecret }));
    const r = await fetch(`${app.baseUrl}/api/v1/auth/token`, { method: 'POST', body });
    expect(r.status).toBe(400);
    expect(await r.json()).toEqual({
      error: 'invalid_request',
      error_description: 'The body must be application/json or application/x-www-form-urlencoded, sent with that Content-Type.',
    });
  });

  it('throttles failed client authentication per client and address with 429 and Retry-After', async () => {
    const victim = await app.createKey();
    const bad = { client_id: victim.clientId, client_secret: key.clientSecret, grant_type: 'client_credentials' };
    for (let i = 0; i < app.config.AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT_ADDRESS; i++) expect((await token(bad)).status).toBe(401);
    const limited = await token(bad);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The right secret is never refused (ADR 0022), and other clients are not affected.
    expect((await token({ ...bad, client_secret: victim.clientSecret })).status).toBe(200);
    await exchange();
  });
});

describe('POST /api/v1/auth/refresh', () => {
  it('rotates: a new pair on each use, and the same session id', async () => {
    const first = await exchange();
    const second = await refresh(first.refresh_token);
    expect(second.status).toBe(200);
    expect(second.headers.get('cache-control')).toBe('no-store');
    expect(second.body).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: first.scope });
    expect(second.body.refresh_token).not.toBe(first.refresh_token);
    expect(decodeJwt(second.body.access_token as string).payload.sid).toBe(decodeJwt(first.access_token).payload.sid);
    const third = await refresh(second.body.refresh_token as string);
    expect(third.status).toBe(200);
  });

  it('revokes every session of the key when a spent token is presented, and records the event', async () => {
    const reuseKey = await app.createKey();
    const login = async () =>
      (await token({ client_id: reuseKey.clientId, client_secret: reuseKey.clientSecret, grant_type: 'client_credentials' })).body as {
        access_token: string;
        refresh_token: string;
      };
    const a = await login();
    const b = await login();
    const a2 = await refresh(a.refresh_token);
    expect(a2.status).toBe(200);

    const reuse = await refresh(a.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');

    // Both sessions are gone: neither the rotated token of A nor B's token works any more.
    expect((await refresh(a2.body.refresh_token as string)).status).toBe(400);
    expect((await refresh(b.refresh_token)).status).toBe(400);

    const db = app.service.app.get<DataSource>(getDataSourceToken());
    const rows: Array<{ payload: unknown }> = await db.query(`SELECT payload FROM auth.outbox WHERE message_key = $1`, [reuseKey.id]);
    expect(rows).toHaveLength(1);
    const event = validateRevocationEvent(rows[0].payload);
    expect(event.ok).toBe(true);
    if (!event.ok) return;
    expect(event.value.type).toBe('invoicing.auth.sessions_revoked.v1');
    expect([...event.value.data.session_ids].sort()).toEqual(
      [decodeJwt(a.access_token).payload.sid, decodeJwt(b.access_token).payload.sid].sort(),
    );
    expect(event.value.data).toMatchObject({ api_key_id: reuseKey.id, organization_id: reuseKey.organizationPublicId, client_id: reuseKey.clientId });

    // Sent to Kafka at once (ADR 0015) and marked published exactly once: no second send by the relay.
    const deadline = Date.now() + 5000;
    let state: Array<{ published: boolean; attempts: number }> = [];
    while (Date.now() < deadline) {
      state = await db.query(`SELECT published_at IS NOT NULL AS published, attempts FROM auth.outbox WHERE message_key = $1`, [reuseKey.id]);
      if (state[0]?.published) break;
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(state).toEqual([{ published: true, attempts: 1 }]);

    // A fresh exchange with the same key starts a new, working session.
    const fresh = await login();
    expect((await refresh(fresh.refresh_token)).status).toBe(200);
  });

  it('expires a refresh token 30 days after its issue', async () => {
    const t = await exchange();
    app.clock.offsetMs = REFRESH_TOKEN_TTL_SECONDS * 1000 - 5000;
    const stillValid = await refresh(t.refresh_token);
    expect(stillValid.status).toBe(200);
    // The rotated token has 30 days of its own from now.
    app.clock.offsetMs += REFRESH_TOKEN_TTL_SECONDS * 1000 + 1000;
    const expired = await refresh(stillValid.body.refresh_token as string);
    expect(expired.status).toBe(400);
    expect(expired.body).toEqual({ error: 'invalid_grant', error_description: 'The refresh token expired.' });
  });

  it('refuses unknown and malformed refresh tokens without revoking anything', async () => {
    const t = await exchange();
    expect((await refresh('rt_live_nope')).body.error).toBe('invalid_grant');
    expect((await refresh(`rt_live_${'A'.repeat(43)}AAAAAA`)).body.error).toBe('invalid_grant');
    expect((await refresh(t.refresh_token)).status).toBe(200);
  });

  it('lets exactly one of 20 parallel refreshes with one token succeed (100 rounds)', async () => {
    const rounds = 100;
    const outcomes: string[] = [];
    for (let round = 0; round < rounds; round++) {
      const t = await exchange();
      const results = await Promise.all(Array.from({ length: 20 }, () => refresh(t.refresh_token)));
      const ok = results.filter((r) => r.status === 200).length;
      const reused = results.filter((r) => r.status === 400 && r.body.error === 'invalid_grant').length;
      outcomes.push(`${ok}/${reused}`);
    }
    expect(outcomes).toEqual(Array.from({ length: rounds }, () => '1/19'));
  });
});

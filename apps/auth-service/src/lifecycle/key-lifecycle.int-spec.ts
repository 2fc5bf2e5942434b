import { API_KEYS_TOPIC, REVOCATIONS_TOPIC, validateApiKeyEvent, validateAuthTopicEvent } from '@invoicing/contracts';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { getDataSourceToken } from '@nestjs/typeorm';
import { ApiKeyCache } from '../keys/api-key-cache';
import { LastUsedRecorder } from '../keys/last-used-recorder';
import { BrowserLikeClient } from '../testing/browser-like-client';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';

/**
 * A key's whole life against the real Postgres, Redis and Kafka (ADR 0023): expiry, rolling the
 * secret with an overlap, IP allowlists at the token endpoints, PATCH. The test process plays the
 * gateway (a trusted proxy) to name callers' addresses in X-Forwarded-For.
 */
let app: AuthTestApp;
let second: AuthTestApp;

beforeAll(async () => {
  app = await startAuthTestApp({ TRUSTED_PROXIES: '127.0.0.1', KEY_CHANGES_PER_ORGANIZATION_PER_MINUTE: '5', KEY_CREATIONS_PER_ORGANIZATION_PER_MINUTE: '3' });
  // A second instance on the same Redis prefix and database: what one changes, the other must see.
  second = await startAuthTestApp({ TRUSTED_PROXIES: '127.0.0.1', REDIS_KEY_PREFIX: app.config.REDIS_KEY_PREFIX });
});

afterAll(async () => {
  await second.close();
  await app.close();
});

const db = () => app.service.app.get<DataSource>(getDataSourceToken());
const PASSWORD = 'correct horse battery staple';
const DAY = 24 * 3600 * 1000;
const from = (ip: string) => ({ 'x-forwarded-for': ip });

async function signedUp(): Promise<BrowserLikeClient> {
  const client = new BrowserLikeClient(app.baseUrl);
  await client.csrf();
  const r = await client.request('POST', '/api/v1/account/signup', { organization_name: 'Acme', email: `u-${randomUUID().slice(0, 8)}@example.com`, password: PASSWORD });
  expect(r.status).toBe(201);
  return client;
}

interface Created {
  id: string;
  client_id: string;
  client_secret: string;
  expires_at: string | null;
  allowed_ips: string[];
}

async function createKey(client: BrowserLikeClient, extra: Record<string, unknown> = {}): Promise<Created> {
  const r = await client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes: ['read:invoices'], ...extra });
  expect(r.status).toBe(201);
  return r.body as unknown as Created;
}

const exchange = (base: string, clientId: string, secret: string, headers: Record<string, string> = {}) =>
  postJson(`${base}/api/v1/auth/token`, { grant_type: 'client_credentials', client_id: clientId, client_secret: secret }, headers);

async function keyView(client: BrowserLikeClient, id: string): Promise<Record<string, unknown>> {
  const list = await client.request('GET', '/api/v1/settings/api-keys?status=active,revoked,expired');
  return (list.body.data as Array<Record<string, unknown>>).find((k) => k.id === id)!;
}

/** A key's events in the outbox, each valid on its topic: the revocation topic's, or a change told by webhook on auth.api-keys.v1. */
async function eventsOf(keyId: string): Promise<Array<{ topic: string; type: string; data: Record<string, unknown>; published: boolean }>> {
  const rows = (await db().query(`SELECT topic, payload, published_at FROM auth.outbox WHERE message_key = $1 ORDER BY id`, [keyId])) as Array<{
    topic: string;
    payload: unknown;
    published_at: Date | null;
  }>;
  return rows.map((r) => {
    const v = r.topic === API_KEYS_TOPIC ? validateApiKeyEvent(r.payload) : r.topic === REVOCATIONS_TOPIC ? validateAuthTopicEvent(r.payload) : null;
    if (!v) throw new Error(`an event of ${keyId} on ${r.topic}`);
    if (!v.ok) throw new Error(v.errors.join('; '));
    return { topic: r.topic, type: v.value.type, data: v.value.data as unknown as Record<string, unknown>, published: r.published_at !== null };
  });
}

async function until<T>(what: string, probe: () => Promise<T | undefined | null | false>, ms = 5000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const value = await probe();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

describe('expiry', () => {
  it('refuses bad expiries with 422 naming the field, and creates nothing', async () => {
    const client = await signedUp();
    const now = Date.now();
    const cases: Array<[unknown, string]> = [
      [new Date(now - 60_000).toISOString(), 'in_past'],
      [new Date(now + 367 * DAY).toISOString(), 'too_far'],
      ['2027-02-30T00:00:00Z', 'invalid_format'],
      ['2027-01-01', 'invalid_format'],
      ['2027-01-01T00:00:00', 'invalid_format'],
      ['next year', 'invalid_format'],
    ];
    for (const [expires_at, code] of cases) {
      const r = await client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes: ['read:invoices'], expires_at });
      expect({ expires_at, status: r.status, errors: r.body.errors }).toEqual({ expires_at, status: 422, errors: [expect.objectContaining({ field: 'expires_at', code })] });
    }
    const typed = await client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes: ['read:invoices'], expires_at: 1767225600 });
    expect(typed.status).toBe(422);
    expect((await client.request('GET', '/api/v1/settings/api-keys')).body.data).toEqual([]);
    // A year ahead, to the millisecond, is allowed; null means never.
    const yearAhead = new Date(now);
    yearAhead.setUTCFullYear(yearAhead.getUTCFullYear() + 1);
    expect((await createKey(client, { expires_at: new Date(yearAhead.getTime() - 5000).toISOString() })).expires_at).not.toBeNull();
    expect((await createKey(client, { expires_at: null })).expires_at).toBeNull();
  });

  it('from the instant of expiry, with no request: 401 like an unknown client, invalid_grant, status expired, an api_key_revoked event (reason expired) published', async () => {
    const client = await signedUp();
    const expiresAt = new Date(Date.now() + 2500);
    const key = await createKey(client, { expires_at: expiresAt.toISOString() });
    expect(key.expires_at).toBe(expiresAt.toISOString());
    const pair = await exchange(app.baseUrl, key.client_id, key.client_secret);
    expect(pair.status).toBe(200);
    // No token outlives its key, even if the expiry's event were late: expires_in says so.
    const claims = JSON.parse(Buffer.from(String(pair.body.access_token).split('.')[1], 'base64url').toString()) as { iat: number; exp: number };
    expect(claims.exp).toBe(Math.floor(expiresAt.getTime() / 1000));
    expect(pair.body.expires_in).toBe(claims.exp - claims.iat);
    // The notice first: a key that expires within seven days is announced at once.
    const notice = await until('the expiry notice', async () => (await eventsOf(key.id)).find((e) => e.type === 'invoicing.auth.api_key_expiring.v1'));
    expect(notice.data).toEqual(expect.objectContaining({ api_key_id: key.id, name: 'ERP', expires_at: expiresAt.toISOString() }));
    expect(notice.topic).toBe(REVOCATIONS_TOPIC);
    // Committed with it, on the key changes' own topic: what the owner's webhook endpoints are told.
    const told = (await eventsOf(key.id)).find((e) => e.type === 'invoicing.auth.api_key_changed.v1');
    expect(told).toEqual(expect.objectContaining({ topic: API_KEYS_TOPIC, data: expect.objectContaining({ change: 'expiring', api_key: expect.objectContaining({ id: key.id }) }) }));

    // Nothing is asked of the auth service from here until the event is out.
    const revoked = await until('the expiry event', async () => (await eventsOf(key.id)).find((e) => e.type === 'invoicing.auth.api_key_revoked.v1' && e.published), 6000);
    const seenAt = Date.now();
    expect(revoked.data).toEqual(expect.objectContaining({ reason: 'expired', api_key_id: key.id, revoked_at: expiresAt.toISOString(), session_ids: [] }));
    console.log(`expiry published to Kafka ${seenAt - expiresAt.getTime()} ms after the instant (bound: 1000 ms)`);
    expect(seenAt - expiresAt.getTime()).toBeLessThan(1000);

    const unknown = await exchange(app.baseUrl, 'ak_live_unknownclientidxxxxxxxxxx', key.client_secret);
    const expired = await exchange(app.baseUrl, key.client_id, key.client_secret);
    expect({ status: expired.status, body: expired.body }).toEqual({ status: 401, body: unknown.body });
    const refresh = await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: pair.body.refresh_token });
    expect({ status: refresh.status, error: refresh.body.error }).toEqual({ status: 400, error: 'invalid_grant' });
    expect(await keyView(client, key.id)).toEqual(expect.objectContaining({ status: 'expired', expires_at: expiresAt.toISOString() }));
    // Announced once, however many instances sweep.
    expect((await eventsOf(key.id)).filter((e) => e.type === 'invoicing.auth.api_key_revoked.v1')).toHaveLength(1);
    // An expired key cannot be rolled or changed; revoking it changes nothing.
    expect((await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 0 })).status).toBe(409);
    expect((await client.request('PATCH', `/api/v1/settings/api-keys/${key.id}`, { allowed_ips: [] })).status).toBe(409);
    expect((await client.request('POST', `/api/v1/settings/api-keys/${key.id}/revoke`)).body.status).toBe('expired');
  });

  it('sends the seven-day notice for a key expiring later only once it is seven days out', async () => {
    const client = await signedUp();
    const later = await createKey(client, { expires_at: new Date(Date.now() + 30 * DAY).toISOString() });
    const soon = await createKey(client, { expires_at: new Date(Date.now() + 6 * DAY).toISOString() });
    await until('the notice of the key that expires within seven days', async () => (await eventsOf(soon.id)).length > 0);
    expect(await eventsOf(later.id)).toEqual([]);
  });
});

describe('rolling the secret', () => {
  it('keeps both secrets working until the overlap ends, then only the new one; the Client ID and scopes stay', async () => {
    const client = await signedUp();
    const key = await createKey(client, { scopes: ['read:invoices', 'write:invoices'] });
    expect((await exchange(app.baseUrl, key.client_id, key.client_secret)).status).toBe(200);
    // The second instance has the key cached now: the roll on the first must reach it.
    expect((await exchange(second.baseUrl, key.client_id, key.client_secret)).status).toBe(200);

    const before = Date.now();
    const r = await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 2 });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    const rolled = r.body as Record<string, string>;
    expect(rolled.client_secret).toMatch(/^sk_live_/);
    expect(rolled.client_secret).not.toBe(key.client_secret);
    expect(rolled).toEqual(expect.objectContaining({ id: key.id, client_id: key.client_id, scopes: ['read:invoices', 'write:invoices'], status: 'active', sessions_ended: false }));
    const overlapEnds = Date.parse(rolled.previous_secret_expires_at);
    expect(overlapEnds).toBeGreaterThanOrEqual(before + 2000);
    expect(overlapEnds).toBeLessThan(Date.now() + 2000 + 100);

    for (const base of [app.baseUrl, second.baseUrl]) {
      expect((await exchange(base, key.client_id, key.client_secret)).status).toBe(200);
      expect((await exchange(base, key.client_id, rolled.client_secret)).status).toBe(200);
    }
    await new Promise((resolve) => setTimeout(resolve, overlapEnds - Date.now() + 50));
    const wrong = await exchange(app.baseUrl, key.client_id, `sk_live_${'x'.repeat(43)}`);
    for (const base of [app.baseUrl, second.baseUrl]) {
      const old = await exchange(base, key.client_id, key.client_secret);
      expect({ status: old.status, body: old.body }).toEqual({ status: wrong.status, body: wrong.body });
      expect((await exchange(base, key.client_id, rolled.client_secret)).status).toBe(200);
    }

    // Each secret's last use is shown (the recorder writes every few seconds; flushed here).
    await app.service.app.get(LastUsedRecorder).flush();
    await second.service.app.get(LastUsedRecorder).flush();
    const view = await keyView(client, key.id);
    expect(view.secret_last_used_at).not.toBeNull();
    expect(view.previous_secret_expires_at).toBeNull();
  });

  it('with no overlap, the old secret fails at once on every instance (their caches forget the key)', async () => {
    const client = await signedUp();
    const key = await createKey(client);
    expect((await exchange(second.baseUrl, key.client_id, key.client_secret)).status).toBe(200);
    const rolled = (await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 0 })).body as Record<string, string>;
    expect(rolled.previous_secret_expires_at).toBeNull();
    expect((await exchange(second.baseUrl, key.client_id, key.client_secret)).status).toBe(401);
    expect((await exchange(second.baseUrl, key.client_id, rolled.client_secret)).status).toBe(200);
  });

  it('with end_sessions, also refuses a session to an exchange that checked the old secret on a row read before the roll', async () => {
    const client = await signedUp();
    const key = await createKey(client);
    expect((await exchange(second.baseUrl, key.client_id, key.client_secret)).status).toBe(200);
    // The second instance misses the announcement (as in the moment before it arrives): its cached
    // row still holds the old secret, so its authentication passes.
    const deaf = jest.spyOn(second.service.app.get(ApiKeyCache), 'forgetId').mockImplementation(() => undefined);
    try {
      const rolled = await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 0, end_sessions: true });
      expect(rolled.body.sessions_ended).toBe(true);
      const late = await exchange(second.baseUrl, key.client_id, key.client_secret);
      expect({ status: late.status, error: late.body.error }).toEqual({ status: 401, error: 'invalid_client' });
      // Refused by the secret floor, the stale row is forgotten: the new secret works there at once.
      expect((await exchange(second.baseUrl, key.client_id, String(rolled.body.client_secret))).status).toBe(200);
    } finally {
      deaf.mockRestore();
    }
  });

  it('refuses end_sessions with an overlap (the leaked secret could open new sessions), changing nothing', async () => {
    const client = await signedUp();
    const key = await createKey(client);
    const r = await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 3600, end_sessions: true });
    expect({ status: r.status, errors: r.body.errors }).toEqual({ status: 422, errors: [expect.objectContaining({ field: 'end_sessions', code: 'requires_no_overlap' })] });
    expect((await exchange(app.baseUrl, key.client_id, key.client_secret)).status).toBe(200);
  });

  it('shows which secret was used last during the overlap', async () => {
    const client = await signedUp();
    const key = await createKey(client);
    const rolled = (await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 3600 })).body as Record<string, string>;
    expect((await exchange(app.baseUrl, key.client_id, key.client_secret)).status).toBe(200);
    await app.service.app.get(LastUsedRecorder).flush();
    let view = await keyView(client, key.id);
    expect(view.previous_secret_last_used_at).not.toBeNull();
    expect(view.secret_last_used_at).toBeNull();
    expect((await exchange(app.baseUrl, key.client_id, rolled.client_secret)).status).toBe(200);
    await app.service.app.get(LastUsedRecorder).flush();
    view = await keyView(client, key.id);
    expect(view.secret_last_used_at).not.toBeNull();
    expect(view.previous_secret_expires_at).toBe(rolled.previous_secret_expires_at);
  });

  it('with end_sessions, ends every live session at once and announces it (sessions_revoked, reason secret_rolled)', async () => {
    const client = await signedUp();
    const key = await createKey(client);
    const pairs = await Promise.all([1, 2].map(() => exchange(app.baseUrl, key.client_id, key.client_secret)));
    const r = await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 0, end_sessions: true });
    expect(r.status).toBe(200);
    expect(r.body.sessions_ended).toBe(true);
    for (const pair of pairs) {
      const refresh = await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: pair.body.refresh_token });
      expect(refresh.body.error).toBe('invalid_grant');
    }
    const event = (await eventsOf(key.id)).find((e) => e.type === 'invoicing.auth.sessions_revoked.v1');
    expect(event?.data.reason).toBe('secret_rolled');
    // The roll told by webhook, on the key changes' own topic, published by the relay like the rest.
    const told = await until('the roll told by webhook, published', async () => (await eventsOf(key.id)).find((e) => e.type === 'invoicing.auth.api_key_changed.v1' && e.published));
    expect(told).toEqual(expect.objectContaining({ topic: API_KEYS_TOPIC, data: expect.objectContaining({ change: 'secret_rolled', api_key: expect.objectContaining({ id: key.id, status: 'active' }) }) }));
    expect((event?.data.session_ids as string[]).sort()).toHaveLength(2);
  });

  it('answers 409 for a revoked key, 404 for another organization\'s, 422 for an overlap out of range; nothing changes', async () => {
    const client = await signedUp();
    const stranger = await signedUp();
    const key = await createKey(client);
    for (const body of [{ previous_secret_expires_in: 604801 }, { previous_secret_expires_in: -1 }, { previous_secret_expires_in: 1.5 }, {}, { previous_secret_expires_in: 60, scopes: ['write:invoices'] }]) {
      const r = await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, body);
      expect({ body, status: r.status }).toEqual({ body, status: 422 });
    }
    expect((await stranger.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 0 })).status).toBe(404);
    expect((await exchange(app.baseUrl, key.client_id, key.client_secret)).status).toBe(200);
    expect((await client.request('POST', `/api/v1/settings/api-keys/${key.id}/revoke`)).status).toBe(200);
    const revoked = await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 0 });
    expect({ status: revoked.status, type: revoked.headers.get('content-type') }).toEqual({ status: 409, type: expect.stringMatching(/^application\/problem\+json/) });
    expect(revoked.text).not.toMatch(/sk_live_/);
  });
});

describe('IP allowlists at the token endpoints', () => {
  it('canonicalizes on create, and refuses malformed entries and 101 of them with 422 naming each', async () => {
    const client = await signedUp();
    const key = await createKey(client, { allowed_ips: ['203.0.113.0/24', '2001:0DB8::0001', '198.51.100.7/32'] });
    expect(key.allowed_ips).toEqual(['203.0.113.0/24', '2001:db8::1', '198.51.100.7']);
    const bad = await client.request('POST', '/api/v1/settings/api-keys', { name: 'x', scopes: ['read:invoices'], allowed_ips: ['10.0.0.1/8', 'example.com', '10.0.0.0/33'] });
    expect(bad.status).toBe(422);
    expect((bad.body.errors as Array<{ field: string }>).map((e) => e.field)).toEqual(['allowed_ips[0]', 'allowed_ips[1]', 'allowed_ips[2]']);
    const many = await client.request('POST', '/api/v1/settings/api-keys', { name: 'x', scopes: ['read:invoices'], allowed_ips: Array.from({ length: 101 }, (_, i) => `10.0.${i}.0/24`) });
    expect({ status: many.status, errors: many.body.errors }).toEqual({ status: 422, errors: [expect.objectContaining({ field: 'allowed_ips', code: 'too_many' })] });
    expect(((await client.request('GET', '/api/v1/settings/api-keys')).body.data as unknown[]).length).toBe(1);
  });

  it('refuses the exchange and both refresh paths from outside with 400 unauthorized_client, spending nothing; the token carries the list', async () => {
    const client = await signedUp();
    const key = await createKey(client, { allowed_ips: ['203.0.113.0/24'] });
    const outside = await exchange(app.baseUrl, key.client_id, key.client_secret, from('198.51.100.1'));
    expect({ status: outside.status, error: outside.body.error }).toEqual({ status: 400, error: 'unauthorized_client' });
    // A wrong secret from outside is a wrong secret: the allowlist is not revealed to strangers.
    expect((await exchange(app.baseUrl, key.client_id, `sk_live_${'x'.repeat(43)}`, from('198.51.100.1'))).status).toBe(401);

    const pair = await exchange(app.baseUrl, key.client_id, key.client_secret, from('203.0.113.9'));
    expect(pair.status).toBe(200);
    const claims = JSON.parse(Buffer.from(String(pair.body.access_token).split('.')[1], 'base64url').toString()) as Record<string, unknown>;
    expect(claims.allowed_ips).toEqual(['203.0.113.0/24']);

    const refreshOutside = await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: pair.body.refresh_token }, from('198.51.100.1'));
    expect({ status: refreshOutside.status, error: refreshOutside.body.error }).toEqual({ status: 400, error: 'unauthorized_client' });
    const grantOutside = await postJson(`${app.baseUrl}/api/v1/auth/token`, { grant_type: 'refresh_token', refresh_token: pair.body.refresh_token }, from('198.51.100.1'));
    expect(grantOutside.body.error).toBe('unauthorized_client');
    // Not spent: the same refresh token still rotates from inside.
    const inside = await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: pair.body.refresh_token }, from('203.0.113.10'));
    expect(inside.status).toBe(200);
  });

  it("never believes a caller's own X-Forwarded-For when the peer is not a trusted proxy", async () => {
    const direct = await startAuthTestApp({ REDIS_KEY_PREFIX: app.config.REDIS_KEY_PREFIX });
    try {
      const client = await signedUp();
      const key = await createKey(client, { allowed_ips: ['203.0.113.0/24'] });
      // The peer (127.0.0.1) is no proxy of this instance: the header is the caller's claim, ignored.
      const spoofed = await exchange(direct.baseUrl, key.client_id, key.client_secret, from('203.0.113.9'));
      expect({ status: spoofed.status, error: spoofed.body.error }).toEqual({ status: 400, error: 'unauthorized_client' });
    } finally {
      await direct.close();
    }
  });
});

describe('PATCH', () => {
  it('changes the allowlist (announced, reaching the other instance at once) and the name', async () => {
    const client = await signedUp();
    const key = await createKey(client);
    expect((await exchange(second.baseUrl, key.client_id, key.client_secret, from('198.51.100.1'))).status).toBe(200);
    const r = await client.request('PATCH', `/api/v1/settings/api-keys/${key.id}`, { allowed_ips: ['203.0.113.0/24'], name: ' Billing ' });
    expect(r.status).toBe(200);
    expect(r.body).toEqual(expect.objectContaining({ id: key.id, name: 'Billing', allowed_ips: ['203.0.113.0/24'], client_id: key.client_id }));
    expect((await exchange(second.baseUrl, key.client_id, key.client_secret, from('198.51.100.1'))).body.error).toBe('unauthorized_client');
    expect((await exchange(second.baseUrl, key.client_id, key.client_secret, from('203.0.113.1'))).status).toBe(200);
    const changed = await until('the allowlist event', async () => (await eventsOf(key.id)).find((e) => e.type === 'invoicing.auth.api_key_allowed_ips_changed.v1' && e.published));
    expect(changed.data).toEqual(expect.objectContaining({ allowed_ips: ['203.0.113.0/24'], version: 1 }));
    // Emptying the list allows any address again; a PATCH of the name alone announces nothing.
    expect((await client.request('PATCH', `/api/v1/settings/api-keys/${key.id}`, { allowed_ips: [] })).status).toBe(200);
    expect((await client.request('PATCH', `/api/v1/settings/api-keys/${key.id}`, { name: 'ERP' })).status).toBe(200);
    expect((await eventsOf(key.id)).filter((e) => e.type === 'invoicing.auth.api_key_allowed_ips_changed.v1').map((e) => e.data.version)).toEqual([1, 2]);
    expect((await exchange(second.baseUrl, key.client_id, key.client_secret, from('198.51.100.1'))).status).toBe(200);
  });

  it('refuses fields that cannot change, bad entries and empty bodies with 422, another organization\'s key with 404; nothing changes', async () => {
    const client = await signedUp();
    const stranger = await signedUp();
    const key = await createKey(client, { allowed_ips: ['203.0.113.0/24'] });
    const cases: Array<[unknown, string, string]> = [
      [{ scopes: ['write:invoices'] }, 'scopes', 'immutable'],
      [{ organization_id: 'org_00000000000000000000000000000000', allowed_ips: [] }, 'organization_id', 'immutable'],
      [{ expires_at: null }, 'expires_at', 'immutable'],
      [{ allowed_ips: ['10.0.0.1/8'] }, 'allowed_ips[0]', 'invalid_address'],
      [{ allowed_ips: Array.from({ length: 101 }, (_, i) => `10.0.${i}.0/24`) }, 'allowed_ips', 'too_many'],
      [{ colour: 'blue' }, 'colour', 'unknown_field'],
      [{ name: '   ' }, 'name', 'length'],
    ];
    for (const [body, field, code] of cases) {
      const r = await client.request('PATCH', `/api/v1/settings/api-keys/${key.id}`, body);
      expect({ body, status: r.status, error: (r.body.errors as unknown[])?.[0] }).toEqual({ body, status: 422, error: expect.objectContaining({ field, code }) });
    }
    expect((await client.request('PATCH', `/api/v1/settings/api-keys/${key.id}`, {})).status).toBe(422);
    expect((await stranger.request('PATCH', `/api/v1/settings/api-keys/${key.id}`, { allowed_ips: [] })).status).toBe(404);
    const view = await keyView(client, key.id);
    expect(view).toEqual(expect.objectContaining({ name: 'ERP', scopes: ['read:invoices'], allowed_ips: ['203.0.113.0/24'], expires_at: null }));
    expect(await eventsOf(key.id)).toEqual([]);
  });
});

describe('how often keys may change', () => {
  it('answers 429 with Retry-After past KEY_CHANGES_PER_ORGANIZATION_PER_MINUTE, for that organization only', async () => {
    const client = await signedUp();
    const neighbour = await signedUp();
    const key = await createKey(client);
    const other = await createKey(neighbour);
    for (let i = 0; i < 5; i++) expect((await client.request('PATCH', `/api/v1/settings/api-keys/${key.id}`, { name: `ERP ${i}` })).status).toBe(200);
    const refused = await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 0 });
    expect({ status: refused.status, retryAfter: Number(refused.headers.get('retry-after')) }).toEqual({ status: 429, retryAfter: expect.any(Number) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    // Nothing changed: the old secret still works. The neighbour's changes are its own.
    expect((await exchange(app.baseUrl, key.client_id, key.client_secret)).status).toBe(200);
    expect((await neighbour.request('PATCH', `/api/v1/settings/api-keys/${other.id}`, { allowed_ips: ['203.0.113.0/24'] })).status).toBe(200);
  });

  it('answers 429 with Retry-After past KEY_CREATIONS_PER_ORGANIZATION_PER_MINUTE, creating nothing, for that organization only; rolls keep their own budget', async () => {
    const client = await signedUp();
    const neighbour = await signedUp();
    // A body refused for what it says costs nothing.
    expect((await client.request('POST', '/api/v1/settings/api-keys', { name: ' ', scopes: ['read:invoices'] })).status).toBe(422);
    const keys: Created[] = [];
    for (let i = 0; i < 3; i++) keys.push(await createKey(client));
    const refused = await client.request('POST', '/api/v1/settings/api-keys', { name: 'one more', scopes: ['read:invoices'] });
    expect({ status: refused.status, type: refused.headers.get('content-type') }).toEqual({ status: 429, type: expect.stringMatching(/^application\/problem\+json/) });
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    const listed = await client.request('GET', '/api/v1/settings/api-keys?status=active,revoked,expired');
    expect((listed.body.data as Array<{ id: string }>).map((k) => k.id)).toEqual(keys.map((k) => k.id).reverse());
    // Creating is not changing: a leaked secret can still be rolled.
    expect((await client.request('POST', `/api/v1/settings/api-keys/${keys[0].id}/roll`, { previous_secret_expires_in: 0 })).status).toBe(200);
    expect((await createKey(neighbour)).id).toMatch(/^key_/);
  });
});

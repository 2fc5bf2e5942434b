import { API_KEYS_TOPIC, REVOCATIONS_TOPIC, validateApiKeyEvent, validateRevocationEvent } from '@invoicing/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { LastUsedRecorder } from '../keys/last-used-recorder';
import { BrowserLikeClient } from '../testing/browser-like-client';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';

let app: AuthTestApp;

// The test process plays the gateway (a trusted proxy) to name callers' addresses in X-Forwarded-For.
beforeAll(async () => {
  app = await startAuthTestApp({
    LOGIN_THROTTLE_MAX_FAILURES_PER_EMAIL_ADDRESS: '3',
    LOGIN_THROTTLE_MAX_FAILURES_PER_ADDRESS: '6',
    MAX_LIVE_KEYS_PER_ORGANIZATION: '3',
    TRUSTED_PROXIES: '127.0.0.1',
  });
});

afterAll(async () => {
  await app.close();
});

const email = () => `user-${randomUUID().slice(0, 8)}@example.com`;
const PASSWORD = 'correct horse battery staple';
let nextAddress = 1;
/** A caller address of its own for a test, so that one test's failures do not throttle another's. */
const address = () => ({ 'x-forwarded-for': `198.51.100.${nextAddress++}` });

async function signedUp(): Promise<{ client: BrowserLikeClient; email: string }> {
  const client = new BrowserLikeClient(app.baseUrl);
  await client.csrf();
  const address = email();
  const r = await client.request('POST', '/api/v1/account/signup', { organization_name: 'Acme', email: address, password: PASSWORD });
  expect(r.status).toBe(201);
  return { client, email: address };
}

async function createKey(client: BrowserLikeClient, scopes = ['read:invoices']) {
  const r = await client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes });
  expect(r.status).toBe(201);
  return r.body as { id: string; client_id: string; client_secret: string };
}

describe('accounts', () => {
  it('signs up with a __Host- session cookie (HttpOnly, Secure, SameSite=Strict, no Domain) and knows the user', async () => {
    const client = new BrowserLikeClient(app.baseUrl);
    await client.csrf();
    const address = email();
    const r = await client.request('POST', '/api/v1/account/signup', { organization_name: 'Acme GmbH', email: address.toUpperCase(), password: PASSWORD });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email: address, created_at: expect.any(String) },
      organization: { id: expect.stringMatching(/^org_/), name: 'Acme GmbH' },
    });
    const session = r.headers.getSetCookie().find((c) => c.startsWith('__Host-session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/Secure/);
    expect(session).toMatch(/SameSite=Strict/);
    expect(session).toMatch(/Path=\//);
    expect(session).not.toMatch(/Domain=/i);
    expect((await client.request('GET', '/api/v1/account/me')).body).toEqual(r.body);
  });

  it('validates sign-up fields and refuses a taken email', async () => {
    const { email: taken } = await signedUp();
    const client = new BrowserLikeClient(app.baseUrl);
    await client.csrf();
    const bad = await client.request('POST', '/api/v1/account/signup', { organization_name: '', email: 'not-an-email', password: 'short' });
    expect(bad.status).toBe(422);
    expect((bad.body.errors as Array<{ field: string }>).map((e) => e.field).sort()).toEqual(['email', 'organization_name', 'password']);
    const dup = await client.request('POST', '/api/v1/account/signup', { organization_name: 'X', email: taken, password: PASSWORD });
    expect(dup.status).toBe(409);
  });

  it('refuses common, simple and look-alike passwords with a 422 on the password field, and creates nothing', async () => {
    const client = new BrowserLikeClient(app.baseUrl);
    const address = email();
    const cases: Array<[string, string]> = [
      ['password1234', 'too_common'],
      [' '.repeat(12), 'too_simple'],
      ['P@ssw0rd2024', 'too_common'],
      [`${address.split('@')[0]}1`.padEnd(12, '1'), 'too_similar'],
      ['Northwind Traders 2024', 'too_similar'],
    ];
    for (const [password, code] of cases) {
      const r = await client.request('POST', '/api/v1/account/signup', { organization_name: 'Northwind Traders', email: address, password });
      expect({ status: r.status, errors: r.body.errors }).toEqual({ status: 422, errors: [expect.objectContaining({ field: 'password', code })] });
      expect(r.text).not.toContain(password.trim() || '            ');
    }
    // The email is still free: nothing was created by the refusals.
    const ok = await client.request('POST', '/api/v1/account/signup', { organization_name: 'Northwind Traders', email: address, password: PASSWORD });
    expect(ok.status).toBe(201);
  });

  it('refuses state-changing calls without the CSRF token or from another origin', async () => {
    const client = new BrowserLikeClient(app.baseUrl);
    await client.csrf();
    const body = { organization_name: 'Acme', email: email(), password: PASSWORD };
    expect((await client.request('POST', '/api/v1/account/signup', body, { csrf: null })).status).toBe(403);
    expect((await client.request('POST', '/api/v1/account/signup', body, { csrf: 'forged' })).status).toBe(403);
    const evil = new BrowserLikeClient(app.baseUrl, 'https://evil.example');
    await evil.csrf();
    expect((await evil.request('POST', '/api/v1/account/signup', body)).status).toBe(403);
  });

  it('binds the CSRF token to the session: a matching cookie and header pair, or another session\'s token, is refused', async () => {
    const owner = await signedUp();
    const session = owner.client.cookiePair('session');
    const createKeyWith = (headers: Record<string, string>) =>
      fetch(`${app.baseUrl}/api/v1/settings/api-keys`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', cookie: session, ...headers },
        body: JSON.stringify({ name: 'forged', scopes: ['read:invoices'] }),
      }).then((r) => r.status);
    // Any identical pair passed the old double-submit check.
    for (const name of ['csrf_token', '__Host-csrf_nonce']) {
      expect(await createKeyWith({ cookie: `${session}; ${name}=x`, 'x-csrf-token': 'x' })).toBe(403);
    }
    // A token and nonce fetched by someone else (here: before signing in, and by another user) do not verify for this session.
    const other = await signedUp();
    const othersToken = await other.client.csrf();
    expect(await createKeyWith({ cookie: `${session}; ${other.client.cookiePair('csrf_nonce')}`, 'x-csrf-token': othersToken })).toBe(403);
    const anonymous = new BrowserLikeClient(app.baseUrl);
    const anonymousToken = await anonymous.csrf();
    expect(await createKeyWith({ cookie: `${session}; ${anonymous.cookiePair('csrf_nonce')}`, 'x-csrf-token': anonymousToken })).toBe(403);
    // The owner's own token works.
    expect((await owner.client.request('POST', '/api/v1/settings/api-keys', { name: 'mine', scopes: ['read:invoices'] })).status).toBe(201);
  });

  it('checks Origin against the configured origins, never the Host header, and refuses cross-site fetch metadata', async () => {
    const { client } = await signedUp();
    const create = (headers: Record<string, string>) => client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes: ['read:invoices'] }, { headers });
    // DNS rebinding: the page's own Host and Origin agree, and both are the attacker's name.
    expect((await create({ host: 'evil.com', origin: 'http://evil.com' })).status).toBe(403);
    expect((await create({ origin: 'null' })).status).toBe(403);
    expect((await create({ 'sec-fetch-site': 'cross-site' })).status).toBe(403);
    expect((await create({ 'sec-fetch-site': 'same-site' })).status).toBe(403);
    // The public base URL (JWT_ISSUER's origin), a loopback origin outside production, and same-origin fetch metadata pass.
    expect((await create({ origin: new URL(app.config.JWT_ISSUER).origin, 'sec-fetch-site': 'same-origin' })).status).toBe(201);
    expect((await create({ origin: 'http://127.0.0.1:8080' })).status).toBe(201);
  });

  it('answers a wrong password and an unknown email alike, then throttles that email at that address only', async () => {
    const { email: victim } = await signedUp();
    const stranger = address();
    const client = new BrowserLikeClient(app.baseUrl);
    const login = (password: string, headers = stranger, who = victim) => client.request('POST', '/api/v1/account/login', { email: who, password }, { headers });
    const wrong = await login('wrong password!!');
    const unknown = await login(PASSWORD, stranger, email());
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect({ ...wrong.body, request_id: 0 }).toEqual({ ...unknown.body, request_id: 0 });
    await login('wrong password!!');
    await login('wrong password!!');
    const limited = await login(PASSWORD);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    // The owner, from anywhere else, still signs in with the right password: a stranger's failures lock nobody out.
    const owner = new BrowserLikeClient(app.baseUrl);
    expect((await owner.request('POST', '/api/v1/account/login', { email: victim, password: PASSWORD }, { headers: address() })).status).toBe(200);
  });

  it('throttles one address across emails: failed log-ins and refused sign-ups share its budget', async () => {
    const { email: taken } = await signedUp();
    const prober = address();
    const client = new BrowserLikeClient(app.baseUrl);
    const budget = Number(app.config.LOGIN_THROTTLE_MAX_FAILURES_PER_ADDRESS);
    // Enumerating registered emails through sign-up: each refusal (409) counts like a failed log-in.
    for (let i = 0; i < budget - 1; i++) {
      const dup = await client.request('POST', '/api/v1/account/signup', { organization_name: 'X', email: taken, password: PASSWORD }, { headers: prober });
      expect(dup.status).toBe(409);
    }
    expect((await client.request('POST', '/api/v1/account/login', { email: email(), password: PASSWORD }, { headers: prober })).status).toBe(401);
    const limited = await client.request('POST', '/api/v1/account/signup', { organization_name: 'X', email: email(), password: PASSWORD }, { headers: prober });
    expect(limited.status).toBe(429);
    expect(limited.headers.get('content-type')).toContain('application/problem+json');
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    expect((await client.request('POST', '/api/v1/account/login', { email: taken, password: PASSWORD }, { headers: prober })).status).toBe(429);
    // Successful sign-ups are not the signal: another address signs up as often as it likes.
    const fresh = address();
    for (let i = 0; i < budget + 1; i++) {
      const ok = await new BrowserLikeClient(app.baseUrl).request('POST', '/api/v1/account/signup', { organization_name: 'Y', email: email(), password: PASSWORD }, { headers: fresh });
      expect(ok.status).toBe(201);
    }
  });

  it('logs in with a new session id and logs out', async () => {
    const { client, email: address } = await signedUp();
    const before = client.cookie('session');
    const login = await client.request('POST', '/api/v1/account/login', { email: address, password: PASSWORD });
    expect(login.status).toBe(200);
    expect(client.cookie('session')).not.toBe(before);
    expect((await client.request('POST', '/api/v1/account/logout')).status).toBe(204);
    expect((await client.request('GET', '/api/v1/account/me')).status).toBe(401);
  });
});

describe('Settings, then API', () => {
  it('requires a session', async () => {
    const anonymous = new BrowserLikeClient(app.baseUrl);
    const r = await anonymous.request('GET', '/api/v1/settings/api-keys');
    expect(r.status).toBe(401);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
  });

  it('lists the scopes grouped by resource', async () => {
    const { client } = await signedUp();
    const r = await client.request('GET', '/api/v1/settings/scopes');
    expect(r.body.data).toContainEqual({ resource: 'invoices', scopes: ['read:invoices', 'write:invoices'] });
    expect(r.body.data).toContainEqual({ resource: 'webhook_endpoints', scopes: ['read:webhook_endpoints', 'write:webhook_endpoints'] });
    expect((r.body.data as unknown[]).length).toBe(6);
  });

  it('creates a key whose secret is returned once and never listed', async () => {
    const { client } = await signedUp();
    const key = await createKey(client, ['write:invoices', 'read:invoices']);
    expect(key).toMatchObject({ client_id: expect.stringMatching(/^ak_live_/), client_secret: expect.stringMatching(/^sk_live_/), scopes: ['read:invoices', 'write:invoices'] });
    const list = await client.request('GET', '/api/v1/settings/api-keys');
    expect(list.text).not.toContain(key.client_secret);
    expect(list.text).not.toContain('client_secret');
    expect(list.body.data).toEqual([expect.objectContaining({ id: key.id, name: 'ERP', status: 'active', last_used_at: null })]);
  });

  it('refuses unknown scopes and empty names', async () => {
    const { client } = await signedUp();
    const r = await client.request('POST', '/api/v1/settings/api-keys', { name: '', scopes: ['delete:everything'] });
    expect(r.status).toBe(422);
    const again = await client.request('POST', '/api/v1/settings/api-keys', { name: 'x', scopes: ['delete:everything'] });
    expect(again.status).toBe(422);
    expect(again.body.errors).toEqual([expect.objectContaining({ field: 'scopes', code: 'unknown_scope' })]);
  });

  it('refuses a key past the ceiling of live keys per organization with a problem that says so, also under concurrent creations', async () => {
    const { client } = await signedUp();
    const ceiling = app.config.MAX_LIVE_KEYS_PER_ORGANIZATION;
    const keys = [];
    for (let i = 0; i < ceiling; i++) keys.push(await createKey(client));
    const refused = await client.request('POST', '/api/v1/settings/api-keys', { name: 'one more', scopes: ['read:invoices'] });
    expect(refused.status).toBe(409);
    expect(refused.headers.get('content-type')).toContain('application/problem+json');
    expect(refused.body.detail).toContain(`${ceiling} live API keys`);
    expect(refused.body.errors).toEqual([expect.objectContaining({ code: 'key_limit_reached' })]);
    // A revoked key frees its place; concurrent creations cannot both take the one free place.
    await client.request('POST', `/api/v1/settings/api-keys/${keys[0].id}/revoke`);
    const racing = await Promise.all([0, 1, 2, 3].map(() => client.request('POST', '/api/v1/settings/api-keys', { name: 'race', scopes: ['read:invoices'] })));
    expect(racing.map((r) => r.status).sort()).toEqual([201, 409, 409, 409]);
    const listed = await client.request('GET', '/api/v1/settings/api-keys');
    expect((listed.body.data as Array<{ status: string }>).filter((k) => k.status === 'active')).toHaveLength(ceiling);
  });

  it('lists live keys by default, so no pile of revoked or expired keys can hide one; pages exactly; filters by status', async () => {
    const { client } = await signedUp();
    const ids = (r: { body: Record<string, unknown> }) => (r.body.data as Array<{ id: string }>).map((k) => k.id);
    const list = (query = '') => client.request('GET', `/api/v1/settings/api-keys${query}`);
    // The oldest key is the live one a flood of dead keys used to push off the list.
    const first = await createKey(client);
    const revoked: string[] = [];
    for (let i = 0; i < 3; i++) {
      const key = await createKey(client);
      expect((await client.request('POST', `/api/v1/settings/api-keys/${key.id}/revoke`)).status).toBe(200);
      revoked.push(key.id);
    }
    const expiresAt = new Date(Date.now() + 1500).toISOString();
    const expiring: string[] = [];
    for (let i = 0; i < 2; i++) {
      const r = await client.request('POST', '/api/v1/settings/api-keys', { name: 'brief', scopes: ['read:invoices'], expires_at: expiresAt });
      expect(r.status).toBe(201);
      expiring.push(String(r.body.id));
    }
    // Past the instant, and past the expiry sweep (4 a second) that frees their places under the ceiling.
    await new Promise((resolve) => setTimeout(resolve, Date.parse(expiresAt) - Date.now() + 700));
    const last = await createKey(client);

    const live = await list();
    expect({ ids: ids(live), has_more: live.body.has_more }).toEqual({ ids: [last.id, first.id], has_more: false });
    // Pages: has_more is exact, and the cursor continues where the page ended.
    const one = await list('?limit=1');
    expect({ ids: ids(one), has_more: one.body.has_more }).toEqual({ ids: [last.id], has_more: true });
    const two = await list(`?limit=1&starting_after=${last.id}`);
    expect({ ids: ids(two), has_more: two.body.has_more }).toEqual({ ids: [first.id], has_more: false });
    // Dead keys on request, newest first; a key expired before the sweep marked it is expired already.
    const dead = await list('?status=revoked,expired&limit=3');
    expect({ ids: ids(dead), has_more: dead.body.has_more }).toEqual({ ids: [...expiring].reverse().concat(revoked[2]), has_more: true });
    const rest = await list(`?status=revoked,expired&limit=3&starting_after=${revoked[2]}`);
    expect({ ids: ids(rest), has_more: rest.body.has_more }).toEqual({ ids: [revoked[1], revoked[0]], has_more: false });
    expect((await list('?status=expired')).body.data).toEqual([...expiring].reverse().map((id) => expect.objectContaining({ id, status: 'expired' })));
    expect(ids(await list('?status=active,revoked,expired'))).toEqual([last.id, ...[...expiring].reverse(), ...[...revoked].reverse(), first.id]);
    // Another organization's list is empty whatever the cursor.
    const stranger = await signedUp();
    expect(ids(await stranger.client.request('GET', `/api/v1/settings/api-keys?status=active,revoked,expired&starting_after=key_${'f'.repeat(32)}`))).toEqual([]);

    const refused = await list('?limit=0&status=live&starting_after=key_x&colour=red');
    expect({ status: refused.status, type: refused.headers.get('content-type') }).toEqual({ status: 400, type: expect.stringMatching(/^application\/problem\+json/) });
    expect((refused.body.errors as Array<{ field: string; code: string }>).map(({ field, code }) => [field, code])).toEqual([
      ['colour', 'unknown_parameter'],
      ['limit', 'out_of_range'],
      ['starting_after', 'invalid_format'],
      ['status', 'invalid_value'],
    ]);
    for (const query of ['?limit=101', '?status=', '?status=active&status=revoked', '?limit=1&limit=2']) {
      expect({ query, status: (await list(query)).status }).toEqual({ query, status: 400 });
    }
  });

  it("keeps another organization's keys invisible and unrevocable", async () => {
    const owner = await signedUp();
    const key = await createKey(owner.client);
    const stranger = await signedUp();
    const list = await stranger.client.request('GET', '/api/v1/settings/api-keys');
    expect(list.body.data).toEqual([]);
    const revoke = await stranger.client.request('POST', `/api/v1/settings/api-keys/${key.id}/revoke`);
    expect(revoke.status).toBe(404);
    const absent = await stranger.client.request('POST', `/api/v1/settings/api-keys/key_${'0'.repeat(32)}/revoke`);
    expect({ ...revoke.body, request_id: 0 }).toEqual({ ...absent.body, request_id: 0 });
    const still = await owner.client.request('GET', '/api/v1/settings/api-keys');
    expect(still.body.data).toEqual([expect.objectContaining({ id: key.id, status: 'active' })]);
  });

  it('records last use, and a revoked key stops authenticating and loses its sessions, with the event', async () => {
    const { client } = await signedUp();
    const key = await createKey(client);
    const exchange = () =>
      postJson(`${app.baseUrl}/api/v1/auth/token`, { client_id: key.client_id, client_secret: key.client_secret, grant_type: 'client_credentials' });
    const session = await exchange();
    expect(session.status).toBe(200);
    await app.service.app.get(LastUsedRecorder).flush();
    const listed = await client.request('GET', '/api/v1/settings/api-keys');
    expect((listed.body.data as Array<{ last_used_at: string | null }>)[0].last_used_at).toEqual(expect.any(String));

    const revoked = await client.request('POST', `/api/v1/settings/api-keys/${key.id}/revoke`);
    expect(revoked.status).toBe(200);
    expect(revoked.body).toMatchObject({ id: key.id, status: 'revoked', revoked_at: expect.any(String) });
    expect((await exchange()).body.error).toBe('invalid_client');
    const refresh = await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: session.body.refresh_token });
    expect(refresh.body.error).toBe('invalid_grant');

    const db = app.service.app.get<DataSource>(getDataSourceToken());
    const rows: Array<{ topic: string; payload: { type: string } }> = await db.query(
      `SELECT topic, payload FROM auth.outbox WHERE message_key = $1 ORDER BY payload->>'type' DESC`,
      [key.id],
    );
    expect(rows).toHaveLength(2);
    expect(rows[0].topic).toBe(REVOCATIONS_TOPIC);
    const event = validateRevocationEvent(rows[0].payload);
    expect(event.ok && event.value.type).toBe('invoicing.auth.api_key_revoked.v1');
    expect(event.ok && event.value.data.session_ids).toHaveLength(1);
    // Committed with it, on the key changes' own topic (kept 30 days), what the owner's webhook
    // endpoints are told: the key as the API now shows it.
    expect(rows[1].topic).toBe(API_KEYS_TOPIC);
    const told = validateApiKeyEvent(rows[1].payload);
    expect(told.ok && told.value.data).toMatchObject({ change: 'revoked', api_key: revoked.body });
    // Revoking again changes nothing and publishes nothing more.
    expect((await client.request('POST', `/api/v1/settings/api-keys/${key.id}/revoke`)).status).toBe(200);
    expect(await db.query(`SELECT 1 FROM auth.outbox WHERE message_key = $1`, [key.id])).toHaveLength(2);
  });
});

import { validateRevocationEvent } from '@invoicing/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { LastUsedRecorder } from '../keys/last-used-recorder';
import { BrowserLikeClient } from '../testing/browser-like-client';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';

let app: AuthTestApp;

beforeAll(async () => {
  app = await startAuthTestApp({ LOGIN_THROTTLE_MAX_FAILURES_PER_EMAIL: '3' });
});

afterAll(async () => {
  await app.close();
});

const email = () => `user-${randomUUID().slice(0, 8)}@example.com`;
const PASSWORD = 'correct horse battery staple';

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
  it('signs up with an HttpOnly, SameSite=Strict session cookie and knows the user', async () => {
    const client = new BrowserLikeClient(app.baseUrl);
    await client.csrf();
    const address = email();
    const r = await client.request('POST', '/api/v1/account/signup', { organization_name: 'Acme GmbH', email: address.toUpperCase(), password: PASSWORD });
    expect(r.status).toBe(201);
    expect(r.body).toEqual({
      user: { id: expect.stringMatching(/^usr_/), email: address, created_at: expect.any(String) },
      organization: { id: expect.stringMatching(/^org_/), name: 'Acme GmbH' },
    });
    const session = r.headers.getSetCookie().find((c) => c.startsWith('session='))!;
    expect(session).toMatch(/HttpOnly/);
    expect(session).toMatch(/SameSite=Strict/);
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

  it('answers a wrong password and an unknown email alike, then throttles', async () => {
    const { email: address } = await signedUp();
    const client = new BrowserLikeClient(app.baseUrl);
    await client.csrf();
    const wrong = await client.request('POST', '/api/v1/account/login', { email: address, password: 'wrong password!!' });
    const unknown = await client.request('POST', '/api/v1/account/login', { email: email(), password: PASSWORD });
    expect(wrong.status).toBe(401);
    expect(unknown.status).toBe(401);
    expect({ ...wrong.body, request_id: 0 }).toEqual({ ...unknown.body, request_id: 0 });
    await client.request('POST', '/api/v1/account/login', { email: address, password: 'wrong password!!' });
    await client.request('POST', '/api/v1/account/login', { email: address, password: 'wrong password!!' });
    const limited = await client.request('POST', '/api/v1/account/login', { email: address, password: PASSWORD });
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
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
    expect((r.body.data as unknown[]).length).toBe(5);
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
    const rows: Array<{ payload: unknown }> = await db.query(`SELECT payload FROM auth.outbox WHERE message_key = $1`, [key.id]);
    expect(rows).toHaveLength(1);
    const event = validateRevocationEvent(rows[0].payload);
    expect(event.ok && event.value.type).toBe('invoicing.auth.api_key_revoked.v1');
    expect(event.ok && event.value.data.session_ids).toHaveLength(1);
    // Revoking again changes nothing and publishes nothing more.
    expect((await client.request('POST', `/api/v1/settings/api-keys/${key.id}/revoke`)).status).toBe(200);
    expect(await db.query(`SELECT 1 FROM auth.outbox WHERE message_key = $1`, [key.id])).toHaveLength(1);
  });
});

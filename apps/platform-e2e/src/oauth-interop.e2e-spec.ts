import { DEV_JWT_KEYS } from '@invoicing/auth-guard';
import { ALL_SCOPES } from '@invoicing/contracts';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { ClientCredentials } from 'simple-oauth2';
import { claimsOf, http } from './support/api';
import { readRevocationsWithKcat } from './support/kcat';
import { createKey, Platform, STACK, startPlatform } from './support/platform';
import { sleep } from './support/processes';

/**
 * Standard OAuth client libraries against the platform behind its one base URL, unmodified:
 * openid-client (RFC 8414 discovery, both client authentication methods, refresh grant, RFC 7009
 * revocation), simple-oauth2 (client credentials and refresh) and jose (RFC 9068 access tokens); the
 * revocation event is read off Kafka with kcat and decoded with the CloudEvents SDK (support/kcat.ts).
 *
 * openid-client v6 and jose v6 are ESM-only, which Jest's CommonJS runtime cannot load; they run in
 * a child `node` (support/oauth-client.mjs), one call per process, and this file asserts its JSON.
 * simple-oauth2 is CommonJS and runs in-process.
 */
const PORTS = { gateway: 4131, 'auth-service': 4132, 'invoice-service': 4133 } as const;
const BASE = STACK.baseUrl ?? `http://127.0.0.1:${PORTS.gateway}`;
const AUDIENCE = 'invoicing-api';
/** The signing key of the development ring (kid `dev-only`), as jose needs it. */
const JWT_KEY = DEV_JWT_KEYS.split('=', 2)[1];
/** Every process: tokens name the base URL as their issuer, as in a deployment (RFC 8414 3.3). */
const ENV = { JWT_ISSUER: BASE };
const HELPER = join(__dirname, 'support', 'oauth-client.mjs');
const run = promisify(execFile);

let platform: Platform;

interface Key {
  id: string;
  client_id: string;
  client_secret: string;
}

interface Tokens {
  access_token: string;
  refresh_token: string;
  token_type: string;
  expires_in: number;
  scope: string;
}

type Outcome<T> = { ok: true; result: T } | { ok: false; name?: string; code?: string; error?: string; status?: number; message: string };

/** One call of openid-client or jose in a child Node process. */
async function oauthClient<T>(call: Record<string, unknown>): Promise<Outcome<T>> {
  const { stdout } = await run(process.execPath, [HELPER, JSON.stringify({ base: BASE, ...call })], { timeout: 30000 });
  const lines = stdout.trim().split('\n');
  return JSON.parse(lines[lines.length - 1]) as Outcome<T>;
}

async function ok<T>(call: Record<string, unknown>): Promise<T> {
  const outcome = await oauthClient<T>(call);
  if (!outcome.ok) throw new Error(`${String(call.op)} failed: ${JSON.stringify(outcome)}`);
  return outcome.result;
}

async function newKey(scopes = 'read:invoices,write:invoices'): Promise<Key> {
  return createKey('E2E OAuth', 'generic client', scopes);
}

const as = (key: Key, auth: 'basic' | 'post') => ({ clientId: key.client_id, clientSecret: key.client_secret, auth });
const listInvoices = (token: string) => http('GET', `${BASE}/api/v1/invoices`, { token });

/** Milliseconds until every token is refused through the gateway (polling every 5 ms). */
async function timeUntilRefused(tokens: string[], timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const statuses = await Promise.all(tokens.map(async (t) => (await listInvoices(t)).status));
    if (statuses.every((s) => s === 401)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`tokens still accepted after ${timeoutMs} ms: ${statuses.join(',')}`);
    await sleep(5);
  }
}

beforeAll(async () => {
  platform = await startPlatform({ label: 'oauth', ports: PORTS, env: ENV });
});

afterAll(async () => {
  await platform?.stop();
});

describe('openid-client v6 against the base URL', () => {
  it('discovers the authorization server from the base URL alone (RFC 8414)', async () => {
    const key = await newKey();
    const { metadata } = await ok<{ metadata: Record<string, unknown> }>({ op: 'discover', ...as(key, 'basic') });
    expect(metadata).toMatchObject({
      issuer: BASE,
      token_endpoint: `${BASE}/api/v1/auth/token`,
      revocation_endpoint: `${BASE}/api/v1/auth/revoke`,
      grant_types_supported: ['client_credentials', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: [...ALL_SCOPES],
      response_types_supported: [],
      service_documentation: `${BASE}/api/v1/docs`,
    });
    const docs = await fetch(String(metadata.service_documentation));
    expect(docs.status).toBe(200);
  });

  it.each(['basic', 'post'] as const)('gets tokens with client_secret_%s that jose verifies as RFC 9068 access tokens', async (auth) => {
    const key = await newKey();
    const tokens = await ok<Tokens>({ op: 'client_credentials', ...as(key, auth), scope: 'read:invoices' });
    expect(tokens).toMatchObject({ token_type: 'bearer', expires_in: 3600, scope: 'read:invoices' });
    expect(tokens.refresh_token).toMatch(/^rt_live_/);

    const verified = await ok<{ header: Record<string, unknown>; payload: Record<string, unknown> }>({
      op: 'verify',
      token: tokens.access_token,
      key: JWT_KEY,
      issuer: BASE,
      audience: AUDIENCE,
    });
    expect(verified.header).toEqual({ alg: 'HS256', typ: 'at+jwt', kid: 'dev-only' });
    expect(verified.payload).toMatchObject({
      iss: BASE,
      aud: AUDIENCE,
      sub: key.id,
      client_id: key.client_id,
      scope: 'read:invoices',
      jti: expect.any(String),
      iat: expect.any(Number),
      exp: expect.any(Number),
    });
    expect((verified.payload.exp as number) - (verified.payload.iat as number)).toBe(3600);
    // jose refuses it for another audience or issuer: the claims are really checked.
    const wrongAudience = await oauthClient({ op: 'verify', token: tokens.access_token, key: JWT_KEY, issuer: BASE, audience: 'other-api' });
    expect(wrongAudience).toMatchObject({ ok: false, code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
    const wrongIssuer = await oauthClient({ op: 'verify', token: tokens.access_token, key: JWT_KEY, issuer: 'https://evil.example', audience: AUDIENCE });
    expect(wrongIssuer).toMatchObject({ ok: false, code: 'ERR_JWT_CLAIM_VALIDATION_FAILED' });
    expect((await listInvoices(tokens.access_token)).status).toBe(200);
  });

  it('refreshes with refreshTokenGrant; a spent token is invalid_grant and revokes every session of the key', async () => {
    const key = await newKey();
    const first = await ok<Tokens>({ op: 'client_credentials', ...as(key, 'basic') });
    const other = await ok<Tokens>({ op: 'client_credentials', ...as(key, 'post') });
    const second = await ok<Tokens>({ op: 'refresh', ...as(key, 'basic'), token: first.refresh_token });
    expect(second.refresh_token).not.toBe(first.refresh_token);
    expect(claimsOf(second.access_token).sid).toBe(claimsOf(first.access_token).sid);
    const third = await ok<Tokens>({ op: 'refresh', ...as(key, 'post'), token: second.refresh_token });

    const reuse = await oauthClient({ op: 'refresh', ...as(key, 'basic'), token: first.refresh_token });
    expect(reuse).toMatchObject({ ok: false, error: 'invalid_grant', status: 400 });
    await timeUntilRefused([third.access_token, other.access_token], 5000);
    expect(await oauthClient({ op: 'refresh', ...as(key, 'basic'), token: other.refresh_token })).toMatchObject({ ok: false, error: 'invalid_grant' });
  });

  it("refuses key A's refresh token with key B's credentials, and A's token still works", async () => {
    const a = await newKey();
    const b = await newKey();
    const tokens = await ok<Tokens>({ op: 'client_credentials', ...as(a, 'basic') });
    expect(await oauthClient({ op: 'refresh', ...as(b, 'basic'), token: tokens.refresh_token })).toMatchObject({ ok: false, error: 'invalid_grant' });
    await ok<Tokens>({ op: 'refresh', ...as(a, 'basic'), token: tokens.refresh_token });
  });

  it('revokes a refresh token with tokenRevocation: its session ends and its access tokens are refused within a second', async () => {
    const key = await newKey();
    const ended = await ok<Tokens>({ op: 'client_credentials', ...as(key, 'basic') });
    const kept = await ok<Tokens>({ op: 'client_credentials', ...as(key, 'basic') });
    expect((await listInvoices(ended.access_token)).status).toBe(200);

    const before = Date.now();
    await ok({ op: 'revoke', ...as(key, 'basic'), token: ended.refresh_token, hint: 'refresh_token' });
    const latency = await timeUntilRefused([ended.access_token], 5000);
    console.log(`e2e: RFC 7009 revocation reached the invoice service ${latency} ms after the response`);
    expect(latency).toBeLessThan(1000);
    expect(await oauthClient({ op: 'refresh', ...as(key, 'basic'), token: ended.refresh_token })).toMatchObject({ ok: false, error: 'invalid_grant' });
    // One session only: the other keeps working and refreshing.
    expect((await listInvoices(kept.access_token)).status).toBe(200);
    await ok<Tokens>({ op: 'refresh', ...as(key, 'basic'), token: kept.refresh_token });

    // The event as any subscriber sees it: kcat reads the topic, the CloudEvents SDK decodes and validates it.
    // Delivery is at least once (ADR 0004): the auth service sends at once and its outbox relay may
    // publish the same row again before the direct send is marked, with the same CloudEvents id. A
    // subscriber keeps one event per id, and so does this check (one full run saw the id twice).
    const received = await readRevocationsWithKcat(key.id, before - 1000);
    const events = [...new Map(received.map((e) => [e.id, e])).values()];
    expect(events).toHaveLength(1);
    const [event] = events;
    expect(event.specversion).toBe('1.0');
    expect(event.type).toBe('invoicing.auth.sessions_revoked.v1');
    expect(event.subject).toBe(key.id);
    expect(event.datacontenttype).toBe('application/json');
    expect(event.data).toMatchObject({ reason: 'session_revoked', api_key_id: key.id, client_id: key.client_id, session_ids: [claimsOf(ended.access_token).sid] });
  });

  it('revokes an access token with tokenRevocation (client_secret_post): it and its session stop working', async () => {
    const key = await newKey();
    const tokens = await ok<Tokens>({ op: 'client_credentials', ...as(key, 'post') });
    await ok({ op: 'revoke', ...as(key, 'post'), token: tokens.access_token, hint: 'access_token' });
    await timeUntilRefused([tokens.access_token], 5000);
    expect(await oauthClient({ op: 'refresh', ...as(key, 'post'), token: tokens.refresh_token })).toMatchObject({ ok: false, error: 'invalid_grant' });
  });

  it('answers an unknown or foreign token with success and changes nothing; wrong credentials are invalid_client', async () => {
    const key = await newKey();
    const stranger = await newKey();
    const tokens = await ok<Tokens>({ op: 'client_credentials', ...as(key, 'basic') });
    await ok({ op: 'revoke', ...as(key, 'basic'), token: 'rt_live_unknown' });
    await ok({ op: 'revoke', ...as(stranger, 'basic'), token: tokens.refresh_token });
    await ok({ op: 'revoke', ...as(stranger, 'post'), token: tokens.access_token });
    expect((await listInvoices(tokens.access_token)).status).toBe(200);
    const wrong = await oauthClient({ op: 'revoke', clientId: key.client_id, clientSecret: stranger.client_secret, auth: 'basic', token: tokens.refresh_token });
    expect(wrong).toMatchObject({ ok: false, error: 'invalid_client', status: 401 });
    await ok<Tokens>({ op: 'refresh', ...as(key, 'basic'), token: tokens.refresh_token });
  });
});

describe('simple-oauth2', () => {
  it.each(['header', 'body'] as const)('gets tokens and refreshes them at the token endpoint (credentials in the %s)', async (authorizationMethod) => {
    const key = await newKey();
    const client = new ClientCredentials({
      client: { id: key.client_id, secret: key.client_secret },
      auth: { tokenHost: BASE, tokenPath: '/api/v1/auth/token', revokePath: '/api/v1/auth/revoke' },
      options: { authorizationMethod },
    });
    const token = await client.getToken({ scope: 'read:invoices' });
    expect(token.token).toMatchObject({ token_type: 'Bearer', expires_in: 3600, scope: 'read:invoices' });
    expect(token.expired()).toBe(false);
    expect((await listInvoices(token.token.access_token as string)).status).toBe(200);

    const refreshed = await token.refresh();
    expect(refreshed.token.refresh_token).not.toBe(token.token.refresh_token);
    expect(claimsOf(refreshed.token.access_token as string).sid).toBe(claimsOf(token.token.access_token as string).sid);
    expect((await listInvoices(refreshed.token.access_token as string)).status).toBe(200);

    // The spent token again: the library surfaces the RFC 6749 error.
    const reuse = await token.refresh().then(
      () => null,
      (e: { output?: { statusCode: number }; data?: { payload?: { error?: string } } }) => e,
    );
    expect(reuse?.output?.statusCode).toBe(400);
    expect(reuse?.data?.payload?.error).toBe('invalid_grant');
  });
});

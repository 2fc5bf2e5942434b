import { validateRevocationEvent } from '@invoicing/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createHash, generateKeyPairSync, KeyObject, randomUUID, sign } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { newSecretKey } from '../keys/credential-format';
import { BrowserLikeClient } from '../testing/browser-like-client';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';

/**
 * GitHub's leaked-secret reports against the real services (ADR 0025): a live Secret Key reported
 * public is revoked at once (event reason `exposed`, an audit record with the report's URL, the
 * owner's key view), a revoked or unknown one changes nothing, and a report that is not GitHub's
 * (signature, key identifier, size, JSON) is refused with a 4xx and changes nothing. Reports are
 * signed with a P-256 key pair made for the test, published to the service as GitHub's would be.
 */
const { privateKey, publicKey } = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const KEY_ID = createHash('sha256').update(publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
const other = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
let app: AuthTestApp;

beforeAll(async () => {
  const published = { public_keys: [{ key_identifier: KEY_ID, key: publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }] };
  app = await startAuthTestApp({ GITHUB_SECRET_SCANNING_KEYS: JSON.stringify(published) });
});

afterAll(async () => {
  await app.close();
});

const db = () => app.service.app.get<DataSource>(getDataSourceToken());
const URL_OF_LEAK = 'https://github.com/acme/erp-sync/blob/0a1b2c3/.env';

function signed(body: string, key: KeyObject = privateKey, keyId = KEY_ID): Record<string, string> {
  return {
    'github-public-key-identifier': keyId,
    'github-public-key-signature': sign('sha256', Buffer.from(body), { key, dsaEncoding: 'der' }).toString('base64'),
  };
}

async function report(body: string, headers: Record<string, string> = signed(body)) {
  const response = await fetch(`${app.baseUrl}/api/v1/secret-scanning/github`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body });
  const text = await response.text();
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: text ? (JSON.parse(text) as unknown) : null };
}

async function ownerWithKey(): Promise<{ client: BrowserLikeClient; key: { id: string; client_id: string; client_secret: string } }> {
  const client = new BrowserLikeClient(app.baseUrl);
  await client.csrf();
  expect((await client.request('POST', '/api/v1/account/signup', { organization_name: 'Acme', email: `u-${randomUUID().slice(0, 8)}@example.com`, password: 'correct horse battery staple' })).status).toBe(201);
  const key = (await client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes: ['read:invoices'] })).body as { id: string; client_id: string; client_secret: string };
  return { client, key };
}

const exchange = (key: { client_id: string }, secret: string) =>
  postJson(`${app.baseUrl}/api/v1/auth/token`, { grant_type: 'client_credentials', client_id: key.client_id, client_secret: secret });

describe('POST /api/v1/secret-scanning/github', () => {
  it('revokes a live key whose secret is reported, labels it true_positive, and tells its owner where it was found', async () => {
    const { client, key } = await ownerWithKey();
    const pair = await exchange(key, key.client_secret);
    expect(pair.status).toBe(200);
    const fake = `sk_live_${'A'.repeat(49)}`;
    const unknown = newSecretKey();
    const body = JSON.stringify([
      { token: key.client_secret, type: 'invoicing_secret_key', url: URL_OF_LEAK, source: 'content' },
      { token: fake, type: 'invoicing_secret_key', url: '', source: 'commit' },
      { token: unknown, type: 'invoicing_secret_key', url: '', source: 'content' },
    ]);
    const answer = await report(body);
    expect(answer.status).toBe(200);
    expect(answer.body).toEqual([
      { token_raw: key.client_secret, token_type: 'invoicing_secret_key', label: 'true_positive' },
      { token_raw: fake, token_type: 'invoicing_secret_key', label: 'false_positive' },
      { token_raw: unknown, token_type: 'invoicing_secret_key', label: 'false_positive' },
    ]);

    // The key is revoked: no new token, its refresh token refused, the event says why.
    expect((await exchange(key, key.client_secret)).status).toBe(401);
    expect((await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: pair.body.refresh_token })).body.error).toBe('invalid_grant');
    const rows: Array<{ payload: unknown }> = await db().query(`SELECT payload FROM auth.outbox WHERE topic = 'auth.revocations.v1' AND message_key = $1`, [key.id]);
    const event = validateRevocationEvent(rows[0]?.payload);
    expect(event.ok && event.value.data).toEqual(expect.objectContaining({ reason: 'exposed', session_ids: [expect.stringMatching(/^ses_/)] }));

    // The owner sees it on the key and in the audit log, with the report's URL.
    const listed = ((await client.request('GET', '/api/v1/settings/api-keys?status=revoked')).body.data as Array<Record<string, unknown>>)[0];
    expect(listed).toEqual(expect.objectContaining({ status: 'revoked', exposed_url: URL_OF_LEAK, exposed_at: expect.any(String) }));
    const audit = (await client.request('GET', '/api/v1/settings/audit-events?type=api_key.exposed')).body.data as Array<Record<string, unknown>>;
    expect(audit).toEqual([expect.objectContaining({ actor: { kind: 'system', id: null }, api_key_id: key.id, data: { sessions_ended: 1, url: URL_OF_LEAK, source: 'content' } })]);

    // Reported again: still ours (true_positive), nothing more happens.
    expect(((await report(body)).body as Array<{ label: string }>)[0].label).toBe('true_positive');
    expect(((await client.request('GET', '/api/v1/settings/audit-events?type=api_key.exposed')).body.data as unknown[]).length).toBe(1);
  });

  it('revokes a key whose previous secret is reported during its overlap, and changes nothing for one whose overlap ended', async () => {
    const { client, key } = await ownerWithKey();
    const rolled = (await client.request('POST', `/api/v1/settings/api-keys/${key.id}/roll`, { previous_secret_expires_in: 3600 })).body as { client_secret: string };
    const body = JSON.stringify([{ token: key.client_secret, type: 'invoicing_secret_key', url: URL_OF_LEAK, source: 'content' }]);
    expect(((await report(body)).body as Array<{ label: string }>)[0].label).toBe('true_positive');
    expect((await exchange(key, rolled.client_secret)).status).toBe(401);

    // A previous secret whose overlap has ended is still ours (its hash is kept until the next
    // roll), but it no longer works: nothing to revoke.
    const second = await ownerWithKey();
    await second.client.request('POST', `/api/v1/settings/api-keys/${second.key.id}/roll`, { previous_secret_expires_in: 1 });
    await new Promise((resolve) => setTimeout(resolve, 1100));
    const stale = JSON.stringify([{ token: second.key.client_secret, type: 'invoicing_secret_key', url: URL_OF_LEAK, source: 'content' }]);
    expect(((await report(stale)).body as Array<{ label: string }>)[0].label).toBe('true_positive');
    const listed = ((await second.client.request('GET', '/api/v1/settings/api-keys')).body.data as Array<Record<string, unknown>>)[0];
    expect(listed).toEqual(expect.objectContaining({ status: 'active', exposed_at: null }));
  });

  it('still revokes, and records the report with the secret-shaped part redacted, when the URL itself carries a secret', async () => {
    const { client, key } = await ownerWithKey();
    const url = `https://github.com/acme/leak/blob/main/${key.client_secret}.txt`;
    const body = JSON.stringify([{ token: key.client_secret, type: 'invoicing_secret_key', url, source: 'content' }]);
    expect((await report(body)).status).toBe(200);
    expect((await exchange(key, key.client_secret)).status).toBe(401);
    const audit = (await client.request('GET', '/api/v1/settings/audit-events?type=api_key.exposed')).body.data as Array<{ data: Record<string, unknown> }>;
    expect(audit).toHaveLength(1);
    expect(JSON.stringify(audit)).not.toContain(key.client_secret);
    expect(audit[0].data.url).toBe('[redacted]');
  });

  it('refuses what GitHub did not sign, or cannot be read, with a clear 4xx, and changes nothing', async () => {
    const { key } = await ownerWithKey();
    const body = JSON.stringify([{ token: key.client_secret, type: 'invoicing_secret_key', url: URL_OF_LEAK, source: 'content' }]);
    const tampered = body.replace('acme', 'acne');
    const cases: Array<[string, string, Record<string, string>, number]> = [
      ['no signature headers', body, {}, 400],
      ['a signature by another key under a known identifier', body, signed(body, other.privateKey), 401],
      ['an unknown key identifier', body, signed(body, privateKey, 'f'.repeat(64)), 401],
      ['a body changed after signing', tampered, signed(body), 401],
      ['malformed JSON, signed', '[{"token": ', signed('[{"token": '), 400],
      ['not an array, signed', '{"token":"x"}', signed('{"token":"x"}'), 400],
    ];
    for (const [name, text, headers, status] of cases) {
      const answer = await report(text, headers);
      expect({ name, status: answer.status, problem: answer.type.startsWith('application/problem+json') }).toEqual({ name, status, problem: true });
      expect(JSON.stringify(answer.body)).not.toContain(key.client_secret);
    }
    const huge = JSON.stringify([{ token: 'x'.repeat(2 * 1024 * 1024), type: 't', url: '', source: 'content' }]);
    expect((await report(huge, signed(huge))).status).toBe(413);
    // Still live.
    expect((await exchange(key, key.client_secret)).status).toBe(200);
  });
});

describe('POST /api/v1/secret-scanning/github on a deployment without GitHub keys', () => {
  it('answers 404 before anything about the request itself: media type, size, signature', async () => {
    const bare = await startAuthTestApp({ GITHUB_SECRET_SCANNING_KEYS: '', GITHUB_SECRET_SCANNING_KEYS_FILE: '' });
    try {
      const cases: Array<[string, Record<string, string>, string]> = [
        ['application/json, unsigned', { 'content-type': 'application/json' }, '[]'],
        ['text/plain', { 'content-type': 'text/plain' }, 'hello'],
        ['application/xml', { 'content-type': 'application/xml' }, '<report/>'],
        ['no content type', {}, ''],
        ['over 1 MiB', { 'content-type': 'application/json' }, JSON.stringify(['x'.repeat(2 * 1024 * 1024)])],
      ];
      for (const [name, headers, body] of cases) {
        const response = await fetch(`${bare.baseUrl}/api/v1/secret-scanning/github`, { method: 'POST', headers, body: body === '' ? undefined : body });
        expect({ name, status: response.status, type: response.headers.get('content-type') }).toEqual({ name, status: 404, type: expect.stringMatching(/^application\/problem\+json/) });
        await response.text();
      }
    } finally {
      await bare.close();
    }
  });
});

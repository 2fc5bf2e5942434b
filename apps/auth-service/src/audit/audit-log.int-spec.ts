import { AUDIT_TOPIC, parsePublicId, validateAuditEvent } from '@invoicing/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import type { DataSource } from 'typeorm';
import { BrowserLikeClient } from '../testing/browser-like-client';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';
import { verifyAuditCommand } from './verify-audit.command';

/**
 * The audit log against the real Postgres, Redis and Kafka (ADR 0024): what is recorded and by
 * whom, the list and its filters, organizations kept apart, the hash chain and verify-audit naming
 * a record altered, removed or reordered with SQL, the runtime role unable to change a record, and
 * every record on the audit stream. The test process plays the gateway (a trusted proxy).
 */
let app: AuthTestApp;

beforeAll(async () => {
  app = await startAuthTestApp({ TRUSTED_PROXIES: '127.0.0.1' });
});

afterAll(async () => {
  await app.close();
});

const db = () => app.service.app.get<DataSource>(getDataSourceToken());
const PASSWORD = 'correct horse battery staple';
const from = (ip: string) => ({ 'x-forwarded-for': ip });

interface Listed {
  object: 'audit_event';
  id: string;
  seq: number;
  type: string;
  actor: { kind: string; id: string | null };
  api_key_id: string | null;
  client_address: string | null;
  data: Record<string, unknown>;
}

async function signedUp(email = `u-${randomUUID().slice(0, 8)}@example.com`): Promise<{ client: BrowserLikeClient; email: string; orgId: string; userId: string }> {
  const client = new BrowserLikeClient(app.baseUrl);
  await client.csrf();
  const r = await client.request('POST', '/api/v1/account/signup', { organization_name: 'Acme', email, password: PASSWORD }, { headers: from('198.51.100.10') });
  expect(r.status).toBe(201);
  const body = r.body as { user: { id: string }; organization: { id: string } };
  return { client, email, orgId: body.organization.id, userId: body.user.id };
}

async function listAll(client: BrowserLikeClient, query = ''): Promise<Listed[]> {
  const r = await client.request('GET', `/api/v1/settings/audit-events${query}`);
  expect(r.status).toBe(200);
  return r.body.data as unknown as Listed[];
}

/** Runs the verify-audit command in-process: its exit code and what it printed. */
async function verifyAudit(args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const stdout = jest.spyOn(process.stdout, 'write').mockImplementation((chunk: unknown) => (out.push(String(chunk)), true));
  const stderr = jest.spyOn(process.stderr, 'write').mockImplementation((chunk: unknown) => (err.push(String(chunk)), true));
  try {
    const code = await verifyAuditCommand(app.config, args);
    return { code, out: out.join(''), err: err.join('') };
  } finally {
    stdout.mockRestore();
    stderr.mockRestore();
  }
}

/** The migration role (the table's owner): the only one that can still change a record. */
async function asOwner<T>(run: (c: Client) => Promise<T>): Promise<T> {
  const client = new Client({ connectionString: app.config.MIGRATION_DATABASE_URL });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

describe('what the audit log records', () => {
  it("records sign-up, log-ins, a key's creation, roll, allowlist change and revocation, with actor and address, newest first", async () => {
    const { client, email, userId } = await signedUp();
    const created = await client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes: ['read:invoices'] }, { headers: from('198.51.100.11') });
    const keyId = String(created.body.id);
    const secret = String(created.body.client_secret);
    expect((await client.request('POST', `/api/v1/settings/api-keys/${keyId}/roll`, { previous_secret_expires_in: 0 }, { headers: from('198.51.100.12') })).status).toBe(200);
    expect((await client.request('PATCH', `/api/v1/settings/api-keys/${keyId}`, { allowed_ips: ['203.0.113.0/24'] }, { headers: from('198.51.100.13') })).status).toBe(200);
    expect((await client.request('POST', `/api/v1/settings/api-keys/${keyId}/revoke`, undefined, { headers: from('198.51.100.14') })).status).toBe(200);
    const other = new BrowserLikeClient(app.baseUrl);
    expect((await other.request('POST', '/api/v1/account/login', { email, password: 'wrong password entirely' }, { headers: from('198.51.100.15') })).status).toBe(401);
    expect((await other.request('POST', '/api/v1/account/login', { email, password: PASSWORD }, { headers: from('198.51.100.16') })).status).toBe(200);
    await other.csrf();
    expect((await other.request('POST', '/api/v1/account/logout', undefined, { headers: from('198.51.100.17') })).status).toBe(204);

    const records = await listAll(client, '?limit=100');
    const byUser = { kind: 'user', id: userId };
    expect(records.map((r) => [r.type, r.actor, r.client_address])).toEqual([
      ['account.logged_out', byUser, '198.51.100.17'],
      ['account.logged_in', byUser, '198.51.100.16'],
      // Who typed the wrong password is not known; the account is named in data.
      ['account.login_failed', { kind: 'user', id: null }, '198.51.100.15'],
      ['api_key.revoked', byUser, '198.51.100.14'],
      ['api_key.allowed_ips_changed', byUser, '198.51.100.13'],
      ['api_key.rolled', byUser, '198.51.100.12'],
      ['api_key.created', byUser, '198.51.100.11'],
      ['account.signed_up', byUser, '198.51.100.10'],
    ]);
    expect(records.map((r) => r.seq)).toEqual([8, 7, 6, 5, 4, 3, 2, 1]);
    expect(records[4].data).toEqual({ allowed_ips: ['203.0.113.0/24'], previous_allowed_ips: [], version: 1 });
    expect(records[2].data).toEqual({ user_id: userId });
    expect(records.filter((r) => r.type.startsWith('api_key.')).every((r) => r.api_key_id === keyId)).toBe(true);
    // Never a secret, a token or a password hash.
    const text = JSON.stringify(records);
    expect(text).not.toContain(secret);
    expect(text).not.toMatch(/sk_live_|rt_live_|eyJ|argon2|\$argon/);
  });

  it('records the first failed log-in of an account in a window once, whichever addresses the others come from (ADR 0035)', async () => {
    const { client, email } = await signedUp();
    const stranger = new BrowserLikeClient(app.baseUrl);
    for (const ip of ['198.51.100.31', '198.51.100.31', '198.51.100.32', '2001:db8:0:1::5', '2001:db8:0:2::5']) {
      expect((await stranger.request('POST', '/api/v1/account/login', { email, password: 'not the password at all' }, { headers: from(ip) })).status).toBe(401);
    }
    expect((await listAll(client, '?type=account.login_failed')).map((r) => r.client_address)).toEqual(['198.51.100.31']);
  });

  it('records a refresh-token reuse by the key, with the address it came from and the sessions it ended', async () => {
    const { client } = await signedUp();
    const key = (await client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes: ['read:invoices'] })).body as Record<string, string>;
    const pair = await postJson(`${app.baseUrl}/api/v1/auth/token`, { grant_type: 'client_credentials', client_id: key.client_id, client_secret: key.client_secret });
    expect((await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: pair.body.refresh_token })).status).toBe(200);
    expect((await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: pair.body.refresh_token }, from('203.0.113.66'))).status).toBe(400);
    const [reuse] = await listAll(client, '?type=refresh_token.reuse_detected');
    expect(reuse).toEqual(
      expect.objectContaining({ actor: { kind: 'api_key', id: key.id }, api_key_id: key.id, client_address: '203.0.113.66', data: { sessions_ended: 1, session_ids: [expect.stringMatching(/^ses_/)] } }),
    );
  });

  it('filters by type and by key, pages with starting_after, and never shows another organization\'s records', async () => {
    const { client } = await signedUp();
    const keys: string[] = [];
    for (let i = 0; i < 3; i++) keys.push(String((await client.request('POST', '/api/v1/settings/api-keys', { name: `K${i}`, scopes: ['read:invoices'] })).body.id));
    expect((await listAll(client, '?type=api_key.created')).map((r) => r.api_key_id)).toEqual([...keys].reverse());
    expect((await listAll(client, `?api_key_id=${keys[1]}`)).map((r) => r.type)).toEqual(['api_key.created']);
    const first = await client.request('GET', '/api/v1/settings/audit-events?limit=2');
    expect(first.body.has_more).toBe(true);
    const firstPage = first.body.data as unknown as Listed[];
    const second = await listAll(client, `?limit=2&starting_after=${firstPage[1].id}`);
    expect([...firstPage, ...second].map((r) => r.seq)).toEqual([4, 3, 2, 1]);

    const stranger = await signedUp();
    const theirs = await listAll(stranger.client);
    expect(theirs.map((r) => r.type)).toEqual(['account.signed_up']);
    expect(await listAll(stranger.client, `?api_key_id=${keys[0]}`)).toEqual([]);
    // Another organization's record as a cursor ends the list: nothing is read across.
    expect(await listAll(stranger.client, `?starting_after=${firstPage[0].id}`)).toEqual([]);
    for (const query of ['?limit=0', '?limit=101', '?type=api_key.stolen', '?api_key_id=nope', '?starting_after=evt_x', '?colour=red']) {
      const r = await client.request('GET', `/api/v1/settings/audit-events${query}`);
      expect({ query, status: r.status, type: r.headers.get('content-type') }).toEqual({ query, status: 400, type: expect.stringMatching(/^application\/problem\+json/) });
    }
    // A parameter given twice is refused, never read as absent (which answered every type).
    for (const [query, field] of [
      ['?type=api_key.created&type=api_key.rolled', 'type'],
      [`?api_key_id=${keys[0]}&api_key_id=${keys[1]}`, 'api_key_id'],
      ['?limit=1&limit=2', 'limit'],
      [`?starting_after=${firstPage[0].id}&starting_after=${firstPage[1].id}`, 'starting_after'],
    ]) {
      const r = await client.request('GET', `/api/v1/settings/audit-events${query}`);
      expect({ query, status: r.status, errors: r.body.errors }).toEqual({ query, status: 400, errors: [{ field, code: 'repeated', message: 'must be given once' }] });
    }
    expect((await new BrowserLikeClient(app.baseUrl).request('GET', '/api/v1/settings/audit-events')).status).toBe(401);
  });
});

describe('the hash chain', () => {
  it('verifies an intact chain (exit 0) and names a record altered, removed or reordered with SQL (exit 1)', async () => {
    const { client, orgId } = await signedUp();
    for (let i = 0; i < 4; i++) await client.request('POST', '/api/v1/settings/api-keys', { name: `K${i}`, scopes: ['read:invoices'] });
    const intact = await verifyAudit(['--organization', orgId]);
    expect(intact.code).toBe(0);
    expect(JSON.parse(intact.out)).toEqual({ ok: true, count: 5, head: { seq: 5, hash: expect.stringMatching(/^[0-9a-f]{64}$/) } });
    const uuid = parsePublicId('org', orgId);

    // Altered: record 3's data changed in place.
    await asOwner((c) => c.query(`UPDATE auth.audit_events SET data = jsonb_set(data, '{name}', '"Innocent"') WHERE organization_id = $1 AND seq = 3`, [uuid]));
    const altered = await verifyAudit(['--organization', orgId]);
    expect(altered.code).toBe(1);
    expect(JSON.parse(altered.out)).toEqual(expect.objectContaining({ ok: false, problem: 'altered', at: expect.objectContaining({ seq: 3 }) }));
    expect(altered.err).toMatch(/record 3/);
    await asOwner((c) => c.query(`UPDATE auth.audit_events SET data = jsonb_set(data, '{name}', '"K1"') WHERE organization_id = $1 AND seq = 3`, [uuid]));
    expect((await verifyAudit(['--organization', orgId])).code).toBe(0);

    // Reordered: records 2 and 4 swap places.
    await asOwner(async (c) => {
      // Three steps: (organization_id, seq) is unique at every statement.
      await c.query(`UPDATE auth.audit_events SET seq = 1000 WHERE organization_id = $1 AND seq = 2`, [uuid]);
      await c.query(`UPDATE auth.audit_events SET seq = 2 WHERE organization_id = $1 AND seq = 4`, [uuid]);
      await c.query(`UPDATE auth.audit_events SET seq = 4 WHERE organization_id = $1 AND seq = 1000`, [uuid]);
    });
    const reordered = await verifyAudit(['--organization', orgId]);
    expect(reordered.code).toBe(1);
    expect(JSON.parse(reordered.out).at.seq).toBe(2);

    // Removed: record 4 deleted.
    await asOwner((c) => c.query(`DELETE FROM auth.audit_events WHERE organization_id = $1 AND seq = 4`, [uuid]));
    const removed = await verifyAudit(['--organization', orgId]);
    expect(removed.code).toBe(1);
    expect(removed.err).toMatch(/audit chain broken/);
    expect(await verifyAudit(['--organization', 'org_nope'])).toEqual(expect.objectContaining({ code: 2 }));
  });

  it('cannot be changed by the runtime role: UPDATE and DELETE are refused to it', async () => {
    const { orgId } = await signedUp();
    const uuid = parsePublicId('org', orgId);
    await expect(db().query(`UPDATE auth.audit_events SET type = 'x' WHERE organization_id = $1`, [uuid])).rejects.toThrow(/permission denied/);
    await expect(db().query(`DELETE FROM auth.audit_events WHERE organization_id = $1`, [uuid])).rejects.toThrow(/permission denied/);
  });

  it('chains concurrent records of one organization without a fork', async () => {
    const { client, orgId } = await signedUp();
    const answers = await Promise.all(Array.from({ length: 8 }, (_, i) => client.request('POST', '/api/v1/settings/api-keys', { name: `C${i}`, scopes: ['read:invoices'] })));
    expect(answers.every((a) => a.status === 201)).toBe(true);
    expect(JSON.parse((await verifyAudit(['--organization', orgId])).out)).toEqual(expect.objectContaining({ ok: true, count: 9 }));
  });
});

describe('the audit stream', () => {
  it('puts every record on auth.audit.v1 as a valid CloudEvent keyed by organization, and publishes it', async () => {
    const { client, orgId } = await signedUp();
    await client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes: ['read:invoices'] });
    const deadline = Date.now() + 5000;
    let rows: Array<{ payload: unknown; published_at: Date | null }> = [];
    while (Date.now() < deadline) {
      rows = await db().query(`SELECT payload, published_at FROM auth.outbox WHERE topic = $1 AND message_key = $2 ORDER BY id`, [AUDIT_TOPIC, orgId]);
      if (rows.length === 2 && rows.every((r) => r.published_at !== null)) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    expect(rows.map((r) => r.published_at !== null)).toEqual([true, true]);
    const events = rows.map((r) => validateAuditEvent(r.payload));
    expect(events.map((e) => e.ok && e.value.data.type)).toEqual(['account.signed_up', 'api_key.created']);
    const records = await listAll(client);
    expect(events.map((e) => e.ok && e.value.data.id)).toEqual(records.map((r) => r.id).reverse());
  });
});

import { randomUUID } from 'node:crypto';
import { newSecretKey } from '../keys/credential-format';
import { BrowserLikeClient } from '../testing/browser-like-client';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';
import { verifyAuditCommand } from './verify-audit.command';
import { AuditFailureDigest, SAMPLE_ADDRESSES } from './failure-digest';

/**
 * Failures reach the audit log aggregated (ADR 0035), against the real Postgres and Redis: strangers
 * failing log-ins from many addresses, or authentications with a known Client ID, add a handful of
 * records per account or key and window, and the window's summary counts every failure. The clock
 * of the service is moved to the start of a window before each flood and past its end after, so a
 * window never splits a test. The test process plays the gateway (a trusted proxy) to name callers'
 * addresses.
 */
let app: AuthTestApp;

beforeAll(async () => {
  app = await startAuthTestApp({
    TRUSTED_PROXIES: '127.0.0.1',
    // The per-client alert is raised again every second: what once added a record each time.
    AUTH_THROTTLE_WINDOW_SECONDS: '1',
    AUDIT_FAILURE_RECORDS_PER_ORGANIZATION_PER_WINDOW: '4',
  });
});

afterAll(async () => {
  await app.close();
});

const PASSWORD = 'correct horse battery staple';
const from = (ip: string) => ({ 'x-forwarded-for': ip });
const windowMs = () => app.config.AUDIT_FAILURE_WINDOW_SECONDS * 1000;

/** Moves the service's clock a little into the next window. */
function nextWindow(): void {
  const now = Date.now() + app.clock.offsetMs;
  app.clock.offsetMs += (Math.floor(now / windowMs()) + 1) * windowMs() - now + 50;
}

/** Ends the current window (and its grace) and writes its summaries. */
async function endWindow(): Promise<void> {
  nextWindow();
  app.clock.offsetMs += 2500;
  await app.service.app.get(AuditFailureDigest).flush();
}

interface Listed {
  type: string;
  occurred_at: string;
  actor: { kind: string; id: string | null };
  api_key_id: string | null;
  client_address: string | null;
  data: Record<string, unknown>;
}

async function owner(): Promise<{ client: BrowserLikeClient; email: string; orgId: string; userId: string }> {
  const client = new BrowserLikeClient(app.baseUrl);
  await client.csrf();
  const email = `u-${randomUUID().slice(0, 8)}@example.com`;
  const r = await client.request('POST', '/api/v1/account/signup', { organization_name: 'Acme', email, password: PASSWORD });
  expect(r.status).toBe(201);
  const body = r.body as { user: { id: string }; organization: { id: string } };
  return { client, email, orgId: body.organization.id, userId: body.user.id };
}

async function records(client: BrowserLikeClient, query = ''): Promise<Listed[]> {
  const r = await client.request('GET', `/api/v1/settings/audit-events?limit=100${query}`);
  expect(r.status).toBe(200);
  return r.body.data as unknown as Listed[];
}

const failAuth = (clientId: string, ip: string) =>
  postJson(`${app.baseUrl}/api/v1/auth/token`, { grant_type: 'client_credentials', client_id: clientId, client_secret: newSecretKey() }, from(ip));

/** Ten failures of one key at once, from ten addresses: the per-client alert's threshold. */
async function tenFailures(clientId: string, block: number): Promise<void> {
  const answers = await Promise.all(Array.from({ length: 10 }, (_, i) => failAuth(clientId, `203.0.${block}.${i + 1}`)));
  expect(answers.map((a) => a.status)).toEqual(Array(10).fill(401));
}

describe('failures in the audit log, aggregated per account or key and window', () => {
  it('records 40 failed log-ins from 40 address blocks as one failure and one alert at once, and all 40 in one summary when the window ends', async () => {
    const { client, email, orgId, userId } = await owner();
    nextWindow();
    const stranger = new BrowserLikeClient(app.baseUrl);
    // One /48 holds 65,536 /64 blocks, each a throttle budget of its own.
    const addresses = Array.from({ length: 40 }, (_, i) => `2001:db8:0:${(i + 1).toString(16)}::7`);
    for (const ip of addresses) {
      expect((await stranger.request('POST', '/api/v1/account/login', { email, password: 'not the password at all' }, { headers: from(ip) })).status).toBe(401);
    }
    expect((await records(client)).map((r) => [r.type, r.client_address])).toEqual([
      ['account.login_failures_alert', addresses[9]],
      ['account.login_failed', addresses[0]],
      ['account.signed_up', '127.0.0.1'],
    ]);

    await endWindow();
    const [summary] = await records(client, '&type=account.login_failures_summary');
    const started = Math.floor((Date.now() + app.clock.offsetMs) / windowMs()) * windowMs() - windowMs();
    expect(summary).toEqual(
      expect.objectContaining({
        actor: { kind: 'system', id: null },
        api_key_id: null,
        client_address: null,
        occurred_at: new Date(started + windowMs()).toISOString(),
        data: {
          user_id: userId,
          failures: 40,
          address_blocks: expect.any(Number),
          sample_addresses: expect.arrayContaining([]),
          window_started_at: new Date(started).toISOString(),
          window_ended_at: new Date(started + windowMs()).toISOString(),
        },
      }),
    );
    // A HyperLogLog's count: an estimate, within a few per cent.
    expect(Math.abs((summary.data.address_blocks as number) - 40)).toBeLessThanOrEqual(2);
    const samples = summary.data.sample_addresses as string[];
    expect(samples).toHaveLength(SAMPLE_ADDRESSES);
    for (const sample of samples) expect(sample).toMatch(/^2001:db8:0:[0-9a-f]+::\/64$/);
    // Written once, however often (or by however many instances) the window is flushed.
    await app.service.app.get(AuditFailureDigest).flush();
    expect((await records(client)).map((r) => r.type)).toEqual(['account.login_failures_summary', 'account.login_failures_alert', 'account.login_failed', 'account.signed_up']);
    const verified = jest.spyOn(process.stdout, 'write').mockImplementation(() => true);
    try {
      expect(await verifyAuditCommand(app.config, ['--organization', orgId])).toBe(0);
    } finally {
      verified.mockRestore();
    }
  });

  it("records a key's alert once per window, not once per throttle window, and every failure in its summary", async () => {
    const { client } = await owner();
    const key = (await client.request('POST', '/api/v1/settings/api-keys', { name: 'ERP', scopes: ['read:invoices'] })).body as { id: string; client_id: string };
    nextWindow();
    await tenFailures(key.client_id, 1);
    // The throttle's window (1 s here, 60 s by default) ends and its alert is raised again.
    await new Promise((resolve) => setTimeout(resolve, 1200));
    await tenFailures(key.client_id, 2);
    expect((await records(client, '&type=api_key.auth_failures_alert')).map((r) => [r.api_key_id, r.data])).toEqual([
      [key.id, { failures_across_addresses: 10, window_seconds: 1 }],
    ]);

    await endWindow();
    const summaries = await records(client, '&type=api_key.auth_failures_summary');
    expect(summaries).toEqual([
      expect.objectContaining({
        actor: { kind: 'system', id: null },
        api_key_id: key.id,
        client_address: null,
        data: expect.objectContaining({ failures: 20, address_blocks: expect.any(Number), sample_addresses: expect.any(Array) }),
      }),
    ]);
    expect(summaries[0].data.sample_addresses).toHaveLength(SAMPLE_ADDRESSES);
  });

  it("keeps to the organization's ceiling of failure records per window, and says in one record what it held back", async () => {
    const { client } = await owner();
    const keys: Array<{ id: string; client_id: string }> = [];
    for (let i = 0; i < 5; i++) keys.push((await client.request('POST', '/api/v1/settings/api-keys', { name: `K${i}`, scopes: ['read:invoices'] })).body as { id: string; client_id: string });
    nextWindow();
    for (const [i, key] of keys.entries()) await tenFailures(key.client_id, 10 + i);
    expect((await records(client, '&type=api_key.auth_failures_alert')).map((r) => r.api_key_id)).toEqual(keys.slice(0, 4).map((k) => k.id).reverse());

    await endWindow();
    expect((await records(client, '&type=api_key.auth_failures_summary')).map((r) => r.api_key_id).sort()).toEqual(keys.slice(0, 4).map((k) => k.id).sort());
    expect(await records(client, '&type=audit.failure_records_suppressed')).toEqual([
      expect.objectContaining({
        actor: { kind: 'system', id: null },
        api_key_id: null,
        data: expect.objectContaining({ records_suppressed: 1, ceiling: 4, user_ids: [], api_key_ids: [keys[4].id] }),
      }),
    ]);
  });
});

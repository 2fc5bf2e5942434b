import { AUDIT_TOPIC, RESOURCES as RESOURCE_NAMES, serviceOfResource, validateAuditEvent } from '@invoicing/contracts';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { claimsOf, http, httpFrom, TokenPair } from './support/api';
import { readTopicWithKcat } from './support/kcat';
import { DashboardUser } from './support/dashboard';
import { itWhen, Platform, STACK, startPlatform } from './support/platform';
import { platformPorts } from './support/ports';
import { ServiceName, sleep } from './support/processes';

/**
 * A key's life as the five resource services see it (ADR 0023): its expiry and a change of its IP
 * allowlist reach every one of them within a second, with no request to the auth service, and a
 * caller's own X-Forwarded-For is never believed, through the gateway or directly.
 */
/** The auth service and every resource service from 4141, the gateway on 4149. */
const PORTS = platformPorts({ first: 4141, gateway: 4149 });
/** Every resource, with the service that owns it. */
const RESOURCES = RESOURCE_NAMES.map((r) => [r, serviceOfResource(r)] as const);
const SCOPES = RESOURCES.map(([r]) => `read:${r}`);
/** The gateway connects from here, the one address the services (and the auth service) trust as a proxy. */
const PROXY_ADDRESS = '127.0.0.2';

let platform: Platform;
let BASE: string;
let user: DashboardUser;

/** Plays GitHub's secret scanning: a P-256 key pair whose public half the auth service is given. */
const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const GITHUB_KEY_ID = createHash('sha256').update(github.publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
const GITHUB_KEYS = JSON.stringify({ public_keys: [{ key_identifier: GITHUB_KEY_ID, key: github.publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }] });

beforeAll(async () => {
  platform = await startPlatform({ label: 'key-lifecycle', ports: PORTS, env: { GITHUB_SECRET_SCANNING_KEYS: GITHUB_KEYS } });
  BASE = platform.baseUrl;
  user = await DashboardUser.signUp(BASE);
});

afterAll(async () => {
  await platform?.stop();
});

async function exchange(key: { client_id: string; client_secret: string }, headers: Record<string, string> = {}) {
  return http('POST', `${BASE}/api/v1/auth/token`, { body: { grant_type: 'client_credentials', client_id: key.client_id, client_secret: key.client_secret }, headers });
}

const list = (service: ServiceName, resource: string, token: string, headers: Record<string, string> = {}) =>
  http('GET', `${platform.url(service)}/api/v1/${resource}?limit=1`, { token, headers });

/**
 * Milliseconds from `since` until each resource service answers `status` to the token, every
 * service polled on its own port (the gateway for a running stack) every 10 ms.
 */
async function untilEveryService(token: string, status: number, since: number, timeoutMs = 5000): Promise<Record<string, number>> {
  const entries = await Promise.all(
    RESOURCES.map(async ([resource, service]) => {
      for (;;) {
        const r = await list(service, resource, token);
        if (r.status === status) return [service, Date.now() - since] as const;
        if (Date.now() - since > timeoutMs) throw new Error(`${service} still answers ${r.status} (waiting for ${status}) after ${timeoutMs} ms`);
        await sleep(10);
      }
    }),
  );
  return Object.fromEntries(entries);
}

describe("a key's life, at every resource service", () => {
  it('refuses every token of an expired key at all five services within a second of expires_at, with no request to the auth service', async () => {
    const expiresAt = Date.now() + 3000;
    const key = await user.createKey({ scopes: SCOPES, expires_at: new Date(expiresAt).toISOString() });
    const pair = (await exchange(key)).body as unknown as TokenPair;
    for (const [resource, service] of RESOURCES) expect((await list(service, resource, pair.access_token)).status).toBe(200);

    await sleep(Math.max(0, expiresAt - Date.now() - 200));
    const latencies = await untilEveryService(pair.access_token, 401, expiresAt);
    console.log(`e2e: after expires_at, each service refused the key's token in ms: ${JSON.stringify(latencies)}`);
    for (const ms of Object.values(latencies)) expect(ms).toBeLessThan(1000);
    const refused = await exchange(key);
    expect({ status: refused.status, error: refused.body.error }).toEqual({ status: 401, error: 'invalid_client' });
  });

  itWhen(!STACK.external, "a running stack sees this test from its published port's bridge address, not 127.0.0.1")('applies a change of the allowlist to tokens already issued, at all five services within a second, and undoes it as fast', async () => {
    const key = await user.createKey({ scopes: SCOPES, allowed_ips: ['127.0.0.1'] });
    // Through the gateway the auth service sees the test's address, 127.0.0.1: inside the list.
    const issued = await exchange(key);
    expect(issued.status).toBe(200);
    const token = (issued.body as unknown as TokenPair).access_token;
    expect(claimsOf(token).allowed_ips).toEqual(['127.0.0.1']);
    for (const [resource] of RESOURCES) expect((await http('GET', `${BASE}/api/v1/${resource}?limit=1`, { token })).status).toBe(200);

    const narrowedAt = Date.now();
    expect((await user.call('PATCH', `/api/v1/settings/api-keys/${key.id}`, { allowed_ips: ['203.0.113.0/24'] })).status).toBe(200);
    const refusedIn = await untilEveryService(token, 403, narrowedAt);
    console.log(`e2e: after the allowlist narrowed, each service refused the key's token in ms: ${JSON.stringify(refusedIn)}`);
    for (const ms of Object.values(refusedIn)) expect(ms).toBeLessThan(1000);
    for (const [resource] of RESOURCES) {
      // The caller claims an address inside the list: the gateway replaces the header with the peer's.
      const spoofed = await http('GET', `${BASE}/api/v1/${resource}?limit=1`, { token, headers: { 'x-forwarded-for': '203.0.113.9' } });
      expect({ resource, status: spoofed.status }).toEqual({ resource, status: 403 });
      expect(spoofed.headers.get('content-type')).toMatch(/^application\/problem\+json/);
      expect(String(spoofed.body.detail)).toContain('allowed_ips');
    }

    const widenedAt = Date.now();
    expect((await user.call('PATCH', `/api/v1/settings/api-keys/${key.id}`, { allowed_ips: [] })).status).toBe(200);
    const acceptedIn = await untilEveryService(token, 200, widenedAt);
    console.log(`e2e: after the allowlist was emptied, each service accepted the key's token again in ms: ${JSON.stringify(acceptedIn)}`);
    for (const ms of Object.values(acceptedIn)) expect(ms).toBeLessThan(1000);
  });

  itWhen(!STACK.external, 'needs the services on their own ports and a loopback alias as the proxy')(
    "believes X-Forwarded-For only from the trusted proxy's address, at the token endpoint and in every service",
    async () => {
      const key = await user.createKey({ scopes: SCOPES, allowed_ips: ['203.0.113.0/24'] });
      const spoof = { 'x-forwarded-for': '203.0.113.9' };
      // From the test's own address, through the gateway or directly, with or without the header: outside.
      for (const answer of [
        await exchange(key),
        await exchange(key, spoof),
        await httpFrom('127.0.0.1', 'POST', `${platform.url('auth-service')}/api/v1/auth/token`, {
          body: { grant_type: 'client_credentials', client_id: key.client_id, client_secret: key.client_secret },
          headers: spoof,
        }),
      ]) {
        expect({ status: answer.status, error: answer.body.error }).toEqual({ status: 400, error: 'unauthorized_client' });
      }
      // The same header from the proxy's address is the proxy's word: inside, and the token carries the list.
      const issued = await httpFrom(PROXY_ADDRESS, 'POST', `${platform.url('auth-service')}/api/v1/auth/token`, {
        body: { grant_type: 'client_credentials', client_id: key.client_id, client_secret: key.client_secret },
        headers: spoof,
      });
      expect(issued.status).toBe(200);
      const token = String(issued.body.access_token);
      expect(claimsOf(token).allowed_ips).toEqual(['203.0.113.0/24']);

      for (const [resource, service] of RESOURCES) {
        const url = `${platform.url(service)}/api/v1/${resource}?limit=1`;
        const statuses = {
          gateway: (await http('GET', `${BASE}/api/v1/${resource}?limit=1`, { token })).status,
          gatewaySpoofed: (await http('GET', `${BASE}/api/v1/${resource}?limit=1`, { token, headers: spoof })).status,
          directSpoofed: (await httpFrom('127.0.0.1', 'GET', url, { token, headers: spoof })).status,
          fromProxy: (await httpFrom(PROXY_ADDRESS, 'GET', url, { token, headers: spoof })).status,
        };
        expect({ service, statuses }).toEqual({ service, statuses: { gateway: 403, gatewaySpoofed: 403, directSpoofed: 403, fromProxy: 200 } });
      }
    },
  );

  itWhen(!STACK.external, 'gives the auth service a GitHub key pair made for the test')(
    "revokes a key whose secret GitHub reports public: every service refuses its tokens within a second, and its owner's audit stream says so",
    async () => {
      const since = Date.now();
      const key = await user.createKey({ scopes: SCOPES });
      const token = ((await exchange(key)).body as unknown as TokenPair).access_token;
      for (const [resource, service] of RESOURCES) expect((await list(service, resource, token)).status).toBe(200);

      const body = JSON.stringify([{ token: key.client_secret, type: 'invoicing_secret_key', url: 'https://github.com/acme/leak/blob/main/.env', source: 'content' }]);
      const reportedAt = Date.now();
      const answer = await http('POST', `${BASE}/api/v1/secret-scanning/github`, {
        body: JSON.parse(body),
        headers: {
          'github-public-key-identifier': GITHUB_KEY_ID,
          'github-public-key-signature': sign('sha256', Buffer.from(body), { key: github.privateKey, dsaEncoding: 'der' }).toString('base64'),
        },
      });
      expect({ status: answer.status, body: answer.body }).toEqual({ status: 200, body: [{ token_raw: key.client_secret, token_type: 'invoicing_secret_key', label: 'true_positive' }] });
      const refusedIn = await untilEveryService(token, 401, reportedAt);
      console.log(`e2e: after GitHub's report, each service refused the exposed key's token in ms: ${JSON.stringify(refusedIn)}`);
      for (const ms of Object.values(refusedIn)) expect(ms).toBeLessThan(1000);

      // The audit stream, read with kcat as a SIEM would: the creation and the exposure, valid records.
      const me = await user.call('GET', '/api/v1/account/me');
      const organizationId = (me.body.organization as { id: string }).id;
      const events = await readTopicWithKcat(AUDIT_TOPIC, organizationId, since, 15000, 2);
      const records = events.map((e) => validateAuditEvent({ ...e.toJSON(), data: e.data }));
      const types = records.map((r) => (r.ok ? r.value.data.type : r.errors.join('; ')));
      expect(types).toEqual(expect.arrayContaining(['api_key.created', 'api_key.exposed']));
    },
  );
});

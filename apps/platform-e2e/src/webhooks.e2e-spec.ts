import { ALL_SCOPES, SERVICES } from '@invoicing/contracts';
import { createHash, generateKeyPairSync, sign } from 'node:crypto';
import { Webhook } from 'standardwebhooks';
import { http, TokenPair } from './support/api';
import { DashboardUser } from './support/dashboard';
import { createKey, itWhen, Platform, STACK, startPlatform } from './support/platform';
import { ALL_SERVICES, platformPorts } from './support/ports';
import { startReceiver } from './support/receiver';

/**
 * Webhooks end to end: the auth service, every resource service and the webhook service as
 * processes (from 4181) behind the gateway (4189); objects created through the API, their events
 * delivered to a receiver this spec runs, each verified by the `standardwebhooks` package. Local
 * mode only: a stack elsewhere (E2E_BASE_URL) cannot reach a receiver on this machine's loopback.
 */
const PORTS = platformPorts({ first: 4181, gateway: 4189, services: ALL_SERVICES.filter((s) => SERVICES[s].kind !== 'web') });
const local = itWhen(!STACK.external, 'the webhook receiver runs on this machine');
let platform: Platform;
let BASE: string;

/** Plays GitHub's secret scanning (as key-lifecycle does): its public key is given to the auth service. */
const github = generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
const GITHUB_KEY_ID = createHash('sha256').update(github.publicKey.export({ type: 'spki', format: 'der' })).digest('hex');
const GITHUB_KEYS = JSON.stringify({ public_keys: [{ key_identifier: GITHUB_KEY_ID, key: github.publicKey.export({ type: 'spki', format: 'pem' }), is_current: true }] });

const verify = (secret: string, r: { raw: string; headers: Record<string, unknown> }) =>
  new Webhook(secret).verify(r.raw, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as { id: string; type: string; data: { object: Record<string, unknown>; previous_attributes?: unknown } };

async function token(): Promise<string> {
  const key = await createKey('E2E Webhooks', 'all', ALL_SCOPES.join(','));
  const r = await http('POST', `${BASE}/api/v1/auth/token`, { body: { client_id: key.client_id, client_secret: key.client_secret, grant_type: 'client_credentials' } });
  expect(r.status).toBe(200);
  return (r.body as unknown as TokenPair).access_token;
}

beforeAll(async () => {
  if (STACK.external) return;
  platform = await startPlatform({
    label: 'webhooks',
    ports: PORTS,
    // A receiver on loopback (this spec's), and retries a second apart rather than minutes.
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '0,1s,1s,1s,1s', WEBHOOK_POLL_MS: '100', GITHUB_SECRET_SCANNING_KEYS: GITHUB_KEYS },
  });
  BASE = platform.baseUrl;
}, 180000);
afterAll(() => platform?.stop());

describe('webhooks through the one base URL', () => {
  local('an integration registers an endpoint and is sent, signed, every object it creates and the invoice it paid', async () => {
    const access = await token();
    const receiver = await startReceiver();
    try {
      const endpoint = await http('POST', `${BASE}/api/v1/webhook-endpoints`, { token: access, body: { url: receiver.url, enabled_events: ['*'], description: 'ERP' } });
      expect(endpoint.status).toBe(201);
      const secret = endpoint.body.secret as string;

      const client = await http('POST', `${BASE}/api/v1/clients`, { token: access, body: { name: 'Globex', currency: 'EUR' } });
      const product = await http('POST', `${BASE}/api/v1/products`, { token: access, body: { name: 'Widget', unit_price: 1000, currency: 'EUR' } });
      const invoice = await http('POST', `${BASE}/api/v1/invoices`, {
        token: access,
        body: { client_id: client.body.id, currency: 'EUR', line_items: [{ product_id: product.body.id, quantity: 2 }] },
      });
      expect(invoice.status).toBe(201);
      const paidAt = Date.now();
      await http('POST', `${BASE}/api/v1/payments`, { token: access, body: { invoice_id: invoice.body.id, amount: 500, currency: 'EUR' } });
      // Payments that reach the invoice service in one batch are one change of its balance (one
      // event): the second is sent once the first shows, so that each makes its own.
      for (let i = 0; i < 250; i++) {
        if ((await http('GET', `${BASE}/api/v1/invoices/${invoice.body.id}`, { token: access })).body.status === 'partially_paid') break;
        await new Promise((r) => setTimeout(r, 20));
      }
      await http('POST', `${BASE}/api/v1/payments`, { token: access, body: { invoice_id: invoice.body.id, amount: 1500, currency: 'EUR' } });
      await http('POST', `${BASE}/api/v1/expenses`, { token: access, body: { description: 'Taxi', amount: 2300, currency: 'EUR', incurred_on: '2026-11-20' } });

      await receiver.waitFor(() => receiver.events().some((e) => e.type === 'invoice.paid') && receiver.events().length >= 8);
      const paidDelivery = receiver.received.find((r) => (JSON.parse(r.body) as { type: string }).type === 'invoice.paid')!;
      console.log(`e2e: invoice.paid delivered ${paidDelivery.at - paidAt} ms after the first payment was created`);
      const events = receiver.events().map((e) => verify(secret, e));
      expect(events.map((e) => e.type).sort()).toEqual(
        ['client.created', 'product.created', 'invoice.created', 'payment.created', 'payment.created', 'expense.created', 'invoice.partially_paid', 'invoice.paid'].sort(),
      );
      const created = events.find((e) => e.type === 'invoice.created')!;
      expect(created.data.object).toEqual(invoice.body);
      const paid = events.find((e) => e.type === 'invoice.paid')!;
      expect(paid.data.object).toMatchObject({ id: invoice.body.id, amount_paid: 2000, amount_due: 0, status: 'paid' });
      expect(paid.data.previous_attributes).toEqual({ amount_paid: 500, status: 'partially_paid' });
      // What was delivered is what the events API answers, through the same base URL.
      expect((await http('GET', `${BASE}/api/v1/events/${paid.id}`, { token: access })).body).toEqual(paid);
      const listed = await http('GET', `${BASE}/api/v1/events?type=payment.created`, { token: access });
      expect((listed.body.data as unknown[]).length).toBe(2);
    } finally {
      await receiver.stop();
    }
  });

  local('a receiver down for a while gets every event once it is back (same webhook-id), and a secret roll keeps deliveries verifiable', async () => {
    const access = await token();
    const receiver = await startReceiver();
    try {
      const endpoint = await http('POST', `${BASE}/api/v1/webhook-endpoints`, { token: access, body: { url: receiver.url, enabled_events: ['client.created', 'expense.created'] } });
      await receiver.stop();
      const names = ['A', 'B', 'C'];
      for (const name of names) expect((await http('POST', `${BASE}/api/v1/clients`, { token: access, body: { name } })).status).toBe(201);
      await new Promise((r) => setTimeout(r, 1500));
      await receiver.start();
      await receiver.waitFor((all) => all.length >= 3);
      const events = receiver.events().map((e) => verify(endpoint.body.secret as string, e));
      expect(events.map((e) => e.data.object.name).sort()).toEqual(names);
      const attempts = await http('GET', `${BASE}/api/v1/webhook-endpoints/${endpoint.body.id}/attempts`, { token: access });
      expect((attempts.body.data as Array<{ outcome: string }>).some((a) => a.outcome === 'failed')).toBe(true);

      const rolled = await http('POST', `${BASE}/api/v1/webhook-endpoints/${endpoint.body.id}/roll-secret`, { token: access });
      expect(rolled.status).toBe(200);
      await http('POST', `${BASE}/api/v1/expenses`, { token: access, body: { description: 'Train', amount: 4200, currency: 'EUR', incurred_on: '2026-11-21' } });
      await receiver.waitFor((all) => all.length >= 4);
      const last = receiver.events().at(-1)!;
      expect(verify(rolled.body.secret as string, last).type).toBe('expense.created');
      expect(verify(endpoint.body.secret as string, last).type).toBe('expense.created');
    } finally {
      await receiver.stop();
    }
  });

  local("a key's life is told to its organization's endpoints: expiring, secret rolled, revoked, exposed, each with the key as Settings shows it", async () => {
    const user = await DashboardUser.signUp(BASE, 'E2E Webhook keys');
    const admin = await user.createKey({ name: 'Webhooks admin', scopes: ['read:webhook_endpoints', 'write:webhook_endpoints'] });
    const exchanged = await http('POST', `${BASE}/api/v1/auth/token`, { body: { client_id: admin.client_id, client_secret: admin.client_secret, grant_type: 'client_credentials' } });
    const access = (exchanged.body as unknown as TokenPair).access_token;
    const receiver = await startReceiver();
    try {
      const types = ['api_key.expiring', 'api_key.secret_rolled', 'api_key.revoked', 'api_key.exposed'];
      const endpoint = await http('POST', `${BASE}/api/v1/webhook-endpoints`, { token: access, body: { url: receiver.url, enabled_events: types } });
      expect(endpoint.status).toBe(201);

      // A key that expires within seven days is announced at once; then rolled, then revoked.
      const erp = await user.createKey({ name: 'ERP', scopes: ['read:clients'], expires_at: new Date(Date.now() + 3 * 86_400_000).toISOString() });
      await receiver.waitFor((all) => all.length >= 1);
      expect((await user.call('POST', `/api/v1/settings/api-keys/${erp.id}/roll`, { previous_secret_expires_in: 0 })).status).toBe(200);
      await receiver.waitFor((all) => all.length >= 2);
      const revoked = await user.call('POST', `/api/v1/settings/api-keys/${erp.id}/revoke`);
      expect(revoked.status).toBe(200);
      await receiver.waitFor((all) => all.length >= 3);

      // Another key's secret reported public by GitHub: revoked for it, told as exposed and revoked.
      const leaked = await user.createKey({ name: 'Leaked', scopes: ['read:clients'] });
      const report = JSON.stringify([{ token: leaked.client_secret, type: 'invoicing_secret_key', url: 'https://github.com/acme/leak/blob/main/.env', source: 'content' }]);
      const answer = await http('POST', `${BASE}/api/v1/secret-scanning/github`, {
        body: JSON.parse(report),
        headers: {
          'github-public-key-identifier': GITHUB_KEY_ID,
          'github-public-key-signature': sign('sha256', Buffer.from(report), { key: github.privateKey, dsaEncoding: 'der' }).toString('base64'),
        },
      });
      expect(answer.status).toBe(200);

      await receiver.waitFor((all) => all.length >= 5);
      await new Promise((r) => setTimeout(r, 500));
      const events = receiver.events().map((e) => verify(endpoint.body.secret as string, e));
      const told = events.map((e) => `${e.type} ${(e.data.object as { name: string }).name}`);
      expect(told.slice(0, 3)).toEqual(['api_key.expiring ERP', 'api_key.secret_rolled ERP', 'api_key.revoked ERP']);
      expect(told.slice(3).sort()).toEqual(['api_key.exposed Leaked', 'api_key.revoked Leaked']);
      // The object as the settings API shows the key now (its status, its exposure), never a secret.
      const listed = (await user.call('GET', '/api/v1/settings/api-keys?status=revoked')).body.data as Array<Record<string, unknown>>;
      expect(events[2].data.object).toEqual(listed.find((k) => k.id === erp.id));
      expect(events.find((e) => e.type === 'api_key.exposed')!.data.object).toMatchObject({
        id: leaked.id,
        status: 'revoked',
        exposed_url: 'https://github.com/acme/leak/blob/main/.env',
      });
      expect(events[1].data.object).toMatchObject({ id: erp.id, status: 'active' });
      for (const e of events) expect(JSON.stringify(e)).not.toMatch(/client_secret|sk_live_/);
      // Only the organization's own endpoints: the events API lists them for the webhook scope.
      const listedEvents = await http('GET', `${BASE}/api/v1/events?type=api_key.revoked`, { token: access });
      expect((listedEvents.body.data as unknown[]).length).toBe(2);
    } finally {
      await receiver.stop();
    }
  });

  local('refuses an endpoint without the scope, and another organization cannot see it', async () => {
    const [a, b] = [await token(), await token()];
    const endpoint = await http('POST', `${BASE}/api/v1/webhook-endpoints`, { token: a, body: { url: 'http://127.0.0.1:9/x', enabled_events: ['*'] } });
    expect(endpoint.status).toBe(201);
    expect((await http('GET', `${BASE}/api/v1/webhook-endpoints/${endpoint.body.id}`, { token: b })).status).toBe(404);
    expect((await http('DELETE', `${BASE}/api/v1/webhook-endpoints/${endpoint.body.id}`, { token: b })).status).toBe(404);
    expect((await http('GET', `${BASE}/api/v1/webhook-endpoints`, { token: b })).body.data).toEqual([]);
    expect((await http('DELETE', `${BASE}/api/v1/webhook-endpoints/${endpoint.body.id}`, { token: a })).status).toBe(200);
  });
});

import { REVOCATION_EVENT_SCHEMAS } from '@invoicing/contracts';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { claimsOf, http, TokenPair } from './support/api';
import { createKey as newKey, kafkaBroker, Platform, STACK, itWhen, startPlatform } from './support/platform';
import { ServiceProcess, sleep, startService } from './support/processes';
import { readRevocations } from './support/topic-reader';

const AUTH_PORT = 4101;
const INVOICE_PORT = 4102;
const LATE_INVOICE_PORT = 4103;
const GATEWAY_PORT = 4104;

/** Directly on the services' own ports here; through the gateway of a running stack (E2E_BASE_URL). */
let platform: Platform;
let auth: { baseUrl: string };
let invoices: { baseUrl: string };
const started: ServiceProcess[] = [];

const createKey = () => newKey('E2E Ltd', 'ERP integration', 'read:invoices,write:invoices');

async function exchange(key: { client_id: string; client_secret: string }): Promise<TokenPair> {
  const r = await http('POST', `${auth.baseUrl}/api/v1/auth/token`, {
    body: { client_id: key.client_id, client_secret: key.client_secret, grant_type: 'client_credentials' },
  });
  expect(r.status).toBe(200);
  return r.body as unknown as TokenPair;
}

async function refresh(refreshToken: string) {
  return http('POST', `${auth.baseUrl}/api/v1/auth/refresh`, { body: { refresh_token: refreshToken } });
}

const listInvoices = (service: { baseUrl: string }, token: string) => http('GET', `${service.baseUrl}/api/v1/invoices`, { token });

/** Milliseconds until every token is refused by the service (polling every 5 ms). */
async function timeUntilRefused(service: { baseUrl: string }, tokens: string[], timeoutMs: number): Promise<number> {
  const started = Date.now();
  for (;;) {
    const statuses = await Promise.all(tokens.map(async (t) => (await listInvoices(service, t)).status));
    if (statuses.every((s) => s === 401)) return Date.now() - started;
    if (Date.now() - started > timeoutMs) throw new Error(`tokens still accepted after ${timeoutMs} ms: ${statuses.join(',')}`);
    await sleep(5);
  }
}

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
const validateSessionsRevoked = ajv.compile(REVOCATION_EVENT_SCHEMAS['invoicing.auth.sessions_revoked.v1']);

beforeAll(async () => {
  // No gateway is started here (its port is only named); a running stack is reached through its own.
  platform = await startPlatform({
    label: 'lifecycle',
    ports: { 'auth-service': AUTH_PORT, 'invoice-service': INVOICE_PORT, gateway: GATEWAY_PORT },
    start: ['auth-service', 'invoice-service'],
  });
  auth = { baseUrl: platform.url('auth-service') };
  invoices = { baseUrl: platform.url('invoice-service') };
});

afterAll(async () => {
  if (STACK.kafkaCtl || !STACK.external) await kafkaBroker('start');
  await Promise.all(started.map((s) => s.stop()));
  await platform?.stop();
});

describe('the token lifecycle, end to end', () => {
  it('revokes every unexpired access token of a key within a second of a refresh-token reuse', async () => {
    const key = await createKey();

    // Exchange, use the token, refresh; a second session exists beside the first.
    const first = await exchange(key);
    const other = await exchange(key);
    const listed = await listInvoices(invoices, first.access_token);
    expect(listed.status).toBe(200);
    expect(listed.body).toMatchObject({ object: 'list', has_more: false });
    // The key carries write:invoices: a create reaches validation (the client reference is checked
    // against the client service, which this suite does not run: resources.e2e-spec.ts covers it).
    const create = await http('POST', `${invoices.baseUrl}/api/v1/invoices`, { token: first.access_token, body: { currency: 'EUR' } });
    expect(create.status).toBe(422);
    const rotated = await refresh(first.refresh_token);
    expect(rotated.status).toBe(200);
    const second = rotated.body as unknown as TokenPair;
    const liveTokens = [first.access_token, second.access_token, other.access_token];
    for (const t of liveTokens) expect((await listInvoices(invoices, t)).status).toBe(200);

    // The spent refresh token comes back: reuse.
    const before = Date.now();
    const reuse = await refresh(first.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    const latency = await timeUntilRefused(invoices, liveTokens, 5000);
    console.log(`e2e: revocation reached the invoice service ${latency} ms after the reuse response`);
    expect(latency).toBeLessThan(1000);
    const refused = await listInvoices(invoices, second.access_token);
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"');

    // Neither session refreshes any more; a fresh exchange with the same key works.
    expect((await refresh(second.refresh_token)).status).toBe(400);
    expect((await refresh(other.refresh_token)).status).toBe(400);
    const fresh = await exchange(key);
    expect((await listInvoices(invoices, fresh.access_token)).status).toBe(200);

    // The event on the topic matches its published JSON Schema and names both sessions.
    const events = await readRevocations(key.id, before - 1000);
    expect(events.length).toBeGreaterThanOrEqual(1);
    const event = events[0] as { type: string; subject: string; data: { session_ids: string[] } };
    expect(validateSessionsRevoked(event)).toBe(true);
    expect(event.type).toBe('invoicing.auth.sessions_revoked.v1');
    expect(event.subject).toBe(key.id);
    expect([...event.data.session_ids].sort()).toEqual([claimsOf(first.access_token).sid, claimsOf(other.access_token).sid].sort());
  });

  itWhen(!STACK.external || !!STACK.kafkaCtl, 'stopping the broker needs E2E_KAFKA_CTL')('delivers a revocation made while Kafka is down once Kafka is back', async () => {
    const key = await createKey();
    const pair = await exchange(key);
    const rotated = await refresh(pair.refresh_token);
    expect(rotated.status).toBe(200);
    const tokens = [pair.access_token, (rotated.body as unknown as TokenPair).access_token];

    await kafkaBroker('stop');
    const before = Date.now();
    // Token issuance and reuse detection do not depend on Kafka.
    const reuse = await refresh(pair.refresh_token);
    expect(reuse.status).toBe(400);
    expect(reuse.body.error).toBe('invalid_grant');
    // Kafka is down: the invoice service cannot know yet, so the tokens still work there.
    await sleep(1500);
    for (const t of tokens) expect((await listInvoices(invoices, t)).status).toBe(200);

    await kafkaBroker('start');
    const latency = await timeUntilRefused(invoices, tokens, 60000);
    console.log(`e2e: revocation made during the Kafka outage applied ${latency} ms after the broker was back`);
    const events = await readRevocations(key.id, before - 1000);
    expect(events.length).toBeGreaterThanOrEqual(1);
    expect(validateSessionsRevoked(events[0])).toBe(true);
  });

  itWhen(!STACK.external, 'it starts an invoice-service instance of its own')('a resource-service instance started after a revocation refuses the revoked tokens from its first ready request', async () => {
    const key = await createKey();
    const pair = await exchange(key);
    const rotated = await refresh(pair.refresh_token);
    expect(rotated.status).toBe(200);
    expect((await refresh(pair.refresh_token)).status).toBe(400);
    await timeUntilRefused(invoices, [pair.access_token], 5000);

    const late = startService('invoice-service', LATE_INVOICE_PORT, 'invoice-service-late');
    started.push(late);
    const readyAfter = await late.waitReady();
    const first = await listInvoices(late, pair.access_token);
    expect(first.status).toBe(401);
    expect((await listInvoices(late, (rotated.body as unknown as TokenPair).access_token)).status).toBe(401);
    // And it does accept an unrevoked token.
    expect((await listInvoices(late, (await exchange(key)).access_token)).status).toBe(200);
    console.log(`e2e: late instance ready after ${readyAfter} ms, first request refused the revoked token`);
  });
});

import { AUDIT_TOPIC, DOMAIN_TOPIC, ORGANIZATION_PROFILE_CHANGED_V1, OrganizationProfileChangedV1, parsePublicId, validateDomainTopicEvent } from '@invoicing/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { randomUUID } from 'node:crypto';
import type { DataSource } from 'typeorm';
import { BrowserLikeClient } from '../testing/browser-like-client';
import { AuthTestApp, startAuthTestApp } from '../testing/auth-test-app';

/**
 * Settings → Organization against the real Postgres, Redis and Kafka (ADR 0039): the profile read
 * and changed with a settings session, its checks, organizations kept apart, concurrent changes
 * applied one after the other, each with its audit record and its outbox event, a change that
 * changes nothing writing nothing, and no whole IBAN in the audit log. Every answer is checked
 * against the OpenAPI document the service serves. The test process plays the gateway.
 */
let app: AuthTestApp;
let documented: (answer: Answer) => void;

const PATH = '/api/v1/settings/organization';
const PASSWORD = 'correct horse battery staple';
const IBAN = 'DE89370400440532013000';
const OTHER_IBAN = 'FR1420041010050500013M02606';

interface Answer {
  method: string;
  status: number;
  type: string;
  body: unknown;
}

beforeAll(async () => {
  app = await startAuthTestApp({ TRUSTED_PROXIES: '127.0.0.1' });
  const doc = (await (await fetch(`${app.baseUrl}/api/v1/openapi.json`)).json()) as Record<string, unknown>;
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv);
  ajv.addSchema({ ...doc, $id: 'openapi.json' });
  const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
  documented = (a: Answer) => {
    const ref = `openapi.json#/${pointer('paths', PATH, a.method.toLowerCase(), 'responses', String(a.status), 'content', a.type, 'schema')}`;
    const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
    const call = `${a.method} ${PATH} ${a.status}`;
    expect({ call, errors: validate(a.body) ? null : validate.errors }).toEqual({ call, errors: null });
  };
});

afterAll(async () => {
  await app.close();
});

const db = () => app.service.app.get<DataSource>(getDataSourceToken());

interface Profile {
  object: 'organization_profile';
  organization_id: string;
  legal_name: string | null;
  address: Record<string, string | null> | null;
  vat_id: string | null;
  email: string | null;
  iban: string | null;
  bic: string | null;
  payment_terms: string | null;
  version: number;
  updated_at: string | null;
}

async function signedUp(): Promise<{ client: BrowserLikeClient; orgId: string }> {
  const client = new BrowserLikeClient(app.baseUrl);
  await client.csrf();
  const r = await client.request('POST', '/api/v1/account/signup', { organization_name: 'Acme', email: `u-${randomUUID().slice(0, 8)}@example.com`, password: PASSWORD });
  expect(r.status).toBe(201);
  return { client, orgId: (r.body as { organization: { id: string } }).organization.id };
}

/** A call of the profile's path, its answer checked against the OpenAPI document. */
async function call(client: BrowserLikeClient, method: 'GET' | 'PATCH', body?: unknown, options?: { csrf?: string | null; headers?: Record<string, string> }) {
  const r = await client.request(method, PATH, body, options);
  documented({ method, status: r.status, type: (r.headers.get('content-type') ?? '').split(';')[0], body: r.body });
  return r;
}

const read = async (client: BrowserLikeClient) => (await call(client, 'GET')).body as unknown as Profile;

/** The organization's profile change records, oldest first. */
async function profileRecords(client: BrowserLikeClient): Promise<Array<{ actor: { kind: string; id: string | null }; data: Record<string, unknown> }>> {
  const r = await client.request('GET', '/api/v1/settings/audit-events?type=organization.profile_updated&limit=100');
  expect(r.status).toBe(200);
  return [...(r.body.data as Array<{ actor: { kind: string; id: string | null }; data: Record<string, unknown> }>)].reverse();
}

/** The organization's profile change events in the outbox, in version order. */
async function profileEvents(orgId: string): Promise<OrganizationProfileChangedV1[]> {
  const rows: Array<{ payload: OrganizationProfileChangedV1 }> = await db().query(
    `SELECT payload FROM auth.outbox WHERE topic = $1 AND message_key = $2 ORDER BY (payload->'data'->>'version')::int`,
    [DOMAIN_TOPIC, orgId],
  );
  return rows.map((r) => r.payload);
}

describe('GET /api/v1/settings/organization', () => {
  it('requires a session', async () => {
    const r = await call(new BrowserLikeClient(app.baseUrl), 'GET');
    expect(r.status).toBe(401);
    expect(r.headers.get('content-type')).toContain('application/problem+json');
  });

  it('answers every field null, version 0 and updated_at null for an organization that never set its profile, never cached', async () => {
    const { client, orgId } = await signedUp();
    const r = await call(client, 'GET');
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toEqual({
      object: 'organization_profile',
      organization_id: orgId,
      legal_name: null,
      address: null,
      vat_id: null,
      email: null,
      iban: null,
      bic: null,
      payment_terms: null,
      version: 0,
      updated_at: null,
    });
  });
});

describe('PATCH /api/v1/settings/organization', () => {
  it('changes the fields sent, normalized, and GET answers the same; version 1, updated_at set', async () => {
    const { client, orgId } = await signedUp();
    const r = await call(client, 'PATCH', {
      legal_name: ' Acme SARL ',
      address: { line1: '1 rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR' },
      vat_id: 'fr 40 303 265 045',
      email: 'billing@acme.example',
      iban: 'de89 3704 0044 0532 0130 00',
      bic: 'deutdeff',
      payment_terms: 'Payable within 30 days.\nLate payment: 40 EUR.',
    });
    expect(r.status).toBe(200);
    expect(r.headers.get('cache-control')).toBe('no-store');
    expect(r.body).toEqual({
      object: 'organization_profile',
      organization_id: orgId,
      legal_name: 'Acme SARL',
      address: { line1: '1 rue de la Paix', line2: null, city: 'Paris', postal_code: '75002', region: null, country: 'FR' },
      vat_id: 'FR40303265045',
      email: 'billing@acme.example',
      iban: IBAN,
      bic: 'DEUTDEFF',
      payment_terms: 'Payable within 30 days.\nLate payment: 40 EUR.',
      version: 1,
      updated_at: expect.stringMatching(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/),
    });
    expect(await read(client)).toEqual(r.body);
  });

  it('changes only the fields present; null clears one; an address is replaced whole', async () => {
    const { client } = await signedUp();
    await call(client, 'PATCH', { legal_name: 'Acme', bic: 'DEUTDEFF', address: { line1: '1 Main St', line2: 'Suite 5', city: 'Springfield', country: 'US' } });
    const r = await call(client, 'PATCH', { bic: null, address: { line1: '2 Main St', city: 'Springfield', country: 'US' } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ legal_name: 'Acme', bic: null, address: { line1: '2 Main St', line2: null, city: 'Springfield', postal_code: null, region: null, country: 'US' }, version: 2 });
    const cleared = await call(client, 'PATCH', { address: null, legal_name: null });
    expect(cleared.body).toMatchObject({ legal_name: null, address: null, bic: null, version: 3 });
    expect(await read(client)).toEqual(cleared.body);
  });

  it('refuses an invalid IBAN or BIC, or a field the profile has not, naming each field, and changes nothing', async () => {
    const { client, orgId } = await signedUp();
    await call(client, 'PATCH', { legal_name: 'Acme', iban: IBAN });
    const before = await read(client);
    const records = (await profileRecords(client)).length;

    const bad = await call(client, 'PATCH', { legal_name: 'Changed', iban: 'DE89 3704 0044 0532 0130 01', bic: 'DEUTDE' });
    expect(bad.status).toBe(422);
    expect(bad.headers.get('content-type')).toContain('application/problem+json');
    expect((bad.body.errors as Array<{ field: string; code: string }>).map((e) => [e.field, e.code])).toEqual([
      ['iban', 'invalid_checksum'],
      ['bic', 'invalid_format'],
    ]);
    const wrongLength = await call(client, 'PATCH', { iban: 'DE86 3704 0044 0532 0130' });
    expect(wrongLength.body.errors).toEqual([expect.objectContaining({ field: 'iban', code: 'invalid_length' })]);
    const unknown = await call(client, 'PATCH', { legal_name: 'Changed', logo: 'https://example.com/logo.png' });
    expect(unknown.status).toBe(422);
    expect(unknown.body.errors).toEqual([expect.objectContaining({ field: 'logo', code: 'unknown_field' })]);

    expect(await read(client)).toEqual(before);
    expect(await profileRecords(client)).toHaveLength(records);
    expect(await profileEvents(orgId)).toHaveLength(1);
  });

  it('answers 400 to a body that is not JSON, and changes nothing', async () => {
    const { client } = await signedUp();
    const token = await client.csrf();
    const response = await fetch(`${app.baseUrl}${PATH}`, {
      method: 'PATCH',
      headers: { 'content-type': 'application/json', cookie: `${client.cookiePair('session')}; ${client.cookiePair('csrf_nonce')}`, 'x-csrf-token': token },
      body: '{"legal_name": "Acme"',
    });
    const body = (await response.json()) as unknown;
    documented({ method: 'PATCH', status: response.status, type: (response.headers.get('content-type') ?? '').split(';')[0], body });
    expect(response.status).toBe(400);
    expect((await read(client)).version).toBe(0);
  });

  it('refuses a change without the CSRF token, or from another origin, with 403, and changes nothing', async () => {
    const { client } = await signedUp();
    const missing = await call(client, 'PATCH', { legal_name: 'Forged' }, { csrf: null });
    expect(missing.status).toBe(403);
    expect((await call(client, 'PATCH', { legal_name: 'Forged' }, { csrf: 'forged' })).status).toBe(403);
    expect((await call(client, 'PATCH', { legal_name: 'Forged' }, { headers: { origin: 'https://evil.example' } })).status).toBe(403);
    expect((await call(client, 'PATCH', { legal_name: 'Forged' }, { headers: { 'sec-fetch-site': 'cross-site' } })).status).toBe(403);
    expect(await read(client)).toMatchObject({ legal_name: null, version: 0 });
    // Without a session, 401 before anything else.
    expect((await call(new BrowserLikeClient(app.baseUrl), 'PATCH', { legal_name: 'Forged' })).status).toBe(401);
  });

  it('keeps organizations apart: another organization\'s session never sees or changes this profile', async () => {
    const a = await signedUp();
    const b = await signedUp();
    await call(a.client, 'PATCH', { legal_name: 'Acme', iban: IBAN });
    const seenByB = await read(b.client);
    expect(seenByB).toMatchObject({ organization_id: b.orgId, legal_name: null, iban: null, version: 0 });
    await call(b.client, 'PATCH', { legal_name: 'Globex' });
    expect(await read(a.client)).toMatchObject({ organization_id: a.orgId, legal_name: 'Acme', iban: IBAN, version: 1 });
    expect(await read(b.client)).toMatchObject({ organization_id: b.orgId, legal_name: 'Globex', iban: null, version: 1 });
    expect((await profileRecords(b.client)).map((r) => r.data.changed_fields)).toEqual([['legal_name']]);
  });

  it('applies 5 concurrent changes one after the other, each whole: version 5, 5 audit records, 5 events with versions 1 to 5', async () => {
    const { client, orgId } = await signedUp();
    const answers = await Promise.all([1, 2, 3, 4, 5].map((i) => call(client, 'PATCH', { legal_name: `Name ${i}`, payment_terms: `Terms ${i}` })));
    expect(answers.map((r) => r.status)).toEqual([200, 200, 200, 200, 200]);
    expect(answers.map((r) => (r.body as unknown as Profile).version).sort()).toEqual([1, 2, 3, 4, 5]);
    // Each answer and each event is one request's pair, never a mix of two.
    for (const r of answers) {
      const { legal_name, payment_terms } = r.body as unknown as Profile;
      expect(payment_terms).toBe(String(legal_name).replace('Name', 'Terms'));
    }
    const final = await read(client);
    expect(final.version).toBe(5);
    expect(final.payment_terms).toBe(String(final.legal_name).replace('Name', 'Terms'));

    const records = await profileRecords(client);
    expect(records.map((r) => r.data.version)).toEqual([1, 2, 3, 4, 5]);
    expect(records.map((r) => r.data.changed_fields)).toEqual(Array(5).fill(['legal_name', 'payment_terms']));
    const events = await profileEvents(orgId);
    expect(events.map((e) => e.data.version)).toEqual([1, 2, 3, 4, 5]);
    for (const e of events) expect(e.data.profile.payment_terms).toBe(String(e.data.profile.legal_name).replace('Name', 'Terms'));
    expect(events[4].data.profile).toEqual(final);
  });

  it('writes one outbox event per change on the domain topic, keyed by the organization, with the whole profile and its version, valid against its schema', async () => {
    const { client, orgId } = await signedUp();
    const first = (await call(client, 'PATCH', { legal_name: 'Acme', iban: IBAN })).body as unknown as Profile;
    const second = (await call(client, 'PATCH', { bic: 'DEUTDEFF' })).body as unknown as Profile;
    const rows: Array<{ id: string; topic: string; message_key: string; payload: unknown }> = await db().query(
      `SELECT id, topic, message_key, payload FROM auth.outbox WHERE topic = $1 AND message_key = $2 ORDER BY (payload->'data'->>'version')::int`,
      [DOMAIN_TOPIC, orgId],
    );
    expect(rows).toHaveLength(2);
    const events = rows.map((row) => {
      const checked = validateDomainTopicEvent(row.payload);
      expect(checked.ok).toBe(true);
      const event = row.payload as OrganizationProfileChangedV1;
      expect(row.id).toBe(event.id);
      return event;
    });
    expect(events[0]).toMatchObject({ type: ORGANIZATION_PROFILE_CHANGED_V1, subject: orgId, time: first.updated_at, data: { organization_id: orgId, version: 1, changed_fields: ['legal_name', 'iban'], profile: first } });
    expect(events[1]).toMatchObject({ type: ORGANIZATION_PROFILE_CHANGED_V1, subject: orgId, time: second.updated_at, data: { organization_id: orgId, version: 2, changed_fields: ['bic'], profile: second } });
  });

  it('writes nothing for a change that changes nothing, and answers the profile as it is', async () => {
    const { client, orgId } = await signedUp();
    const uuid = parsePublicId('org', orgId);
    // On an organization without a profile: clearing what is empty creates no row.
    const none = await call(client, 'PATCH', { legal_name: null, iban: null });
    expect(none.status).toBe(200);
    expect(none.body).toMatchObject({ version: 0, updated_at: null });
    expect(await db().query(`SELECT 1 FROM auth.organization_profiles WHERE organization_id = $1`, [uuid])).toHaveLength(0);

    const set = (await call(client, 'PATCH', { legal_name: 'Acme', iban: IBAN, address: { line1: '1 Main St', city: 'Springfield', country: 'US' } })).body;
    const auditRows = async () => (await db().query(`SELECT count(*)::int AS n FROM auth.audit_events WHERE organization_id = $1`, [uuid]))[0].n as number;
    const outboxRows = async () => (await db().query(`SELECT count(*)::int AS n FROM auth.outbox WHERE message_key = $1`, [orgId]))[0].n as number;
    const [records, messages] = [await auditRows(), await outboxRows()];
    for (const same of [{}, { legal_name: 'Acme' }, { legal_name: ' Acme ', iban: 'de89 3704 0044 0532 0130 00' }, { address: { country: 'US', city: 'Springfield', line1: '1 Main St' } }, { bic: null }]) {
      const r = await call(client, 'PATCH', same);
      expect({ same, status: r.status, body: r.body }).toEqual({ same, status: 200, body: set });
    }
    expect(await read(client)).toEqual(set);
    expect(await auditRows()).toBe(records);
    expect(await outboxRows()).toBe(messages);
  });

  it('never records a whole IBAN in the audit log or its stream: only the last 4 characters, before and after', async () => {
    const { client, orgId } = await signedUp();
    await call(client, 'PATCH', { iban: IBAN });
    await call(client, 'PATCH', { iban: OTHER_IBAN, legal_name: 'Acme' });
    await call(client, 'PATCH', { iban: null });
    const records = await profileRecords(client);
    expect(records.map((r) => r.data)).toEqual([
      { changed_fields: ['iban'], version: 1, iban_last4: '3000', previous_iban_last4: null },
      { changed_fields: ['legal_name', 'iban'], version: 2, iban_last4: '2606', previous_iban_last4: '3000' },
      { changed_fields: ['iban'], version: 3, iban_last4: null, previous_iban_last4: '2606' },
    ]);
    expect(records.map((r) => r.actor.kind)).toEqual(['user', 'user', 'user']);
    const uuid = parsePublicId('org', orgId);
    const stored = JSON.stringify(await db().query(`SELECT data FROM auth.audit_events WHERE organization_id = $1`, [uuid]));
    const streamed = JSON.stringify(await db().query(`SELECT payload FROM auth.outbox WHERE topic = $1 AND message_key = $2`, [AUDIT_TOPIC, orgId]));
    for (const text of [stored, streamed]) {
      for (const iban of [IBAN, OTHER_IBAN]) expect(text).not.toContain(iban.slice(0, -4));
    }
  });

  it('keeps the profile from the runtime role\'s DELETE (least privilege)', async () => {
    const { client, orgId } = await signedUp();
    await call(client, 'PATCH', { legal_name: 'Acme' });
    await expect(db().query(`DELETE FROM auth.organization_profiles WHERE organization_id = $1`, [parsePublicId('org', orgId)])).rejects.toThrow(/permission denied/);
    expect((await read(client)).legal_name).toBe('Acme');
  });
});

/* Shared integration suite: docs/api.md sections 7 and 8 for one resource service. Jest globals. */
import { ownerOfKind, parsePublicId, referrersOfKind, RESOURCES, serviceOfResource } from '@invoicing/contracts';
import { getDataSourceToken } from '@nestjs/typeorm';
import { createSigner } from 'fast-jwt';
import type { DataSource } from 'typeorm';
import { idempotencyLockKey, IdempotencyStore } from '../idempotency/idempotency';
import { IdempotencyPurger } from '../idempotency/idempotency-purger';
import { DEV_SERVICE_TOKEN_KEYS, ownerUrlVariable } from '../bootstrap/resource-config';
import { parseKeyRing } from '@invoicing/auth-guard';
import { ServiceCredentials } from '../references/service-credential';
import type { ResourceServiceDefinition } from '../bootstrap/resource-service';
import { OwnerStub, startOwnerStub } from './owner-stub';
import { call, HttpAnswer, ResourceTestApp, startResourceTestApp } from './resource-test-app';

export interface ResourceContractOptions {
  definition: ResourceServiceDefinition;
  /** A valid create body for an organization (may arrange references first). */
  validBody(app: ResourceTestApp, organizationPublicId: string, n: number): Promise<Record<string, unknown>>;
  /** A body that fails validation, and the fields the 422 must name. */
  invalid: { body: Record<string, unknown>; fields: string[] };
}

const withoutRequestId = (a: HttpAnswer) => ({ ...a.body, request_id: undefined });

export function describeResourceContract(options: ResourceContractOptions): { app: () => ResourceTestApp; owner: () => OwnerStub } {
  const resource = options.definition.resource.resource;
  const prefix = options.definition.resource.idPrefix;
  let app: ResourceTestApp;
  let owner: OwnerStub;
  const url = (path = '') => `${app.baseUrl}/api/v1/${resource}${path}`;

  async function create(organizationPublicId: string, n = 0, headers: Record<string, string> = {}) {
    const body = await options.validBody(app, organizationPublicId, n);
    return call('POST', url(), { token: app.token({ organizationPublicId }), body, headers });
  }

  beforeAll(async () => {
    // Owners of referenced objects are asked when the read model lacks an object: a stub here.
    owner = await startOwnerStub();
    const env = Object.fromEntries((options.definition.references ?? []).map((kind) => [ownerUrlVariable(kind), owner.url]));
    app = await startResourceTestApp(options.definition, env);
  });
  afterAll(async () => {
    await app.close();
    await owner.close();
  });

  describe(`${resource}: docs/api.md sections 7 and 8`, () => {
    it('creates with 201, a Location header and the prefixed object, and reads it back', async () => {
      const org = app.newOrganizationPublicId();
      const created = await create(org);
      expect(created.status).toBe(201);
      expect(created.body.id).toMatch(new RegExp(`^${prefix}_[0-9a-f]{32}$`));
      expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      expect(created.headers.get('location')).toBe(`/api/v1/${resource}/${created.body.id}`);
      const read = await call('GET', url(`/${created.body.id}`), { token: app.token({ organizationPublicId: org }) });
      expect(read.status).toBe(200);
      expect(read.body).toEqual(created.body);
    });

    it('lists newest first and pages through every object exactly once', async () => {
      const org = app.newOrganizationPublicId();
      const ids: string[] = [];
      for (let i = 0; i < 23; i++) ids.push((await create(org, i)).body.id as string);
      const token = app.token({ organizationPublicId: org });
      const seen: string[] = [];
      let after: string | undefined;
      let pages = 0;
      for (;;) {
        const page = await call('GET', url(`?limit=5${after ? `&starting_after=${after}` : ''}`), { token });
        expect(page.status).toBe(200);
        expect(page.body.object).toBe('list');
        const data = page.body.data as Array<{ id: string }>;
        seen.push(...data.map((d) => d.id));
        pages += 1;
        if (!page.body.has_more) break;
        after = data[data.length - 1].id;
      }
      expect(pages).toBe(5);
      expect(seen).toEqual([...ids].reverse());
      const firstDefault = await call('GET', url(), { token });
      expect((firstDefault.body.data as unknown[]).length).toBe(20);
      expect(firstDefault.body.has_more).toBe(true);
    });

    it('filters by created_at: gte and lte include the boundary object, gt and lt exclude it, ANDed with paging and the organization', async () => {
      const org = app.newOrganizationPublicId();
      const token = app.token({ organizationPublicId: org });
      const objects: Array<{ id: string; created_at: string }> = [];
      let stranger = '';
      for (let i = 0; i < 3; i++) {
        objects.push((await create(org, i)).body as { id: string; created_at: string });
        // Another organization's object between two of ours; and a distinct millisecond for each.
        if (i === 1) stranger = String((await create(app.newOrganizationPublicId(), 9)).body.id);
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
      const [a, b, c] = objects;
      const ids = async (query: Record<string, string>) => {
        const r = await call('GET', url(`?${new URLSearchParams(query).toString()}`), { token });
        expect({ query, status: r.status }).toEqual({ query, status: 200 });
        return (r.body.data as Array<{ id: string }>).map((d) => d.id);
      };
      expect(await ids({ 'created[gte]': b.created_at })).toEqual([c.id, b.id]);
      expect(await ids({ 'created[gt]': b.created_at })).toEqual([c.id]);
      expect(await ids({ 'created[lte]': b.created_at })).toEqual([b.id, a.id]);
      expect(await ids({ 'created[lt]': b.created_at })).toEqual([a.id]);
      expect(await ids({ 'created[gt]': a.created_at, 'created[lt]': c.created_at })).toEqual([b.id]);
      expect(await ids({ 'created[gte]': a.created_at, limit: '1', starting_after: c.id })).toEqual([b.id]);
      expect(await ids({ 'created[gte]': '1900-01-01T00:00:00Z' })).not.toContain(stranger);
      const bad = await call('GET', url('?created%5Bgte%5D=2026-01-01'), { token });
      expect({ status: bad.status, errors: bad.body.errors }).toEqual({ status: 400, errors: [expect.objectContaining({ field: 'created[gte]', code: 'invalid_value' })] });
    });

    it('refuses bad list parameters with 400', async () => {
      const token = app.token();
      for (const q of ['limit=0', 'limit=101', 'limit=abc', 'starting_after=nope', 'sort=asc']) {
        const r = await call('GET', url(`?${q}`), { token });
        expect({ q, status: r.status, type: r.headers.get('content-type') }).toEqual({
          q,
          status: 400,
          type: 'application/problem+json; charset=utf-8',
        });
      }
    });

    it("answers another organization's id exactly like an absent or malformed one, and never lists it", async () => {
      const owner = app.newOrganizationPublicId();
      const created = await create(owner);
      const stranger = app.token({ organizationPublicId: app.newOrganizationPublicId() });
      const foreign = await call('GET', url(`/${created.body.id}`), { token: stranger });
      const absent = await call('GET', url(`/${prefix}_${'0'.repeat(32)}`), { token: stranger });
      const malformed = await call('GET', url('/not-an-id'), { token: stranger });
      for (const r of [foreign, absent, malformed]) expect(r.status).toBe(404);
      expect(withoutRequestId(foreign)).toEqual(withoutRequestId(absent));
      expect(withoutRequestId(foreign)).toEqual(withoutRequestId(malformed));
      const list = await call('GET', url(), { token: stranger });
      expect(list.body.data).toEqual([]);
    });

    it('answers concurrent gets of two organizations (batched when they arrive together) each with its own object only', async () => {
      const [orgA, orgB] = [app.newOrganizationPublicId(), app.newOrganizationPublicId()];
      const [a, b] = [(await create(orgA)).body, (await create(orgB)).body];
      const [tokenA, tokenB] = [app.token({ organizationPublicId: orgA }), app.token({ organizationPublicId: orgB })];
      // Sent together so they arrive in the same turn of the service's event loop: own, foreign, repeated.
      const asks: Array<[string, string, unknown]> = [
        [tokenA, a.id as string, a],
        [tokenB, a.id as string, null],
        [tokenB, b.id as string, b],
        [tokenA, b.id as string, null],
        [tokenA, a.id as string, a],
        [tokenB, b.id as string, b],
      ];
      for (let round = 0; round < 5; round++) {
        const answers = await Promise.all(asks.map(([token, id]) => call('GET', url(`/${id}`), { token })));
        answers.forEach((r, i) => {
          const expected = asks[i][2];
          expect({ i, status: r.status, body: expected ? r.body : undefined }).toEqual({ i, status: expected ? 200 : 404, body: expected ?? undefined });
        });
      }
    });

    it('requires a valid access token (401 with an RFC 6750 challenge)', async () => {
      const none = await call('GET', url());
      expect(none.status).toBe(401);
      expect(none.headers.get('www-authenticate')).toBe('Bearer realm="invoicing"');
      const garbage = await call('GET', url(), { token: 'abc.def.ghi' });
      expect(garbage.status).toBe(401);
      expect(garbage.headers.get('www-authenticate')).toContain('error="invalid_token"');
      const expired = await call('GET', url(), { token: app.token({ expiresIn: -120 }) });
      expect(expired.status).toBe(401);
      const forged = createSigner({ key: Buffer.alloc(32, 7), algorithm: 'HS256', kid: 'dev-only', header: { alg: 'HS256', typ: 'at+jwt' } })({
        iss: app.config.JWT_ISSUER, aud: app.config.JWT_AUDIENCE, sub: 'key_x', client_id: 'x', org_id: 'org_x', scope: `read:${resource}`,
        sid: 'ses_x', jti: 'j', iat: Math.floor(Date.now() / 1000), exp: Math.floor(Date.now() / 1000) + 60,
      });
      expect((await call('GET', url(), { token: forged })).status).toBe(401);
      expect(none.headers.get('content-type')).toContain('application/problem+json');
    });

    it('requires the scope (403 insufficient_scope naming it)', async () => {
      const readOnly = app.token({ scopes: [`read:${resource}`] });
      const r = await call('POST', url(), { token: readOnly, body: await options.validBody(app, app.newOrganizationPublicId(), 0) });
      expect(r.status).toBe(403);
      expect(r.headers.get('www-authenticate')).toBe(`Bearer realm="invoicing", error="insufficient_scope", scope="write:${resource}"`);
      const writeOnly = app.token({ scopes: [`write:${resource}`] });
      expect((await call('GET', url(), { token: writeOnly })).status).toBe(403);
    });

    it('answers malformed JSON 400, a non-JSON body 415, an oversized body 413, invalid fields 422', async () => {
      const token = app.token();
      expect((await call('POST', url(), { token, body: '{"a":' })).status).toBe(400);
      const text = await call('POST', url(), { token, body: 'name=x', headers: { 'content-type': 'text/plain' } });
      expect(text.status).toBe(415);
      const form = await call('POST', url(), { token, body: 'name=x', headers: { 'content-type': 'application/x-www-form-urlencoded' } });
      expect(form.status).toBe(415);
      const huge = await call('POST', url(), { token, body: JSON.stringify({ name: 'x'.repeat(1024 * 1024 + 10) }) });
      expect(huge.status).toBe(413);
      const invalid = await call('POST', url(), { token, body: options.invalid.body });
      expect(invalid.status).toBe(422);
      expect(invalid.headers.get('content-type')).toContain('application/problem+json');
      const fields = (invalid.body.errors as Array<{ field: string; code: string; message: string }>).map((e) => e.field);
      for (const f of options.invalid.fields) expect(fields).toContain(f);
      for (const r of [text, huge, invalid]) expect(r.body).toMatchObject({ type: expect.any(String), title: expect.any(String), status: r.status, detail: expect.any(String), request_id: expect.any(String) });
    });

    it('honours Idempotency-Key: replay, 422 for another body, one object for parallel requests', async () => {
      const org = app.newOrganizationPublicId();
      const token = app.token({ organizationPublicId: org });
      const body = await options.validBody(app, org, 1);
      const first = await call('POST', url(), { token, body, headers: { 'idempotency-key': 'k-1' } });
      const again = await call('POST', url(), { token, body, headers: { 'idempotency-key': 'k-1' } });
      expect(first.status).toBe(201);
      expect(again.status).toBe(201);
      expect(again.body).toEqual(first.body);
      expect(again.headers.get('idempotent-replayed')).toBe('true');
      const other = await call('POST', url(), { token, body: await options.validBody(app, org, 2), headers: { 'idempotency-key': 'k-1' } });
      expect(other.status).toBe(422);

      const raceBody = await options.validBody(app, org, 3);
      const parallel = await Promise.all(
        Array.from({ length: 10 }, () => call('POST', url(), { token, body: raceBody, headers: { 'idempotency-key': 'k-race' } })),
      );
      const ids = new Set(parallel.filter((r) => r.status === 201).map((r) => r.body.id));
      expect(ids.size).toBe(1);
      for (const r of parallel) expect([201, 409]).toContain(r.status);
      const list = await call('GET', url(), { token });
      expect((list.body.data as unknown[]).length).toBe(2);
    });

    it('answers 409 while the first request holds its Idempotency-Key, and runs a retry once that request is gone without committing', async () => {
      const org = app.newOrganizationPublicId();
      const token = app.token({ organizationPublicId: org });
      const body = await options.validBody(app, org, 1);
      const db = app.service.app.get<DataSource>(getDataSourceToken());
      // Another connection holds the key's lock, as a request still running would (in its transaction).
      const holder = db.createQueryRunner();
      await holder.connect();
      await holder.startTransaction();
      await holder.query('SELECT pg_advisory_xact_lock($1)', [idempotencyLockKey(options.definition.schema, parsePublicId('org', org)!, 'held')]);
      try {
        const held = await call('POST', url(), { token, body, headers: { 'idempotency-key': 'held' } });
        expect(held.status).toBe(409);
      } finally {
        // It ends without a commit (a process that died): nothing of it is stored.
        await holder.rollbackTransaction();
        await holder.release();
      }
      const retry = await call('POST', url(), { token, body, headers: { 'idempotency-key': 'held' } });
      expect(retry.status).toBe(201);
      expect(retry.headers.get('idempotent-replayed')).toBeNull();
    });

    it('writes exactly one object for 40 parallel requests with one Idempotency-Key: the others replay it or get 409', async () => {
      const org = app.newOrganizationPublicId();
      const token = app.token({ organizationPublicId: org });
      const body = await options.validBody(app, org, 7);
      const answers = await Promise.all(Array.from({ length: 40 }, () => call('POST', url(), { token, body, headers: { 'idempotency-key': 'storm' } })));
      const created = answers.filter((a) => a.status === 201);
      expect(answers.every((a) => a.status === 201 || a.status === 409)).toBe(true);
      expect(new Set(created.map((a) => a.body.id)).size).toBe(1);
      const db = app.service.app.get<DataSource>(getDataSourceToken());
      const [{ n }] = await db.query(`SELECT count(*)::int AS n FROM ${options.definition.schema}.${resource} WHERE organization_id = $1`, [parsePublicId('org', org)]);
      expect(n).toBe(1);
      const [{ events }] = await db.query(`SELECT count(*)::int AS events FROM ${options.definition.schema}.outbox WHERE message_key = $1`, [created[0].body.id]);
      expect(events).toBe(1);
    });

    it('takes a key back after its 24 hours: another body under it is a new create, not a 422', async () => {
      const org = app.newOrganizationPublicId();
      const token = app.token({ organizationPublicId: org });
      const db = app.service.app.get<DataSource>(getDataSourceToken());
      await db.query(
        `INSERT INTO ${options.definition.schema}.idempotency_keys (organization_id, key, request_hash, state, response_status, response_body, created_at, claimed_until)
         VALUES ($1, 'stale', 'another-body', 'done', 201, '{}', now() - interval '25 hours', now() - interval '25 hours')`,
        [parsePublicId('org', org)],
      );
      const fresh = await call('POST', url(), { token, body: await options.validBody(app, org, 8), headers: { 'idempotency-key': 'stale' } });
      expect(fresh.status).toBe(201);
      expect(fresh.headers.get('idempotent-replayed')).toBeNull();
    });

    it('purges Idempotency-Keys older than 24 hours in bounded batches, and keeps younger ones replaying', async () => {
      const org = app.newOrganizationPublicId();
      const token = app.token({ organizationPublicId: org });
      const body = await options.validBody(app, org, 1);
      expect((await call('POST', url(), { token, body, headers: { 'idempotency-key': 'young' } })).status).toBe(201);
      const db = app.service.app.get<DataSource>(getDataSourceToken());
      const schema = options.definition.schema;
      const organizationId = parsePublicId('org', org)!;
      // 25 keys from 25 hours ago, as if written then.
      await db.query(
        `INSERT INTO ${schema}.idempotency_keys (organization_id, key, request_hash, state, response_status, created_at, claimed_until)
         SELECT $1, 'old-' || i, 'h', 'done', 201, now() - interval '25 hours', now() - interval '25 hours' FROM generate_series(1, 25) AS i`,
        [organizationId],
      );
      const count = async (): Promise<number> =>
        Number((await db.query(`SELECT count(*) AS n FROM ${schema}.idempotency_keys WHERE organization_id = $1`, [organizationId]))[0].n);
      expect(await count()).toBe(26);
      // Batches of 10: three statements (10, 10, 5) take every old key.
      const store = new IdempotencyStore(db, schema);
      expect(await store.purgeExpired(10, 100)).toBeGreaterThanOrEqual(25);
      expect(await count()).toBe(1);
      // The service's own schedule runs the same purge; the young key still replays.
      await app.service.app.get(IdempotencyPurger).purgeNow();
      const again = await call('POST', url(), { token, body, headers: { 'idempotency-key': 'young' } });
      expect(again.headers.get('idempotent-replayed')).toBe('true');
    });

    it("answers its internal route only to a service credential of a service that references its objects, within the organization it names; never to a tenant's token", async () => {
      const org = app.newOrganizationPublicId();
      const created = await create(org);
      const internal = (token: string) => call('GET', `${app.baseUrl}/internal/v1/objects/${created.body.id}`, { token });
      const self = options.definition.name;
      const ring = parseKeyRing(DEV_SERVICE_TOKEN_KEYS);
      const as = (issuer: string, audience = self, keys = ring) => new ServiceCredentials(keys, issuer as never, new Set()).credentialFor(audience as never, org);
      // An access token with every scope, of the object's own organization: refused.
      expect((await internal(app.token({ organizationPublicId: org }))).status).toBe(401);
      const referrers = referrersOfKind(options.definition.resource.kind);
      for (const referrer of referrers) {
        const answer = await internal(as(referrer));
        expect({ referrer, status: answer.status, id: answer.body.id }).toEqual({ referrer, status: 200, id: created.body.id });
        // The organization is the credential's: another one's object is absent.
        const elsewhere = new ServiceCredentials(ring, referrer as never, new Set()).credentialFor(self as never, app.newOrganizationPublicId());
        expect((await internal(elsewhere)).status).toBe(404);
      }
      // A service that references nothing of this one's, a credential for another owner, one of another ring.
      const strangers = RESOURCES.map(serviceOfResource).filter((s) => !referrers.includes(s));
      const otherRing = parseKeyRing('other=' + Buffer.alloc(32, 7).toString('base64url'));
      const refused = [
        ...strangers.map((s) => as(s)),
        ...referrers.map((r) => as(r, self === ownerOfKind('client') ? ownerOfKind('product') : ownerOfKind('client'))),
        ...referrers.map((r) => as(r, self, otherRing)),
      ];
      for (const token of refused) expect((await internal(token)).status).toBe(401);
    });

    it('refuses a NUL, another control character or an unpaired surrogate in any text field with a 422 naming it, and writes nothing', async () => {
      const org = app.newOrganizationPublicId();
      const token = app.token({ organizationPublicId: org });
      const body = await options.validBody(app, org, 1);
      // Free-text fields (not codes, dates or ids), at the top level and in the first array item.
      const isText = (v: unknown) => typeof v === 'string' && !/^[A-Z]{3}$|^\d{4}-|_[0-9a-f]{32}$/.test(v);
      const texts: Array<{ field: string; set: (v: string) => Record<string, unknown> }> = [];
      for (const [name, value] of Object.entries(body)) {
        if (isText(value)) texts.push({ field: name, set: (v) => ({ ...body, [name]: v }) });
        if (Array.isArray(value) && value[0] && typeof value[0] === 'object') {
          for (const [inner, innerValue] of Object.entries(value[0] as Record<string, unknown>)) {
            if (isText(innerValue)) texts.push({ field: `${name}[0].${inner}`, set: (v) => ({ ...body, [name]: [{ ...value[0], [inner]: v }] }) });
          }
        }
      }
      expect(texts.length).toBeGreaterThan(0);
      for (const { field, set } of texts) {
        for (const bad of ['a\u0000b', 'a\u001bb', 'a\ud800b']) {
          const r = await call('POST', url(), { token, body: set(bad), headers: { 'idempotency-key': `bad-${field}` } });
          expect({ field, bad, status: r.status }).toEqual({ field, bad, status: 422 });
          expect(r.body.errors).toContainEqual(expect.objectContaining({ field, code: 'invalid_characters' }));
        }
      }
      const list = await call('GET', url(), { token });
      expect(list.body.data).toEqual([]);
    });
  });

  return { app: () => app, owner: () => owner };
}

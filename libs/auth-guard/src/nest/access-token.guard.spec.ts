import { Controller, Get, Module, UseGuards } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { API_KEY_ALLOWED_IPS_CHANGED_V1, newId } from '@invoicing/contracts';
import { connectEventTransport, EventBusModule } from '@invoicing/event-bus';
import { createServiceApp, PROBLEM_TYPE_BASE, ServiceApp } from '@invoicing/service-kit';
import { createSigner } from 'fast-jwt';
import { randomBytes } from 'node:crypto';
import { AuthGuardModule } from '../auth-guard.module';
import { RevocationFeed } from '../revocation/revocation-feed';
import { RevocationView } from '../revocation/revocation-view';
import { FakeKafka, fakeKafka, sessionsRevoked, settle } from '../testing/fake-kafka';
import { AccessTokenGuard } from './access-token.guard';
import { ACCESS_TOKEN_STRATEGY, ADDRESS_NOT_ALLOWED_DETAIL, REVOCATIONS_UNAVAILABLE_DETAIL } from './access-token.strategy';
import { Caller, CallerIdentity } from './caller';
import { Scopes } from './scopes.decorator';

const key = randomBytes(32);
const issuer = 'https://api.example';
const audience = 'invoicing-api';
const sign = createSigner({ key, algorithm: 'HS256', kid: 'k1', header: { alg: 'HS256', typ: 'at+jwt' } });

function token(options: { scopes?: string; sid?: string; org?: string; sub?: string; allowedIps?: unknown } = {}): string {
  const iat = Math.floor(Date.now() / 1000);
  return sign({
    iss: issuer,
    aud: audience,
    sub: options.sub ?? newId('key'),
    ...(options.allowedIps === undefined ? {} : { allowed_ips: options.allowedIps }),
    client_id: 'ak_live_test',
    org_id: options.org ?? newId('org'),
    scope: options.scopes ?? 'read:invoices',
    sid: options.sid ?? newId('ses'),
    jti: newId('evt'),
    iat,
    exp: iat + 3600,
  });
}

@Controller('api/v1/invoices')
class InvoicesController {
  @Get()
  @UseGuards(AccessTokenGuard)
  @Scopes('read:invoices')
  list(@Caller() caller: CallerIdentity): { organization_id: string; organization_uuid: string } {
    return { organization_id: caller.organizationPublicId, organization_uuid: caller.organizationId };
  }

  /** The same strategy reached through passport, as `AuthGuard('access-token')` elsewhere would. */
  @Get('through-passport')
  @UseGuards(AuthGuard(ACCESS_TOKEN_STRATEGY))
  viaPassport(): { ok: true } {
    return { ok: true };
  }
}

let kafka: FakeKafka;

@Module({
  imports: [
    // The revocation feed's transport, over the fake broker.
    EventBusModule.forRoot({ brokers: ['kafka:9092'], createKafka: () => kafka.kafka }),
    AuthGuardModule.forRoot({
      verification: { keys: new Map([['k1', key]]), issuer, audience },
      revocations: { service: 'test-service', maxStalenessMs: 30_000 },
    }),
  ],
  controllers: [InvoicesController],
})
class TestModule {}

describe(`${AccessTokenGuard.name} and a stale revocation view (ADR 0017)`, () => {
  let service: ServiceApp;
  let clock: number;

  const get = (path: string, bearer?: string, remoteAddress = '127.0.0.1') =>
    service.fastify.inject({ method: 'GET', url: `/api/v1/invoices${path}`, remoteAddress, headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });

  beforeAll(async () => {
    clock = Date.now();
    jest.spyOn(Date, 'now').mockImplementation(() => clock);
    kafka = fakeKafka();
    service = await createServiceApp(TestModule, { service: 'test-service', logLevel: 'silent' });
    connectEventTransport(service.app);
    await service.app.init();
    await service.app.startAllMicroservices();
    await service.fastify.ready();
    await settle();
    expect(service.app.get(RevocationFeed).ready).toBe(true);
  });

  afterAll(async () => {
    await service.app.close();
    jest.restoreAllMocks();
  });

  it('passes a valid token while the view is fresh', async () => {
    clock += 20_000;
    // A completed fetch prompts a checkpoint: the brokers' end offsets, all read.
    kafka.consumer.fetched();
    await settle();
    clock += 29_000;
    const response = await get('', token());
    expect(response.statusCode).toBe(200);
  });

  it('hands the handler the organization in both forms, the claim parsed once by the strategy', async () => {
    const org = `org_${'0193a1b2c3d47e5f8a9b0c1d2e3f4a5b'}`;
    const response = await get('', token({ org }));
    expect(response.json()).toEqual({ organization_id: org, organization_uuid: '0193a1b2-c3d4-7e5f-8a9b-0c1d2e3f4a5b' });
  });

  it('refuses a correctly signed token whose org_id is not an organization id, with 401', async () => {
    for (const org of ['org_x', `key_${'1'.repeat(32)}`, `org_${'A'.repeat(32)}`]) {
      const response = await get('', token({ org }));
      expect({ org, status: response.statusCode }).toEqual({ org, status: 401 });
      expect(response.headers['www-authenticate']).toMatch(/error="invalid_token"/);
      expect(response.json().detail).toBe('The access token is malformed.');
    }
  });

  it("refuses a token outside the allowlist it carries with 403 problem+json, on both paths, and passes it inside", async () => {
    const bearer = token({ allowedIps: ['203.0.113.0/24', '2001:db8::/32'] });
    for (const [address, status] of [['203.0.113.7', 200], ['::ffff:203.0.113.7', 200], ['2001:db8::5', 200], ['198.51.100.1', 403], ['127.0.0.1', 403]] as const) {
      const response = await get('', bearer, address);
      expect({ address, status: response.statusCode }).toEqual({ address, status });
      if (status === 403) {
        expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
        expect(response.json().detail).toBe(ADDRESS_NOT_ALLOWED_DETAIL);
        expect(response.headers['www-authenticate']).toBeUndefined();
      }
      expect((await get('/through-passport', bearer, address)).statusCode).toBe(status);
    }
    // A list that is not canonical was not signed by the auth service as such: malformed, 401.
    for (const allowedIps of [['10.0.0.1/8'], 'any', [], [7]]) {
      expect((await get('', token({ allowedIps }), '10.0.0.1')).statusCode).toBe(401);
    }
  });

  it("checks every token of a key against its changed allowlist, the latest change winning", async () => {
    const view = service.app.get(RevocationView);
    const sub = newId('key');
    const narrow = token({ sub, allowedIps: ['203.0.113.0/24'] });
    const unrestricted = token({ sub });
    const change = (allowed_ips: string[], version: number) =>
      view.apply({
        specversion: '1.0', id: newId('evt'), source: 's', type: API_KEY_ALLOWED_IPS_CHANGED_V1, subject: sub, time: new Date(clock).toISOString(), datacontenttype: 'application/json',
        data: { organization_id: newId('org'), api_key_id: sub, client_id: 'ak_live_test', allowed_ips, version, changed_at: new Date(clock).toISOString() },
      });
    change(['198.51.100.0/24'], 1);
    expect((await get('', narrow, '203.0.113.7')).statusCode).toBe(403);
    expect((await get('', unrestricted, '203.0.113.7')).statusCode).toBe(403);
    expect((await get('', unrestricted, '198.51.100.9')).statusCode).toBe(200);
    // An older version replayed after a newer one changes nothing; an empty list allows any address.
    change([], 2);
    change(['198.51.100.0/24'], 1);
    expect((await get('', narrow, '192.0.2.1')).statusCode).toBe(200);
    // Other keys are untouched.
    expect((await get('', token({ allowedIps: ['203.0.113.0/24'] }), '192.0.2.1')).statusCode).toBe(403);
    // A completed fetch prompts a checkpoint: the brokers' end offsets, all read.
    kafka.consumer.fetched();
    await settle();
  });

  it('answers a valid token with 503 problem+json and Retry-After once the view is stale, before looking at scopes', async () => {
    clock += 31_000; // 31 s since the last checkpoint the view reached
    for (const bearer of [token(), token({ scopes: 'read:clients' })]) {
      const response = await get('', bearer);
      expect(response.statusCode).toBe(503);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
      expect(response.headers['retry-after']).toBe('5');
      expect(response.headers['www-authenticate']).toBeUndefined();
      expect(response.json()).toEqual({
        type: `${PROBLEM_TYPE_BASE}unavailable`,
        title: 'Service unavailable',
        status: 503,
        detail: REVOCATIONS_UNAVAILABLE_DETAIL,
        request_id: expect.any(String),
      });
      expect(response.body).not.toMatch(/kafka|stack|9092/i);
    }
    const viaPassport = await get('/through-passport', token());
    expect([viaPassport.statusCode, viaPassport.headers['retry-after'], viaPassport.json().detail]).toEqual([503, '5', REVOCATIONS_UNAVAILABLE_DETAIL]);
  });

  it('still answers 401 to a missing, malformed, wrongly signed or known-revoked token while stale', async () => {
    expect(service.app.get(RevocationFeed).stale).toBe(true);
    const revokedSession = newId('ses');
    service.app.get(RevocationView).apply(sessionsRevoked(revokedSession, clock - 60_000));
    const forged = createSigner({ key: randomBytes(32), algorithm: 'HS256', kid: 'k1', header: { alg: 'HS256', typ: 'at+jwt' } })({
      iss: issuer,
      aud: audience,
      sub: newId('key'),
    });
    for (const bearer of [undefined, 'not-a-jwt', forged, token({ sid: revokedSession }), token({ org: 'org_x' })]) {
      const response = await get('', bearer);
      expect({ bearer, status: response.statusCode }).toEqual({ bearer, status: 401 });
      expect(response.headers['www-authenticate']).toMatch(/^Bearer realm="invoicing"/);
      expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    }
  });

  it('passes valid tokens again as soon as a checkpoint is reached, with no restart', async () => {
    clock += 120_000;
    expect((await get('', token())).statusCode).toBe(503);
    // A completed fetch prompts a checkpoint: the brokers' end offsets, all read.
    kafka.consumer.fetched();
    await settle();
    expect((await get('', token())).statusCode).toBe(200);
    expect((await get('/through-passport', token())).statusCode).toBe(200);
  });
});

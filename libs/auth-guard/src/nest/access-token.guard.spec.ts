import { Controller, Get, Module, UseGuards } from '@nestjs/common';
import { AuthGuard } from '@nestjs/passport';
import { newId } from '@invoicing/contracts';
import { createKafka } from '@invoicing/event-bus';
import { createServiceApp, PROBLEM_TYPE_BASE, ServiceApp } from '@invoicing/service-kit';
import { createSigner } from 'fast-jwt';
import { randomBytes } from 'node:crypto';
import { AuthGuardModule } from '../auth-guard.module';
import { RevocationFeed } from '../revocation/revocation-feed';
import { RevocationView } from '../revocation/revocation-view';
import { FakeKafka, fakeKafka, sessionsRevoked, settle } from '../testing/fake-kafka';
import { AccessTokenGuard } from './access-token.guard';
import { ACCESS_TOKEN_STRATEGY, REVOCATIONS_UNAVAILABLE_DETAIL } from './access-token.strategy';
import { Caller, CallerIdentity } from './caller';
import { Scopes } from './scopes.decorator';

// The revocation feed builds its Kafka client itself; hand it the fake one instead.
jest.mock('@invoicing/event-bus', () => ({ ...jest.requireActual('@invoicing/event-bus'), createKafka: jest.fn() }));

const key = randomBytes(32);
const issuer = 'https://api.example';
const audience = 'invoicing-api';
const sign = createSigner({ key, algorithm: 'HS256', kid: 'k1', header: { alg: 'HS256', typ: 'at+jwt' } });

function token(options: { scopes?: string; sid?: string; org?: string } = {}): string {
  const iat = Math.floor(Date.now() / 1000);
  return sign({
    iss: issuer,
    aud: audience,
    sub: newId('key'),
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

@Module({
  imports: [
    AuthGuardModule.forRoot({
      verification: { keys: new Map([['k1', key]]), issuer, audience },
      revocations: { brokers: ['kafka:9092'], service: 'test-service', maxStalenessMs: 30_000 },
    }),
  ],
  controllers: [InvoicesController],
})
class TestModule {}

describe(`${AccessTokenGuard.name} and a stale revocation view (ADR 0017)`, () => {
  let kafka: FakeKafka;
  let service: ServiceApp;
  let clock: number;

  const get = (path: string, bearer?: string) =>
    service.fastify.inject({ method: 'GET', url: `/api/v1/invoices${path}`, headers: bearer ? { authorization: `Bearer ${bearer}` } : {} });

  beforeAll(async () => {
    clock = Date.now();
    jest.spyOn(Date, 'now').mockImplementation(() => clock);
    kafka = fakeKafka();
    jest.mocked(createKafka).mockReturnValue(kafka.kafka);
    service = await createServiceApp(TestModule, { service: 'test-service', logLevel: 'silent' });
    await service.app.init();
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
    kafka.consumer.fetched();
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

  it('answers a valid token with 503 problem+json and Retry-After once the view is stale, before looking at scopes', async () => {
    clock += 2_000; // 31 s since the last completed fetch
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

  it('passes valid tokens again as soon as a fetch completes, with no restart', async () => {
    clock += 120_000;
    expect((await get('', token())).statusCode).toBe(503);
    kafka.consumer.fetched();
    expect((await get('', token())).statusCode).toBe(200);
    expect((await get('/through-passport', token())).statusCode).toBe(200);
  });
});

import { AccessTokenStrategy, AccessTokenVerifier, RevocationFeed, RevocationView } from '@invoicing/auth-guard';
import { API_KEY_REVOKED_V1, newId, parsePublicId, SESSIONS_REVOKED_V1 } from '@invoicing/contracts';
import { PlatformError } from '@invoicing/service-kit';
import { Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { createHash } from 'node:crypto';
import { Clock } from '../../common/clock';
import { loadAuthConfig } from '../../config/config';
import { AccessTokenSigner } from '../../oauth/access-token-signer';
import type { DashboardUser } from '../dashboard-sessions';
import { SessionCookies } from '../session-cookies';
import { dashboardSessionId, WEBHOOK_TOKEN_LIFETIME_SECONDS, WebhookAccessTokens } from './webhook-access-token';
import { forwardedQuery, MAX_FORWARDED_QUERY_LENGTH, upstreamPath, WEBHOOK_ROUTES, WebhookCall } from './webhook-routes';
import {
  BAD_ANSWER_DETAIL,
  FetchLike,
  MAX_ANSWER_BYTES,
  TIMEOUT_READ_DETAIL,
  TIMEOUT_WRITE_DETAIL,
  UNAVAILABLE_DETAIL,
  WebhookServiceClient,
} from './webhook-service.client';
import { MAX_FORWARDED_BODY_BYTES, MAX_FORWARDED_BODY_DEPTH, WebhookSettingsProxy } from './webhook-settings.proxy';

const config = loadAuthConfig({ NODE_ENV: 'test', WEBHOOK_SERVICE_URL: 'http://webhooks.internal:3020' });
const NOW = 1_763_700_000_000;
const clock: Clock = { now: () => NOW };
const user: DashboardUser = {
  userId: parsePublicId('usr', newId('usr'))!,
  organizationId: parsePublicId('org', newId('org'))!,
  email: 'owner@example.com',
};
const SESSION = 'the-session-cookie-value';
const ENDPOINT = newId('wep');
const cookies = new SessionCookies(config);
const tokens = new WebhookAccessTokens(new AccessTokenSigner(config), clock);

interface Sent {
  url: string;
  init: RequestInit & { headers: Record<string, string> };
}

function json(status: number, body: unknown, headers: Record<string, string> = {}): Response {
  return new Response(JSON.stringify(body), { status, headers: { 'content-type': status >= 400 ? 'application/problem+json' : 'application/json; charset=utf-8', ...headers } });
}

/** A fake webhook service: records each request, answers what `answer` says. */
function upstream(answer: (sent: Sent) => Response | Promise<Response> = () => json(200, { object: 'list', data: [], has_more: false })) {
  const sent: Sent[] = [];
  const fetch: FetchLike = async (url, init) => {
    const call = { url, init: init as Sent['init'] };
    sent.push(call);
    return answer(call);
  };
  return { sent, fetch };
}

function proxyWith(fetch: FetchLike, timeoutMs = 2000) {
  return new WebhookSettingsProxy(tokens, new WebhookServiceClient({ WEBHOOK_SERVICE_URL: config.WEBHOOK_SERVICE_URL, WEBHOOK_SERVICE_TIMEOUT_MS: timeoutMs }, fetch), cookies);
}

function request(url: string, options: { body?: unknown; contentType?: string } = {}): FastifyRequest {
  return {
    id: 'req-1',
    url,
    body: options.body,
    headers: options.body === undefined ? {} : { 'content-type': options.contentType ?? 'application/json' },
    cookies: { [cookies.sessionName]: SESSION },
  } as unknown as FastifyRequest;
}

/** What the proxy wrote to the reply. */
function reply() {
  const written = { status: 0, headers: {} as Record<string, string>, body: undefined as unknown };
  const fake = {
    status(code: number) {
      written.status = code;
      return fake;
    },
    header(name: string, value: string) {
      written.headers[name.toLowerCase()] = value;
      return fake;
    },
    send(body: unknown) {
      written.body = body;
      return fake;
    },
  };
  return { reply: fake as unknown as FastifyReply, written };
}

/** The exception `work` throws (a ProblemException: status, detail, headers). */
async function refusal(work: Promise<unknown>): Promise<PlatformError> {
  const outcome = await work.then(
    () => null,
    (e: unknown) => e,
  );
  expect(outcome).toBeInstanceOf(PlatformError);
  return outcome as PlatformError;
}

// The client logs each refusal (with what the webhook service said); the assertions below read the answers.
beforeAll(() => Logger.overrideLogger(false));
afterAll(() => Logger.overrideLogger(['log', 'error', 'warn', 'debug', 'verbose']));

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as Record<string, unknown>;
const headerOf = (token: string) => JSON.parse(Buffer.from(token.split('.')[0], 'base64url').toString()) as Record<string, unknown>;
const bearer = (sent: Sent) => /^Bearer (.+)$/.exec(sent.init.headers.authorization)![1];

describe('the webhook calls forwarded (path allowlist)', () => {
  it('maps each call to its one path on the webhook service', () => {
    const paths = Object.fromEntries((Object.keys(WEBHOOK_ROUTES) as WebhookCall[]).map((call) => [call, upstreamPath(call, ENDPOINT)]));
    expect(paths).toEqual({
      list: '/api/v1/webhook-endpoints',
      create: '/api/v1/webhook-endpoints',
      get: `/api/v1/webhook-endpoints/${ENDPOINT}`,
      update: `/api/v1/webhook-endpoints/${ENDPOINT}`,
      delete: `/api/v1/webhook-endpoints/${ENDPOINT}`,
      'roll-secret': `/api/v1/webhook-endpoints/${ENDPOINT}/roll-secret`,
      test: `/api/v1/webhook-endpoints/${ENDPOINT}/test`,
      attempts: `/api/v1/webhook-endpoints/${ENDPOINT}/attempts`,
      replay: `/api/v1/webhook-endpoints/${ENDPOINT}/replay`,
    });
  });

  it.each(['..', '.', '', 'wep_', ENDPOINT.toUpperCase(), `${ENDPOINT}/../../events`, `${ENDPOINT}%2F..`, `${ENDPOINT}?x=1`, newId('key'), `${ENDPOINT}0`])(
    'refuses the endpoint id %j: no path is built from it',
    (id) => {
      for (const call of ['get', 'update', 'delete', 'roll-secret', 'test', 'attempts', 'replay'] as const) expect(upstreamPath(call, id)).toBeNull();
    },
  );

  it('forwards a query string only to the two lists, and not a long one', () => {
    expect(forwardedQuery('list', '/api/v1/settings/webhook-endpoints?limit=5&starting_after=wep_1')).toBe('limit=5&starting_after=wep_1');
    expect(forwardedQuery('attempts', `/x/attempts?event=${newId('wev')}`)).toMatch(/^event=wev_/);
    expect(forwardedQuery('list', '/api/v1/settings/webhook-endpoints')).toBe('');
    for (const call of ['create', 'get', 'update', 'delete', 'roll-secret', 'test', 'replay'] as const) expect(forwardedQuery(call, '/x?limit=1')).toBe('');
    expect(forwardedQuery('list', `/x?${'a'.repeat(MAX_FORWARDED_QUERY_LENGTH + 1)}`)).toBeNull();
  });

  it('answers a malformed id 404 itself, asking the webhook service nothing', async () => {
    const service = upstream();
    const { reply: r } = reply();
    const error = await refusal(proxyWith(service.fetch).forward('get', user, request('/x'), r, '..'));
    expect({ status: error.status, detail: error.detail }).toEqual({ status: 404, detail: 'No such webhook endpoint.' });
    expect(service.sent).toEqual([]);
  });
});

describe('the access token of a forwarded call', () => {
  it('is minted for the user, the dashboard session and the organization, with the call’s one scope and 60 s of life', async () => {
    const service = upstream();
    for (const call of Object.keys(WEBHOOK_ROUTES) as WebhookCall[]) {
      await proxyWith(service.fetch).forward(call, user, request('/x', WEBHOOK_ROUTES[call].body ? { body: { since: '2026-01-01T00:00:00Z' } } : {}), reply().reply, ENDPOINT);
    }
    expect(service.sent.map((s) => s.init.method)).toEqual(Object.values(WEBHOOK_ROUTES).map((r) => r.method));
    for (const [i, call] of (Object.keys(WEBHOOK_ROUTES) as WebhookCall[]).entries()) {
      const token = bearer(service.sent[i]);
      expect(headerOf(token)).toEqual({ alg: 'HS256', typ: 'at+jwt', kid: config.keyRing.signingKid });
      const claims = claimsOf(token);
      expect(claims).toEqual({
        iss: config.JWT_ISSUER,
        aud: config.JWT_AUDIENCE,
        sub: `usr_${user.userId.replace(/-/g, '')}`,
        client_id: `usr_${user.userId.replace(/-/g, '')}`,
        org_id: `org_${user.organizationId.replace(/-/g, '')}`,
        scope: WEBHOOK_ROUTES[call].scope,
        sid: dashboardSessionId(SESSION),
        jti: expect.any(String),
        iat: NOW / 1000,
        exp: NOW / 1000 + WEBHOOK_TOKEN_LIFETIME_SECONDS,
      });
    }
    // Read calls carry the read scope, everything else the write scope; nothing else, ever.
    expect(new Set(Object.values(WEBHOOK_ROUTES).map((r) => r.scope))).toEqual(new Set(['read:webhook_endpoints', 'write:webhook_endpoints']));
    for (const route of Object.values(WEBHOOK_ROUTES)) expect(route.scope).toBe(route.method === 'GET' ? 'read:webhook_endpoints' : 'write:webhook_endpoints');
  });

  it('names the dashboard session without being its cookie or the cookie’s Redis key', () => {
    const sid = dashboardSessionId(SESSION);
    expect(sid).toMatch(/^dsh_[0-9a-f]{32}$/);
    expect(dashboardSessionId(SESSION)).toBe(sid);
    expect(dashboardSessionId(`${SESSION}x`)).not.toBe(sid);
    expect(sid).not.toContain(SESSION);
    expect(createHash('sha256').update(SESSION).digest('hex')).not.toContain(sid.slice(4));
  });

  it('is accepted by the resource guard, and no key’s revocation or session revocation refuses it', () => {
    const now = Date.now();
    const realTokens = new WebhookAccessTokens(new AccessTokenSigner(config), { now: () => now });
    const token = realTokens.mint(user, SESSION, 'write:webhook_endpoints');
    const view = new RevocationView();
    const strategy = new AccessTokenStrategy(
      new AccessTokenVerifier({ keys: config.keyRing.keys, issuer: config.JWT_ISSUER, audience: config.JWT_AUDIENCE, cacheSize: 0 }),
      view,
      { stale: false } as RevocationFeed,
    );
    // Every key of the organization revoked, every session of it too: none of it is this token.
    const revokedAt = new Date(now).toISOString();
    const base = { specversion: '1.0', source: 'auth-service', time: revokedAt, datacontenttype: 'application/json' };
    for (let i = 0; i < 3; i += 1) {
      view.apply({ ...base, id: newId('evt'), type: API_KEY_REVOKED_V1, subject: newId('key'), data: { api_key_id: newId('key'), organization_id: `org_${user.organizationId.replace(/-/g, '')}`, reason: 'revoked', revoked_at: revokedAt } } as never);
      view.apply({ ...base, id: newId('evt'), type: SESSIONS_REVOKED_V1, subject: newId('key'), data: { api_key_id: newId('key'), organization_id: `org_${user.organizationId.replace(/-/g, '')}`, reason: 'session_revoked', revoked_at: revokedAt, session_ids: [newId('ses')] } } as never);
    }
    const caller = strategy.validate(token, '203.0.113.7');
    expect(caller).toMatchObject({
      organizationId: user.organizationId,
      organizationPublicId: `org_${user.organizationId.replace(/-/g, '')}`,
      apiKeyId: `usr_${user.userId.replace(/-/g, '')}`,
      sessionId: dashboardSessionId(SESSION),
      allowlist: null,
    });
    expect(Array.isArray(caller) ? caller : [...caller.scopes]).toEqual(['write:webhook_endpoints']);
  });

  it('is refused by the guard once its 60 s are over', () => {
    const then = Date.now() - (WEBHOOK_TOKEN_LIFETIME_SECONDS + 10) * 1000;
    const token = new WebhookAccessTokens(new AccessTokenSigner(config), { now: () => then }).mint(user, SESSION, 'read:webhook_endpoints');
    const verifier = new AccessTokenVerifier({ keys: config.keyRing.keys, issuer: config.JWT_ISSUER, audience: config.JWT_AUDIENCE, cacheSize: 0 });
    expect(() => verifier.verify(token)).toThrow('The access token expired.');
  });
});

describe('forwarding a call and its answer', () => {
  it('sends the request id, the JSON body and the list query, and hands the answer back unchanged, never cached', async () => {
    const problem = { type: 'https://docs.invoicing.example/problems/validation-failed', title: 'Validation failed', status: 422, detail: 'The request body has invalid fields.', request_id: 'req-1', errors: [{ field: 'url', code: 'invalid_url', message: 'The url must be https.' }] };
    const service = upstream(() => json(422, problem));
    const { reply: r, written } = reply();
    const body = { url: 'http://example.com/hook', enabled_events: ['*'], description: 'ERP' };
    await proxyWith(service.fetch).forward('create', user, request('/api/v1/settings/webhook-endpoints?ignored=1', { body }), r);
    expect(service.sent).toHaveLength(1);
    expect(service.sent[0].url).toBe('http://webhooks.internal:3020/api/v1/webhook-endpoints');
    expect(service.sent[0].init).toMatchObject({ method: 'POST', redirect: 'manual', body: JSON.stringify(body) });
    expect(service.sent[0].init.headers).toMatchObject({ 'content-type': 'application/json', 'x-request-id': 'req-1', accept: 'application/json' });
    expect(written.status).toBe(422);
    expect(written.headers).toEqual({ 'content-type': 'application/problem+json', 'cache-control': 'no-store' });
    expect(JSON.parse(String(written.body))).toEqual(problem);

    const list = upstream(() => json(200, { object: 'list', data: [], has_more: false }));
    await proxyWith(list.fetch).forward('attempts', user, request(`/api/v1/settings/webhook-endpoints/${ENDPOINT}/attempts?limit=20`), reply().reply, ENDPOINT);
    expect(list.sent[0].url).toBe(`http://webhooks.internal:3020/api/v1/webhook-endpoints/${ENDPOINT}/attempts?limit=20`);
    expect(list.sent[0].init.body).toBeUndefined();
  });

  it('passes a 429 and a 503 on with their Retry-After', async () => {
    for (const status of [429, 503]) {
      const service = upstream(() => json(status, { status, detail: 'later' }, { 'retry-after': '7' }));
      const { reply: r, written } = reply();
      await proxyWith(service.fetch).forward('test', user, request('/x'), r, ENDPOINT);
      expect({ status: written.status, retry: written.headers['retry-after'] }).toEqual({ status, retry: '7' });
    }
  });

  it('sends no body on calls that take none, whatever came with them', async () => {
    const service = upstream(() => json(200, { id: ENDPOINT }));
    await proxyWith(service.fetch).forward('roll-secret', user, request('/x', { body: { secret: 'mine' } }), reply().reply, ENDPOINT);
    expect(service.sent[0].init.body).toBeUndefined();
    expect(service.sent[0].init.headers['content-type']).toBeUndefined();
  });

  it('refuses a body over the limit (413) or not JSON (415) without forwarding it', async () => {
    const service = upstream();
    const big = await refusal(proxyWith(service.fetch).forward('create', user, request('/x', { body: { description: 'x'.repeat(MAX_FORWARDED_BODY_BYTES) } }), reply().reply));
    expect(big.status).toBe(413);
    const form = await refusal(proxyWith(service.fetch).forward('replay', user, request('/x', { body: { since: 'x' }, contentType: 'application/x-www-form-urlencoded' }), reply().reply, ENDPOINT));
    expect(form.status).toBe(415);
    expect(service.sent).toEqual([]);
  });

  it('refuses a body nested deeper than any valid one (400) without serializing or forwarding it, and forwards one at the bound', async () => {
    const service = upstream(() => json(201, { id: ENDPOINT }));
    const nested = (depth: number): unknown => {
      let value: unknown = 'x';
      for (let i = 1; i < depth; i++) value = [value];
      return { description: value };
    };
    // 10,000 levels: what overflowed JSON.stringify's stack.
    const deep = await refusal(proxyWith(service.fetch).forward('create', user, request('/x', { body: nested(10_000) }), reply().reply));
    expect(deep.status).toBe(400);
    const over = await refusal(proxyWith(service.fetch).forward('create', user, request('/x', { body: nested(MAX_FORWARDED_BODY_DEPTH + 1) }), reply().reply));
    expect(over.status).toBe(400);
    expect(service.sent).toEqual([]);
    await proxyWith(service.fetch).forward('create', user, request('/x', { body: nested(MAX_FORWARDED_BODY_DEPTH) }), reply().reply);
    expect(service.sent).toHaveLength(1);
  });
});

describe('a webhook service that does not answer, or answers something else', () => {
  const client = (fetch: FetchLike, timeoutMs = 2000) => new WebhookServiceClient({ WEBHOOK_SERVICE_URL: 'http://10.0.0.9:3020', WEBHOOK_SERVICE_TIMEOUT_MS: timeoutMs }, fetch);
  const call = { method: 'GET' as const, path: '/api/v1/webhook-endpoints', query: '', token: 't', requestId: 'r' };
  const noInternals = (error: PlatformError) => expect(JSON.stringify({ detail: error.detail, headers: error.headers })).not.toMatch(/10\.0\.0\.9|3020|ECONN|fetch failed/);

  it('unreachable: 503 with Retry-After, naming no address, port or error', async () => {
    const refused = Object.assign(new TypeError('fetch failed'), { cause: Object.assign(new Error('connect ECONNREFUSED 10.0.0.9:3020'), { code: 'ECONNREFUSED' }) });
    const error = await refusal(client(() => Promise.reject(refused)).send(call));
    expect({ status: error.status, detail: error.detail, retry: error.headers['Retry-After'] }).toEqual({ status: 503, detail: UNAVAILABLE_DETAIL, retry: '1' });
    noInternals(error);
  });

  it('no answer in time: 503, and a change is said to be uncertain', async () => {
    const hang: FetchLike = (_url, init) => new Promise((_resolve, reject) => init.signal!.addEventListener('abort', () => reject(init.signal!.reason)));
    const read = await refusal(client(hang, 50).send(call));
    expect({ status: read.status, detail: read.detail }).toEqual({ status: 503, detail: TIMEOUT_READ_DETAIL });
    const write = await refusal(client(hang, 50).send({ ...call, method: 'POST' }));
    expect({ status: write.status, detail: write.detail }).toEqual({ status: 503, detail: TIMEOUT_WRITE_DETAIL });
    noInternals(write);
  });

  it.each([
    ['a redirect', () => new Response(null, { status: 302, headers: { location: 'http://169.254.169.254/' } })],
    ['an HTML page', () => new Response('<html>502 Bad Gateway</html>', { status: 502, headers: { 'content-type': 'text/html' } })],
    ['broken JSON', () => new Response('{"object":', { status: 200, headers: { 'content-type': 'application/json' } })],
    ['an answer over the size limit', () => new Response(JSON.stringify({ data: 'x'.repeat(MAX_ANSWER_BYTES) }), { status: 200, headers: { 'content-type': 'application/json' } })],
    ['a 401 (the minted token refused)', () => json(401, { status: 401, detail: 'The access token signature is invalid.' })],
    ['a 403 (a scope missing)', () => json(403, { status: 403, detail: 'The access token lacks the scope write:webhook_endpoints.' })],
  ])('%s: 502, its content not passed on', async (_name, answer) => {
    const error = await refusal(client(async () => answer()).send(call));
    expect({ status: error.status, detail: error.detail }).toEqual({ status: 502, detail: BAD_ANSWER_DETAIL });
    noInternals(error);
  });
});

describe('WEBHOOK_SERVICE_URL and WEBHOOK_SERVICE_TIMEOUT_MS, checked at start', () => {
  it('default to the local stack’s webhook service and 10 s', () => {
    const defaults = loadAuthConfig({ NODE_ENV: 'test' });
    expect({ url: defaults.WEBHOOK_SERVICE_URL, timeout: defaults.WEBHOOK_SERVICE_TIMEOUT_MS }).toEqual({ url: 'http://127.0.0.1:3020', timeout: 10_000 });
    expect(loadAuthConfig({ NODE_ENV: 'test', WEBHOOK_SERVICE_URL: 'https://webhook-service.example:8443/' }).WEBHOOK_SERVICE_URL).toBe('https://webhook-service.example:8443/');
  });

  it.each(['webhook-service:3020', 'ftp://webhook-service', 'http://user:pw@webhook-service:3020', 'http://webhook-service:3020/api', 'http://webhook-service:3020?x=1', ''])('refuse the URL %j', (value) => {
    expect(() => loadAuthConfig({ NODE_ENV: 'test', WEBHOOK_SERVICE_URL: value })).toThrow(/WEBHOOK_SERVICE_URL/);
  });

  it('refuse a timeout that is not below REQUEST_TIMEOUT_MS', () => {
    expect(() => loadAuthConfig({ NODE_ENV: 'test', WEBHOOK_SERVICE_TIMEOUT_MS: '15000' })).toThrow(/WEBHOOK_SERVICE_TIMEOUT_MS/);
    expect(loadAuthConfig({ NODE_ENV: 'test', REQUEST_TIMEOUT_MS: '30000', WEBHOOK_SERVICE_TIMEOUT_MS: '20000' }).WEBHOOK_SERVICE_TIMEOUT_MS).toBe(20_000);
  });
});

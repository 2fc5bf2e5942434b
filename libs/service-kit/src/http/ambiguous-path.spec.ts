import { Controller, Get, Module, Param } from '@nestjs/common';
import Fastify, { FastifyInstance } from 'fastify';
import { request } from 'node:http';
import { AddressInfo } from 'node:net';
import { pino } from 'pino';
import { createServiceApp, ServiceApp } from '../bootstrap/service-app';
import { AMBIGUOUS_PATH, refuseAmbiguousPaths } from './ambiguous-path';
import { fastifyBaseOptions } from './fastify-base';
import { PROBLEM_TYPE_BASE } from './problem';

/** The probe: nginx routes it as /api/v1/clients, find-my-way as the internal route with an id full of slashes. */
const PROBE = '/internal/v1/objects/cli_1%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients';

const REFUSED = [
  PROBE,
  '/internal/v1/objects/cli_1%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients',
  '/api/v1/clients/a%2fb',
  '/api/v1/clients/a%5Cb',
  '/api/v1/clients/a\\b',
  '/api/v1/clients/%2E%2E',
  '/api/v1/clients/a%2eb',
  '/api/v1/clients/./cli_1',
  '/api/v1/clients/../cli_1',
  '/api/v1/clients/cli_1/.',
  '/api/v1/clients/cli_1/..',
  '/api/v1/clients/cli_1/..?x=1',
  '/api/v1//clients/cli_1',
  '/api/v1/clients/cli_1;a=b',
  '/api/v1/clients/cli_1#x',
  '/api/v1/clients/%C0%AE%C0%AE',
  '/api/v1/clients/%c1%9c',
  '/api/v1/clients/%E0%80%AE',
  '/api/v1/clients/%f0%80%80%ae',
];

/** What a handler gets, byte for byte where the router leaves it so. */
const PASSED: [path: string, id: string, query: Record<string, string>][] = [
  ['/api/v1/clients/cli_0192f2a4c7e97b3c8d1e2f3a4b5c6d7e', 'cli_0192f2a4c7e97b3c8d1e2f3a4b5c6d7e', {}],
  ['/api/v1/clients/user%40example.com', 'user@example.com', {}],
  ['/api/v1/clients/a%20b?q=a%20b', 'a b', { q: 'a b' }],
  ['/api/v1/clients/inv.1?next=%2F..%2F&path=/../x;y', 'inv.1', { next: '/../', path: '/../x;y' }],
  ['/api/v1/clients/...', '...', {}],
];

/** GET over real HTTP with the path exactly as given (an injected request would resolve dot segments first). */
function rawGet(port: number, path: string): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, headers: { 'x-request-id': 'req-path-1' } }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (d: string) => (body += d));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body }));
    });
    req.on('error', reject).end();
  });
}

describe('refuseAmbiguousPaths: a path a proxy may have routed as another is refused before any handler (ADR 0029)', () => {
  let app: FastifyInstance;
  let port: number;
  const handled: string[] = [];

  beforeAll(async () => {
    app = Fastify(fastifyBaseOptions(pino({ level: 'silent' }), { trustProxy: false }));
    app.addHook('onRequest', refuseAmbiguousPaths);
    app.get('/internal/v1/objects/:id', async (req) => {
      handled.push(`internal ${req.url}`);
      return { internal: true };
    });
    app.get('/api/v1/clients/:id', async (req) => {
      handled.push(`client ${req.url}`);
      return { id: (req.params as { id: string }).id, query: req.query };
    });
    await app.listen({ port: 0, host: '127.0.0.1' });
    port = (app.server.address() as AddressInfo).port;
  });
  afterAll(() => app?.close());

  it('answers each 400 problem+json with the request id, quoting nothing of the path, and runs no handler; passes the rest', async () => {
    const answers = [];
    for (const path of REFUSED) {
      const { status, headers, body } = await rawGet(port, path);
      answers.push({ path, status, type: headers['content-type'] });
      if (status !== 400) continue;
      // An overlong sequence is not UTF-8: find-my-way refuses it before any hook, in its own words (client-error.ts).
      const detail = /%[CEF][0-9A-F]%/i.test(path) ? expect.stringMatching(/ambiguous|not valid percent-encoded UTF-8/) : expect.stringContaining('ambiguous');
      expect(JSON.parse(body)).toEqual({ type: `${PROBLEM_TYPE_BASE}bad-request`, title: 'Bad request', status: 400, detail, request_id: 'req-path-1' });
      expect(headers['x-request-id']).toBe('req-path-1');
      expect(body).not.toMatch(/cli_1|internal/);
    }
    expect(answers.filter((a) => a.status !== 400 || !/^application\/problem\+json/.test(String(a.type)))).toEqual([]);
    expect(handled).toEqual([]);

    // Ordinary escapes in the path, dots inside a segment and anything in the query reach the handler.
    for (const [path, id, query] of PASSED) {
      const { status, body } = await rawGet(port, path);
      expect({ path, status, body: JSON.parse(body) as unknown }).toEqual({ path, status: 200, body: { id, query } });
    }
    expect(AMBIGUOUS_PATH.test('/health/live')).toBe(false);
  });
});

@Controller('internal/v1/objects')
class InternalObjectsController {
  static reached: string[] = [];

  @Get(':id')
  get(@Param('id') id: string): { id: string } {
    InternalObjectsController.reached.push(id);
    return { id };
  }
}

@Module({ controllers: [InternalObjectsController] })
class InternalOnlyModule {}

describe('createServiceApp: every service refuses an ambiguous path (the resource services and the auth service alike)', () => {
  let service: ServiceApp;

  beforeAll(async () => {
    service = await createServiceApp(InternalOnlyModule, { service: 'probe-service', logLevel: 'silent' });
    await service.app.init();
    await service.fastify.ready();
  });
  afterAll(() => service?.app.close());

  it('answers the probe 400 problem+json before the internal controller runs', async () => {
    const response = await service.fastify.inject({ method: 'GET', url: PROBE, headers: { 'x-request-id': 'req-probe' } });
    expect(response.statusCode).toBe(400);
    expect(response.headers['content-type']).toMatch(/^application\/problem\+json/);
    expect(response.headers['x-request-id']).toBe('req-probe');
    expect(response.json()).toMatchObject({ status: 400, type: `${PROBLEM_TYPE_BASE}bad-request`, request_id: 'req-probe' });
    expect(InternalObjectsController.reached).toEqual([]);
    // An ordinary id still reaches it.
    expect((await service.fastify.inject({ method: 'GET', url: '/internal/v1/objects/cli_1' })).json()).toEqual({ id: 'cli_1' });
  });
});

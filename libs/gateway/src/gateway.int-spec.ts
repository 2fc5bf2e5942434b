import { GATEWAY_ROUTES, GatewayRoute, PROBLEM_TYPE_BASE, SERVICES, ServiceName } from '@invoicing/contracts';
import Fastify, { FastifyInstance } from 'fastify';
import { ChildProcess } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { Agent, request } from 'node:http';
import { AddressInfo, createServer, Server, Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { GATEWAY_LIMITS } from './limits';
import { UpstreamServers } from './nginx-config';
import { LocalGatewayOptions, spawnNginx } from './nginx-process';

/*
 * Debian's nginx, with the configuration renderNginxConfig writes, in front of throwaway upstreams
 * (Fastify on ephemeral ports that echo what they received). Every behaviour the platform's gateway
 * promises (libs/gateway/README.md, docs/api.md) is pinned here.
 */

interface Seen {
  upstream: string;
  method: string;
  url: string;
  request_id?: string;
  forwarded_for?: string;
  content_type?: string;
  /** The address the upstream connection came from. */
  peer?: string;
  headers: Record<string, unknown>;
  body_bytes: number;
  body_sha256: string;
}

const SERVICE_NAMES = Object.keys(SERVICES) as ServiceName[];
const MiB = 1024 * 1024;

/** A Fastify upstream on an ephemeral port that echoes what it received. */
async function startUpstream(
  name: string,
  bodyLimit = 8 * MiB,
  { drainRejectedBody = false } = {},
): Promise<{ app: FastifyInstance; url: string; hits: () => number }> {
  // forceCloseConnections: an upstream that answered early may still be draining a body the gateway
  // will never finish sending (its caller is gone); closing must not wait for that.
  const app = Fastify({ bodyLimit, forceCloseConnections: true });
  let hits = 0;
  if (drainRejectedBody) {
    // Fastify closes the connection after refusing a body by its Content-Length; without that, Node
    // drains the unread body and the caller (here: the gateway, still uploading) reads the 413.
    app.addHook('onSend', async (request, reply) => {
      if (reply.statusCode === 413 && request.headers['content-length']) reply.removeHeader('connection');
    });
  }
  app.removeAllContentTypeParsers();
  app.addContentTypeParser('*', { parseAs: 'buffer' }, (_req, body, done) => done(null, body));
  // The upstream decides about oversized bodies, in its own format (as the services do).
  app.setErrorHandler((error: { statusCode?: number }, _request, reply) => {
    const status = error.statusCode ?? 500;
    void reply.status(status).type('application/problem+json').send({ status, detail: `${name} refused the body` });
  });
  app.addHook('onRequest', async (request, reply) => {
    hits++;
    void reply.header('X-Request-Id', request.headers['x-request-id']);
  });
  app.get('/api/v1/unavailable', async (_request, reply) => {
    void reply.status(503).header('Retry-After', '7').type('application/problem+json');
    return { status: 503, detail: `${name} dependency down` };
  });
  app.get('/api/v1/slow', async () => {
    await new Promise((r) => setTimeout(r, 1500));
    return { late: true };
  });
  // Hop-by-hop fields of the upstream's own connection, one of them named by its Connection header.
  app.get('/api/v1/invoices/hop-by-hop', async (_request, reply) => {
    void reply.headers({ connection: 'keep-alive, x-upstream-hop', 'keep-alive': 'timeout=5', 'x-upstream-hop': '1', 'x-end-to-end': '1' });
    return { hop: true };
  });
  // A service that says HSTS of its own, which only the end of TLS can say.
  app.get('/api/v1/invoices/own-hsts', async (_request, reply) => {
    void reply.header('strict-transport-security', 'max-age=5');
    return { own: true };
  });
  app.all('/*', async (request): Promise<Seen> => {
    const body = Buffer.isBuffer(request.body) ? request.body : Buffer.alloc(0);
    return {
      upstream: name,
      method: request.method,
      url: request.url,
      request_id: request.headers['x-request-id'] as string | undefined,
      forwarded_for: request.headers['x-forwarded-for'] as string | undefined,
      content_type: request.headers['content-type'],
      peer: request.socket.remoteAddress,
      headers: request.headers,
      body_bytes: body.length,
      body_sha256: createHash('sha256').update(body).digest('hex'),
    };
  });
  const address = await app.listen({ port: 0, host: '127.0.0.1' });
  return { app, url: address, hits: () => hits };
}

/**
 * A TCP server that drops every connection as soon as the request starts arriving: a crashing
 * upstream. Not at accept: a reset that reaches nginx before its connect() has completed is a refused
 * connection (no connect time), the gateway's 503, and on a busy machine it sometimes did.
 */
async function startResettingServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((socket) => socket.once('data', () => socket.destroy()));
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
}

/**
 * An instance that reads each request whole (head and the body its Content-Length declares), counts
 * it, and drops the connection without a byte of answer: a service that dies with a request in hand.
 */
async function startDroppingServer(): Promise<{ url: string; received: () => string[]; close(): Promise<void> }> {
  const received: string[] = [];
  const server = createServer((socket) => {
    let buffered = Buffer.alloc(0);
    socket.on('data', (chunk: Buffer) => {
      buffered = Buffer.concat([buffered, chunk]);
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.subarray(0, end).toString('latin1');
      const declared = Number(/content-length: *(\d+)/i.exec(head)?.[1] ?? 0);
      if (buffered.length < end + 4 + declared) return;
      received.push(head.split(' ')[0]);
      socket.destroy();
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    received: () => [...received],
    close: () => new Promise((r) => server.close(() => r())),
  };
}

/**
 * An upstream that answers 413 (keep-alive) the moment it has a request's head, then reads and
 * discards the body it declared before it reads the next request: the early answer of a service
 * refusing a body by its Content-Length, without any of Fastify's timing.
 */
async function startEarlyAnswerServer(): Promise<{ url: string; close(): Promise<void> }> {
  const answer = JSON.stringify({ status: 413, detail: 'early refused the body' });
  const sockets = new Set<Socket>();
  const server = createServer((socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
    let head = '';
    let unread = 0;
    socket.on('data', (chunk: Buffer) => {
      let rest = chunk;
      while (rest.length > 0) {
        if (unread > 0) {
          const skipped = Math.min(unread, rest.length);
          unread -= skipped;
          rest = rest.subarray(skipped);
          continue;
        }
        head += rest.toString('latin1');
        rest = Buffer.alloc(0);
        const end = head.indexOf('\r\n\r\n');
        if (end < 0) break;
        const declared = Number(/content-length: *(\d+)/i.exec(head.slice(0, end))?.[1] ?? 0);
        rest = Buffer.from(head.slice(end + 4), 'latin1');
        head = '';
        unread = declared;
        socket.write(`HTTP/1.1 413 Payload Too Large\r\ncontent-type: application/problem+json\r\ncontent-length: ${answer.length}\r\n\r\n${answer}`);
      }
    });
    socket.on('error', () => undefined);
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    // The gateway keeps its upstream connections alive: end them, or close() waits for them.
    close: () => new Promise((r) => {
      server.close(() => r());
      for (const socket of sockets) socket.destroy();
    }),
  };
}

/** A port nobody listens on: bind an ephemeral one, then release it. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  await new Promise((r) => server.close(r));
  return port;
}

async function closedHostPort(): Promise<string> {
  return `127.0.0.1:${await closedPort()}`;
}

/** Whether `promise` settles within `ms` (never a test's whole timeout). */
async function within(ms: number, promise: Promise<unknown>): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<false>((r) => (timer = setTimeout(() => r(false), ms)));
  try {
    return await Promise.race([promise.then(() => true as const), late]);
  } finally {
    clearTimeout(timer);
  }
}

interface RawExchange {
  status: number;
  /** Lower-cased names; repeated fields joined with ", ". */
  headers: Record<string, string>;
  body: string;
  /** Whether the server closed the connection within the wait. */
  closedByServer: boolean;
}

/**
 * Writes `text` on a fresh TCP connection, byte for byte (no client normalises or adds a header),
 * and reads until the server closes the connection or `waitMs` passes.
 */
function rawExchange(baseUrl: string, text: string, waitMs = 2000): Promise<RawExchange> {
  const { hostname, port } = new URL(baseUrl);
  return new Promise((resolve, reject) => {
    const socket = new Socket();
    let received = '';
    const settle = (closedByServer: boolean): void => {
      clearTimeout(timer);
      socket.destroy();
      const end = received.indexOf('\r\n\r\n');
      if (end < 0) return reject(new Error(`no response head (closed by server: ${closedByServer}): ${JSON.stringify(received.slice(0, 200))}`));
      const [statusLine, ...lines] = received.slice(0, end).split('\r\n');
      const headers: Record<string, string> = {};
      for (const line of lines) {
        const name = line.slice(0, line.indexOf(':')).trim().toLowerCase();
        const value = line.slice(line.indexOf(':') + 1).trim();
        headers[name] = headers[name] === undefined ? value : `${headers[name]}, ${value}`;
      }
      resolve({ status: Number(statusLine.split(' ')[1]), headers, body: received.slice(end + 4), closedByServer });
    };
    const timer = setTimeout(() => settle(false), waitMs);
    socket.on('data', (chunk: Buffer) => (received += chunk.toString('latin1')));
    socket.once('close', () => settle(true));
    socket.on('error', () => undefined);
    socket.connect(Number(port), hostname, () => socket.write(text));
  });
}

const hostPort = (url: string) => new URL(url).host;

/** A running nginx gateway on an ephemeral port. */
interface TestGateway {
  url: string;
  statusUrl?: string;
  child: ChildProcess;
  /** stderr so far (nginx's error log). */
  log: () => string;
  /** SIGQUIT: nginx stops accepting and finishes what is in flight. Resolves when it has exited. */
  quit(): Promise<void>;
  stop(): Promise<void>;
}

async function startGateway(upstreams: Record<ServiceName, UpstreamServers>, options: Partial<LocalGatewayOptions> & { withStatus?: boolean } = {}): Promise<TestGateway> {
  const port = await closedPort();
  const statusPort = options.withStatus ? await closedPort() : undefined;
  const dir = mkdtempSync(join(tmpdir(), 'gateway-int-'));
  const child = spawnNginx(dir, {
    upstreams,
    listen: `127.0.0.1:${port}`,
    statusListen: statusPort ? `127.0.0.1:${statusPort}` : undefined,
    upstreamTimeoutMs: 500,
    traceSamplePercent: 100,
    ...options,
  });
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (d: string) => (stderr += d));
  child.stdout?.resume();
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const url = `http://127.0.0.1:${port}`;
  for (let i = 0; ; i++) {
    if (child.exitCode !== null) throw new Error(`nginx exited: ${stderr}`);
    if (await fetch(`${url}/health/live`).then((r) => r.ok, () => false)) break;
    if (i > 200) throw new Error(`nginx not listening after 10 s: ${stderr}`);
    await new Promise((r) => setTimeout(r, 50));
  }
  const signal = async (name: NodeJS.Signals) => {
    if (child.exitCode === null && child.signalCode === null) child.kill(name);
    await exited;
    rmSync(dir, { recursive: true, force: true });
  };
  return {
    url,
    statusUrl: statusPort ? `http://127.0.0.1:${statusPort}` : undefined,
    child,
    log: () => stderr,
    quit: () => signal('SIGQUIT'),
    stop: () => signal('SIGTERM'),
  };
}

function expectProblem(response: Response, body: Record<string, unknown>, status: number): void {
  expect(response.status).toBe(status);
  expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
  expect(body).toMatchObject({ status, type: expect.stringContaining(PROBLEM_TYPE_BASE), title: expect.any(String), detail: expect.any(String) });
  expect(body.request_id).toBe(response.headers.get('x-request-id'));
}

/** expectProblem for a raw exchange. */
function expectRawProblem(exchange: RawExchange, status: number): Record<string, unknown> {
  expect(exchange.status).toBe(status);
  expect(exchange.headers['content-type']).toMatch(/^application\/problem\+json/);
  const body = JSON.parse(exchange.body) as Record<string, unknown>;
  expect(body).toMatchObject({ status, type: expect.stringContaining(PROBLEM_TYPE_BASE), title: expect.any(String), detail: expect.any(String) });
  expect(body.request_id).toBe(exchange.headers['x-request-id']);
  return body;
}

describe('gateway: nginx with the rendered configuration, in front of throwaway upstreams', () => {
  const upstreams = new Map<ServiceName, Awaited<ReturnType<typeof startUpstream>>>();
  let resetting: Awaited<ReturnType<typeof startResettingServer>>;
  let gateway: TestGateway;
  let base: string;

  /** Every service pointing at its throwaway upstream; single tests override one entry. */
  const mainUpstreams = (): Record<ServiceName, string> =>
    Object.fromEntries(SERVICE_NAMES.map((name) => [name, upstreams.has(name) ? hostPort(upstreams.get(name)!.url) : '127.0.0.1:1'])) as Record<ServiceName, string>;

  /** A second gateway for one test, with some routes pointing elsewhere. */
  const withRoutes = (routes: GatewayRoute[], overrides: Partial<Record<ServiceName, UpstreamServers>>, options: Partial<LocalGatewayOptions> = {}) =>
    startGateway({ ...mainUpstreams(), ...overrides }, { routes, ...options });

  beforeAll(async () => {
    for (const name of SERVICE_NAMES) upstreams.set(name, await startUpstream(name));
    resetting = await startResettingServer();
    gateway = await startGateway(mainUpstreams(), { withStatus: true });
    base = gateway.url;
  });

  afterAll(async () => {
    await gateway?.stop();
    for (const { app } of upstreams.values()) await app.close();
    await new Promise((r) => resetting?.server.close(r));
  });

  async function get(path: string, init?: RequestInit, url = base): Promise<{ response: Response; body: Record<string, unknown> }> {
    const response = await fetch(`${url}${path}`, init);
    const text = await response.text();
    return { response, body: text ? (JSON.parse(text) as Record<string, unknown>) : {} };
  }

  it('routes every prefix of the platform table to its service, path unchanged', async () => {
    for (const route of GATEWAY_ROUTES) {
      for (const path of [route.prefix, `${route.prefix}/`, `${route.prefix}/obj_123/sub`]) {
        const { response, body } = await get(path);
        expect({ path, status: response.status }).toEqual({ path, status: 200 });
        expect(body).toMatchObject({ upstream: route.service, url: path, method: 'GET' });
      }
    }
  });

  it('matches on a segment boundary only: /api/v1/invoicesX is a 404 problem', async () => {
    for (const path of ['/api/v1/invoicesX', '/api/v1/invoices.json', '/settingsX', '/api/v1', '/', '/api/v2/invoices', '/metrics', '/stub_status', '/_gateway/problem/502']) {
      const { response, body } = await get(path);
      expectProblem(response, body, 404);
    }
  });

  it('passes the query string through byte for byte', async () => {
    const query = '?limit=10&starting_after=inv_01J&flag&x=a%20b+c&x=%E2%82%AC&empty=';
    const { body } = await get(`/api/v1/invoices${query}`);
    expect(body.url).toBe(`/api/v1/invoices${query}`);
  });

  describe('routes and forwards one and the same path (docs/api.md section 8, ADR 0029)', () => {
    const hitsOfAll = () => [...upstreams.values()].reduce((sum, u) => sum + u.hits(), 0);
    /** Raw, so that no client resolves the dot segments or backslashes first. */
    const rawGet = (target: string) => rawExchange(base, `GET ${target} HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n\r\n`);

    it('answers the probe that reached an internal route 400 problem+json, and no service sees it', async () => {
      const before = hitsOfAll();
      // nginx resolves the encoded dot segments and routes on /api/v1/clients (four of them) or
      // /internal/api/v1/clients (three), while the service would read the path as sent: its internal
      // route /internal/v1/objects/:id with an id full of slashes.
      const probes = ['/internal/v1/objects/cli_1%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients', '/internal/v1/objects/cli_1%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients'];
      const exchanges = await Promise.all(probes.map(rawGet));
      expect(exchanges.map((e, i) => ({ target: probes[i], status: e.status, url: e.status === 200 ? (JSON.parse(e.body) as Seen).url : undefined }))).toEqual(
        probes.map((target) => ({ target, status: 400, url: undefined })),
      );
      for (const exchange of exchanges) {
        expect(expectRawProblem(exchange, 400).detail).toContain('ambiguous');
        expect(exchange.body).not.toMatch(/internal|objects|cli_1/);
      }
      expect(hitsOfAll()).toBe(before);
    });

    it('refuses encoded slashes, backslashes and dots, dot and empty segments, ";", "#" and overlong UTF-8 in the path, whatever the route; forwards the rest byte for byte', async () => {
      const before = hitsOfAll();
      const targets = [
        '/api/v1/clients/a%2fb',
        '/api/v1/clients/a%5Cb',
        '/api/v1/clients/a%5cb',
        '/api/v1/clients/a\\b',
        '/api/v1/clients/%2E%2E/invoices',
        '/api/v1/clients/a%2eb',
        '/api/v1/clients/./cli_1',
        '/api/v1/clients/../invoices',
        '/api/v1/clients/.',
        '/api/v1/clients/..',
        '/api/v1/clients/..?limit=1',
        '/api/v1//clients',
        '//api/v1/clients',
        '/api/v1/clients/cli_1;jsessionid=1',
        '/api/v1/clients/cli_1#x',
        '/api/v1/clients/%c0%ae%c0%ae/x',
        '/api/v1/clients/%C0%AF',
        '/api/v1/clients/%e0%80%ae',
        '/api/v1/clients/%f0%80%80%ae',
        // Not routed either way, still the same answer; and its own endpoints.
        '/nowhere/%2e%2e/api/v1/clients',
        '/health/./live',
        // An absolute-form target: nginx routes and forwards its path.
        'http://gw.test/api/v1/clients/x%2F..%2F..%2Finvoices',
      ];
      const answers: { target: string; status: number; type?: string }[] = [];
      for (const target of targets) {
        const exchange = await rawGet(target);
        answers.push({ target, status: exchange.status, type: exchange.headers['content-type'] });
        if (exchange.status === 400) expectRawProblem(exchange, 400);
      }
      expect(answers.filter((a) => a.status !== 400 || !/^application\/problem\+json/.test(a.type ?? ''))).toEqual([]);
      // A NUL is nginx's own malformed request: the same 400 problem.
      expectRawProblem(await rawGet('/api/v1/clients/a%00b'), 400);
      expect(hitsOfAll()).toBe(before);

      // Ordinary escapes in the path, dots inside a segment and anything in the query go through byte for byte.
      for (const [target, upstream] of [
        ['/api/v1/clients/user%40example.com', 'client-service'],
        ['/api/v1/clients/a%20b?q=a%20b', 'client-service'],
        ['/api/v1/clients/100%25?next=%2F..%2F&path=/../x;y', 'client-service'],
        ['/api/v1/invoices/inv.1/...', 'invoice-service'],
        ['/api/v1/invoices/.hidden', 'invoice-service'],
        ['/.well-known/oauth-authorization-server', 'auth-service'],
        ['/api/v1/openapi.json', 'auth-service'],
      ]) {
        const exchange = await rawGet(target);
        expect({ target, status: exchange.status }).toEqual({ target, status: 200 });
        expect(JSON.parse(exchange.body)).toMatchObject({ upstream, url: target });
      }
    });
  });

  describe('Strict-Transport-Security where TLS ends, never over plain HTTP (RFC 6797)', () => {
    const invoices: GatewayRoute[] = [{ prefix: '/api/v1/invoices', service: 'invoice-service' }];
    const https = { 'X-Forwarded-Proto': 'https' };
    const hstsOf = async (url: string, path: string, headers: Record<string, string> = https) => {
      const response = await fetch(`${url}${path}`, { headers });
      const text = await response.text();
      return { status: response.status, hsts: response.headers.get('strict-transport-security'), body: text };
    };

    it('sends none on plain HTTP, whatever the caller says, and never passes on a service\'s own', async () => {
      for (const path of ['/api/v1/invoices', '/api/v1/invoices/own-hsts', '/nowhere', '/health/live', '/api/v1/invoices/a%2Fb']) {
        expect({ path, hsts: (await hstsOf(base, path)).hsts }).toEqual({ path, hsts: null });
      }
      // The services are told the truth: plain HTTP.
      expect(JSON.parse((await hstsOf(base, '/api/v1/invoices')).body)).toMatchObject({ headers: { 'x-forwarded-proto': 'http' } });
    });

    it('behind a TLS load balancer it trusts: on every answer to what came over TLS, once, and X-Forwarded-Proto: https to the service', async () => {
      const trusted = await withRoutes(invoices, {}, { tlsProxies: ['127.0.0.0/8'] });
      const untrusted = await withRoutes(invoices, {}, { tlsProxies: ['192.0.2.0/24', '2001:db8::/32'] });
      const off = await withRoutes(invoices, {}, { tlsProxies: ['127.0.0.1'], hsts: false });
      try {
        const year = 'max-age=31536000; includeSubDomains';
        const answers = [];
        for (const path of ['/api/v1/invoices', '/api/v1/invoices/own-hsts', '/nowhere', '/health/ready', '/api/v1/invoices/a%2Fb']) {
          const { status, hsts } = await hstsOf(trusted.url, path);
          answers.push({ path, status, hsts });
        }
        expect(answers).toEqual([
          { path: '/api/v1/invoices', status: 200, hsts: year },
          { path: '/api/v1/invoices/own-hsts', status: 200, hsts: year },
          { path: '/nowhere', status: 404, hsts: year },
          { path: '/health/ready', status: 200, hsts: year },
          { path: '/api/v1/invoices/a%2Fb', status: 400, hsts: year },
        ]);
        expect(JSON.parse((await hstsOf(trusted.url, '/api/v1/invoices')).body)).toMatchObject({ headers: { 'x-forwarded-proto': 'https' } });
        // The load balancer says the caller came over plain HTTP (or says nothing): none.
        for (const headers of [{}, { 'X-Forwarded-Proto': 'http' }, { 'X-Forwarded-Proto': 'HTTPS, http' }] as Record<string, string>[]) {
          const { hsts, body } = await hstsOf(trusted.url, '/api/v1/invoices', headers);
          expect({ headers, hsts, proto: (JSON.parse(body) as Seen).headers['x-forwarded-proto'] }).toEqual({ headers, hsts: null, proto: 'http' });
        }
        // Another peer's X-Forwarded-Proto is the caller's word: none.
        const fromElsewhere = await hstsOf(untrusted.url, '/api/v1/invoices');
        expect({ hsts: fromElsewhere.hsts, proto: (JSON.parse(fromElsewhere.body) as Seen).headers['x-forwarded-proto'] }).toEqual({ hsts: null, proto: 'http' });
        // HSTS off: the scheme is still passed on.
        const none = await hstsOf(off.url, '/api/v1/invoices');
        expect({ hsts: none.hsts, proto: (JSON.parse(none.body) as Seen).headers['x-forwarded-proto'] }).toEqual({ hsts: null, proto: 'https' });
      } finally {
        await trusted.stop();
        await untrusted.stop();
        await off.stop();
      }
    });
  });

  it('passes JSON bodies, methods and content types unchanged', async () => {
    const payload = JSON.stringify({ client_id: 'cli_1', line_items: [{ description: 'Ünïcode €', quantity: '1.5' }] });
    for (const method of ['POST', 'PUT', 'PATCH', 'DELETE']) {
      const { response, body } = await get('/api/v1/invoices', { method, headers: { 'content-type': 'application/json; charset=utf-8' }, body: payload });
      expect(response.status).toBe(200);
      expect(body).toMatchObject({
        method,
        content_type: 'application/json; charset=utf-8',
        body_bytes: Buffer.byteLength(payload),
        body_sha256: createHash('sha256').update(payload).digest('hex'),
      });
    }
    const form = 'grant_type=client_credentials&client_id=ak_live_x';
    const { body } = await get('/api/v1/auth/token', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: form });
    expect(body).toMatchObject({ upstream: 'auth-service', content_type: 'application/x-www-form-urlencoded', body_bytes: form.length });
  });

  it('forwards a 2 MiB body untouched (the services decide below the gateway limit), and answers a body over the limit 413 itself', async () => {
    const big = Buffer.alloc(2 * MiB, 'a');
    big.write('{"start":true}', 0);
    const { response, body } = await get('/api/v1/invoices', { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(response.status).toBe(200);
    expect(body).toMatchObject({ body_bytes: big.length, body_sha256: createHash('sha256').update(big).digest('hex') });

    const hits = upstreams.get('invoice-service')!.hits();
    const over = await get('/api/v1/invoices', { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(GATEWAY_LIMITS.bodyBytes + 1, 'a') });
    expectProblem(over.response, over.body, 413);
    expect(upstreams.get('invoice-service')!.hits()).toBe(hits);
    // At the limit exactly, it goes through.
    expect((await get('/api/v1/invoices', { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(GATEWAY_LIMITS.bodyBytes, 'a') })).response.status).toBe(200);
  });

  it("relays the upstream's own 413 for an oversized body, in the upstream's words", async () => {
    const limited = await startUpstream('limited', MiB, { drainRejectedBody: true });
    const second = await withRoutes([{ prefix: '/api/v1/invoices', service: 'invoice-service' }], { 'invoice-service': hostPort(limited.url) });
    try {
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`${second.url}/api/v1/invoices`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(2 * MiB, 'a') });
        expect(response.status).toBe(413);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await response.json()).toEqual({ status: 413, detail: 'limited refused the body' });
      }
    } finally {
      await second.stop();
      await limited.app.close();
    }
  });

  it("delivers an upstream's early 413 to a caller uploading slowly, every time, on one kept-alive connection", async () => {
    // The gateway reads a body whole before it opens the upstream request (request buffering), so an
    // upstream that answers on the head alone can never cut a caller's upload short: the caller gets
    // the answer once it has sent its body, and its connection stays usable.
    const early = await startEarlyAnswerServer();
    const second = await withRoutes([{ prefix: '/api/v1/invoices', service: 'invoice-service' }], { 'invoice-service': hostPort(early.url) });
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    const localPorts = new Set<number>();
    type Outcome = { status: number | string; body: string };
    const upload = (): Promise<Outcome> =>
      new Promise((resolve) => {
        const total = MiB / 2;
        const chunk = Buffer.alloc(8 * 1024, 'a');
        let sent = 0;
        const req = request(
          { host: '127.0.0.1', port: new URL(second.url).port, path: '/api/v1/invoices', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': total } },
          (res) => {
            let body = '';
            res.setEncoding('utf8').on('data', (d: string) => (body += d));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
          },
        );
        req.on('socket', (socket) => socket.once('connect', () => localPorts.add(socket.localPort ?? 0)));
        req.on('error', (e: NodeJS.ErrnoException) => resolve({ status: e.code ?? e.message, body: '' }));
        const timer = setTimeout(() => {
          resolve({ status: `no answer within 5 s (${sent} bytes sent)`, body: '' });
          req.destroy();
        }, 5000);
        req.on('close', () => clearTimeout(timer));
        const next = (): void => {
          if (sent >= total) return void req.end();
          sent += chunk.length;
          if (req.write(chunk)) setTimeout(next, 1);
          else req.once('drain', next);
        };
        next();
      });
    const outcomes: Outcome[] = [];
    const answer = JSON.stringify({ status: 413, detail: 'early refused the body' });
    try {
      while (outcomes.length < 10) {
        outcomes.push(await upload());
        const last = outcomes[outcomes.length - 1];
        if (last.status !== 413 || last.body !== answer) break;
      }
    } finally {
      agent.destroy();
      await second.stop();
      await early.close();
    }
    expect(outcomes.filter((o) => o.status !== 413 || o.body !== answer)).toEqual([]);
    expect(outcomes).toHaveLength(10);
    // One connection for all ten: the gateway read each body to its end instead of closing.
    expect(localPorts.size).toBe(1);
  });

  it('settles (413 or a 502 problem, never a hang) when the upstream closes the connection after refusing a body, 25 times', async () => {
    const closing = await startUpstream('closing', MiB);
    const second = await withRoutes([{ prefix: '/api/v1/invoices', service: 'invoice-service' }], { 'invoice-service': hostPort(closing.url) });
    type Outcome = { status: number; type: string | null };
    const unsettled = (o: Outcome): boolean => !([413, 502].includes(o.status) && /^application\/(problem\+)?json/.test(o.type ?? ''));
    const outcomes: Outcome[] = [];
    try {
      while (outcomes.length < 25) {
        const answer = await fetch(`${second.url}/api/v1/invoices`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(2 * MiB, 'a'), signal: AbortSignal.timeout(3000) }).then(
          (r) => ({ status: r.status, type: r.headers.get('content-type') }),
          (e: Error) => ({ status: 0, type: (e.cause as { code?: string } | undefined)?.code ?? e.name }),
        );
        outcomes.push(answer);
        if (unsettled(answer)) break;
      }
    } finally {
      await second.stop();
      await closing.app.close();
    }
    expect(outcomes.filter(unsettled)).toEqual([]);
    expect(outcomes).toHaveLength(25);
  });

  it("finishes a request in flight when told to stop (SIGQUIT), answers it `Connection: close`, and exits without waiting for the caller's keep-alive", async () => {
    const slow = await startUpstream('slow');
    const second = await withRoutes([{ prefix: '/api/v1/slow', service: 'expense-service' }], { 'expense-service': hostPort(slow.url) }, { upstreamTimeoutMs: 5000 });
    const agent = new Agent({ keepAlive: true });
    try {
      const answer = new Promise<{ status: number; connection?: string }>((resolve, reject) => {
        request(`${second.url}/api/v1/slow`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
        })
          .on('error', reject)
          .end();
      });
      // The upstream takes 1.5 s: stop while the request is in flight.
      await new Promise((r) => setTimeout(r, 300));
      const quit = second.quit();
      expect(await answer).toEqual({ status: 200, connection: 'close' });
      expect(await within(1000, quit)).toBe(true);
      // Stopped: new callers are refused, not left hanging.
      await expect(fetch(`${second.url}/health/live`)).rejects.toThrow();
    } finally {
      agent.destroy();
      await second.stop();
      await slow.app.close();
    }
  });

  it('accepts Expect: 100-continue (curl sends it for large bodies) and forwards the body', async () => {
    const payload = Buffer.alloc(64 * 1024, 'b');
    const { status, body } = await new Promise<{ status: number; body: Seen }>((resolve, reject) => {
      const req = request(`${base}/api/v1/invoices`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'content-length': payload.length, expect: '100-continue' },
      });
      req.on('continue', () => req.end(payload));
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as Seen }));
      });
      req.on('error', reject);
    });
    expect(status).toBe(200);
    expect(body).toMatchObject({ body_bytes: payload.length, body_sha256: createHash('sha256').update(payload).digest('hex') });
    // Answered here; the upstream is not asked to continue again.
    expect(body.headers.expect).toBeUndefined();
  });

  it('forwards the caller X-Request-Id upstream and echoes it once', async () => {
    const { response, body } = await get('/api/v1/invoices', { headers: { 'X-Request-Id': 'req-from-caller.1' } });
    expect(body.request_id).toBe('req-from-caller.1');
    expect(response.headers.get('x-request-id')).toBe('req-from-caller.1');
  });

  it('generates an X-Request-Id when absent (or unacceptable) and sends the same one both ways', async () => {
    for (const init of [undefined, { headers: { 'X-Request-Id': 'x'.repeat(300) } }, { headers: { 'X-Request-Id': 'a b' } }]) {
      const { response, body } = await get('/api/v1/clients', init);
      const id = response.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f]{32}$/);
      expect(body.request_id).toBe(id);
    }
  });

  it('sets X-Forwarded-For to the real peer, ignoring a forged one, and X-Forwarded-Proto and -Host', async () => {
    const { body } = await get('/api/v1/auth/token', { headers: { 'X-Forwarded-For': '203.0.113.9', 'X-Forwarded-Proto': 'https', 'X-Forwarded-Host': 'evil.test' } });
    expect(body.forwarded_for).toBe('127.0.0.1');
    // The Host as the caller sent it, port included (the settings page builds its own URLs from it).
    expect(body.headers).toMatchObject({ 'x-forwarded-proto': 'http', 'x-forwarded-host': new URL(base).host });
  });

  it('passes a W3C traceparent on as a hop of the trace: the caller\'s trace id with a parent id of its own, or a new trace', async () => {
    const traceparentOf = (body: Record<string, unknown>) => (body.headers as Record<string, string>).traceparent;
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736';
    const { body } = await get('/api/v1/invoices', { headers: { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01`, tracestate: 'vendor=1' } });
    const [version, trace, parent, flags] = traceparentOf(body).split('-');
    expect({ version, trace, flags }).toEqual({ version: '00', trace: callerTrace, flags: '01' });
    expect(parent).toMatch(/^[0-9a-f]{16}$/);
    expect(parent).not.toBe('00f067aa0ba902b7');
    expect((body.headers as Record<string, string>).tracestate).toBe('vendor=1');
    // The sampling decision is the gateway's (here: every request), whatever the caller's flag says.
    expect(traceparentOf((await get('/api/v1/invoices', { headers: { traceparent: `00-${callerTrace}-00f067aa0ba902b7-00` } })).body)).toMatch(new RegExp(`^00-${callerTrace}-[0-9a-f]{16}-01$`));
    // None, or one that is not valid: a new trace, different every time.
    const fresh = await Promise.all([undefined, 'garbage', `00-${callerTrace}-xyz-01`].map(async (tp) => traceparentOf((await get('/api/v1/invoices', tp ? { headers: { traceparent: tp } } : undefined)).body)));
    for (const tp of fresh) expect(tp).toMatch(/^00-[0-9a-f]{32}-[0-9a-f]{16}-01$/);
    expect(new Set(fresh.map((tp) => tp.split('-')[1])).size).toBe(3);
  });

  it('marks the configured share of requests sampled, and no caller can force it', async () => {
    const tenth = await withRoutes([{ prefix: '/api/v1/invoices', service: 'invoice-service' }], {}, { traceSamplePercent: 10 });
    const none = await withRoutes([{ prefix: '/api/v1/invoices', service: 'invoice-service' }], {}, { traceSamplePercent: 0 });
    try {
      const forced = { headers: { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } };
      const flags = async (url: string, n: number) => {
        const seen: string[] = [];
        for (let i = 0; i < n; i++) seen.push(((await get('/api/v1/invoices', forced, url)).body.headers as Record<string, string>).traceparent.slice(-2));
        return seen;
      };
      const sampled = (await flags(tenth.url, 400)).filter((f) => f === '01').length;
      // 10 % of 400 is 40; a binomial spread of 3 standard deviations either side.
      expect(sampled).toBeGreaterThan(22);
      expect(sampled).toBeLessThan(58);
      expect(new Set(await flags(none.url, 20))).toEqual(new Set(['00']));
    } finally {
      await tenth.stop();
      await none.stop();
    }
  });

  it("relays an upstream's 503 as it is, without retrying it", async () => {
    const flaky = await startUpstream('flaky');
    const second = await withRoutes([{ prefix: '/api/v1/unavailable', service: 'auth-service' }], { 'auth-service': hostPort(flaky.url) });
    try {
      const response = await fetch(`${second.url}/api/v1/unavailable`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('7');
      expect(await response.json()).toEqual({ status: 503, detail: 'flaky dependency down' });
      expect(flaky.hits()).toBe(1);
    } finally {
      await second.stop();
      await flaky.app.close();
    }
  });

  it('lets the longest prefix win', async () => {
    const outer = await startUpstream('outer');
    const inner = await startUpstream('inner');
    const second = await withRoutes(
      [
        { prefix: '/api/v1/invoices', service: 'invoice-service' },
        { prefix: '/api/v1/invoices/exports', service: 'auth-service' },
      ],
      { 'invoice-service': hostPort(outer.url), 'auth-service': hostPort(inner.url) },
    );
    try {
      const upstreamOf = async (path: string) => ((await (await fetch(`${second.url}${path}`)).json()) as Seen).upstream;
      expect(await upstreamOf('/api/v1/invoices/exports')).toBe('inner');
      expect(await upstreamOf('/api/v1/invoices/exports/7')).toBe('inner');
      expect(await upstreamOf('/api/v1/invoices/exportsX')).toBe('outer');
      expect(await upstreamOf('/api/v1/invoices/inv_1')).toBe('outer');
    } finally {
      await second.stop();
      await outer.app.close();
      await inner.app.close();
    }
  });

  it('answers 503 problem+json when the upstream is unreachable, 502 when it drops the connection', async () => {
    // Two routes: one to a closed port, one to an upstream that drops the connection.
    const unreachable: GatewayRoute = { prefix: '/api/v1/payments', service: 'payment-service' };
    const dropping: GatewayRoute = { prefix: '/api/v1/products', service: 'product-service' };
    const second = await withRoutes([unreachable, dropping], { [unreachable.service]: await closedHostPort(), [dropping.service]: hostPort(resetting.url) });
    try {
      const down = await fetch(`${second.url}/api/v1/payments`, { headers: { 'X-Request-Id': 'down-1' } });
      const downBody = (await down.json()) as Record<string, unknown>;
      expectProblem(down, downBody, 503);
      expect(downBody.request_id).toBe('down-1');
      expect(down.headers.get('retry-after')).toBe('1');
      // Still 503 the second time: nginx does not mark the only server down and answer something else.
      expect((await fetch(`${second.url}/api/v1/payments`)).status).toBe(503);

      const reset = await fetch(`${second.url}/api/v1/products`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const resetBody = (await reset.json()) as Record<string, unknown>;
      expectProblem(reset, resetBody, 502);
      expect(resetBody.title).toBe('Bad gateway');
    } finally {
      await second.stop();
    }
  });

  describe('several instances of a service', () => {
    const route: GatewayRoute[] = [{ prefix: '/api/v1/invoices', service: 'invoice-service' }];
    const json = { 'content-type': 'application/json' };

    it('answers every request from the instance that is up when another refuses connections, GET and POST, never a 503', async () => {
      const live = await startUpstream('live');
      // The refusing instance first: the very first request is tried on it.
      const second = await withRoutes(route, { 'invoice-service': [await closedHostPort(), hostPort(live.url)] });
      try {
        const answers: { method: string; status: number; upstream: unknown }[] = [];
        for (let i = 0; i < 10; i++) {
          for (const method of ['GET', 'POST']) {
            const response = await fetch(`${second.url}/api/v1/invoices/${i}`, { method, headers: json, body: method === 'POST' ? JSON.stringify({ i }) : undefined });
            answers.push({ method, status: response.status, upstream: ((await response.json()) as Seen).upstream });
          }
        }
        // And many at once, on several connections.
        const parallel = await Promise.all(
          Array.from({ length: 20 }, (_, i) => fetch(`${second.url}/api/v1/invoices`, i % 2 ? { method: 'POST', headers: json, body: '{}' } : undefined).then(async (r) => ({ method: i % 2 ? 'POST' : 'GET', status: r.status, upstream: ((await r.json()) as Seen).upstream }))),
        );
        expect([...answers, ...parallel].filter((a) => a.status !== 200 || a.upstream !== 'live')).toEqual([]);
        // Each request reached the live instance exactly once: a refused connect sent nothing.
        expect(live.hits()).toBe(40);
      } finally {
        await second.stop();
        await live.app.close();
      }
    });

    it('answers 503 problem+json with Retry-After when every instance refuses connections', async () => {
      const second = await withRoutes(route, { 'invoice-service': [await closedHostPort(), await closedHostPort(), await closedHostPort()] });
      try {
        for (const init of [{ headers: { 'X-Request-Id': 'all-down-1' } }, { method: 'POST', headers: { ...json, 'X-Request-Id': 'all-down-2' }, body: '{}' }]) {
          const response = await fetch(`${second.url}/api/v1/invoices`, init);
          const body = (await response.json()) as Record<string, unknown>;
          expectProblem(response, body, 503);
          expect(body.request_id).toBe(init.headers['X-Request-Id']);
          expect(response.headers.get('retry-after')).toBe('1');
        }
      } finally {
        await second.stop();
      }
    });

    it('answers 502 when an instance drops a POST it has read, and never sends that POST to another instance', async () => {
      const dropping = await startDroppingServer();
      const live = await startUpstream('live');
      const second = await withRoutes(route, { 'invoice-service': [hostPort(dropping.url), hostPort(live.url)] });
      try {
        const statuses: number[] = [];
        for (let i = 0; i < 6; i++) {
          const response = await fetch(`${second.url}/api/v1/invoices`, { method: 'POST', headers: json, body: JSON.stringify({ i }) });
          if (response.status === 502) expectProblem(response, (await response.json()) as Record<string, unknown>, 502);
          else await response.text();
          statuses.push(response.status);
        }
        // Round robin: some POSTs reached the dropping instance. Each of those is a 502 and went
        // nowhere else; each of the others reached the live one. Six POSTs, six deliveries.
        expect(statuses.filter((s) => s === 502).length).toBeGreaterThan(0);
        expect(statuses.filter((s) => s !== 502 && s !== 200)).toEqual([]);
        expect(dropping.received()).toEqual(statuses.filter((s) => s === 502).map(() => 'POST'));
        expect(live.hits()).toBe(statuses.filter((s) => s === 200).length);
        expect(dropping.received().length + live.hits()).toBe(6);

        // A PATCH likewise.
        const patchesBefore = live.hits();
        let patched502 = 0;
        for (let i = 0; i < 4; i++) {
          const response = await fetch(`${second.url}/api/v1/invoices/inv_1`, { method: 'PATCH', headers: json, body: '{}' });
          await response.text();
          if (response.status === 502) patched502++;
        }
        expect(patched502).toBeGreaterThan(0);
        expect(dropping.received().filter((m) => m === 'PATCH')).toHaveLength(patched502);
        expect(live.hits() - patchesBefore).toBe(4 - patched502);

        // A GET the dropping instance read is passed on: it changes nothing, and the caller gets its answer.
        const droppedBefore = dropping.received().length;
        const gets = await Promise.all(Array.from({ length: 6 }, () => fetch(`${second.url}/api/v1/invoices`).then(async (r) => ({ status: r.status, upstream: ((await r.json()) as Seen).upstream }))));
        expect(gets.filter((g) => g.status !== 200 || g.upstream !== 'live')).toEqual([]);
        expect(dropping.received().length).toBeGreaterThan(droppedBefore);
      } finally {
        await second.stop();
        await live.app.close();
        await dropping.close();
      }
    });

    it('still answers 502, not 503, when a POST refused by one instance is then dropped by the next', async () => {
      const dropping = await startDroppingServer();
      const second = await withRoutes(route, { 'invoice-service': [await closedHostPort(), hostPort(dropping.url)] });
      try {
        for (let i = 0; i < 4; i++) {
          const response = await fetch(`${second.url}/api/v1/invoices`, { method: 'POST', headers: json, body: '{}' });
          expectProblem(response, (await response.json()) as Record<string, unknown>, 502);
        }
        expect(dropping.received()).toEqual(['POST', 'POST', 'POST', 'POST']);
      } finally {
        await second.stop();
        await dropping.close();
      }
    });
  });

  it('answers 504 problem+json when the upstream is slower than the upstream timeout', async () => {
    const slow = await startUpstream('slow');
    const second = await withRoutes([{ prefix: '/api/v1/slow', service: 'expense-service' }], { 'expense-service': hostPort(slow.url) }, { upstreamTimeoutMs: 300 });
    try {
      const started = Date.now();
      const r = await fetch(`${second.url}/api/v1/slow`);
      expectProblem(r, (await r.json()) as Record<string, unknown>, 504);
      expect(Date.now() - started).toBeLessThan(1400);
    } finally {
      await second.stop();
      await slow.app.close();
    }
  });

  it('serves its own health endpoints on the public port', async () => {
    expect((await get('/health/live')).response.status).toBe(200);
    const ready = await get('/health/ready');
    expect(ready.response.status).toBe(200);
    expect(ready.response.headers.get('x-request-id')).toMatch(/^[0-9a-f]{32}$/);
    expect(ready.body).toMatchObject({ status: 'ready' });
  });

  it('serves its connection counters on the status listener only', async () => {
    const status = await fetch(`${gateway.statusUrl}/stub_status`);
    expect(status.status).toBe(200);
    expect(await status.text()).toMatch(/^Active connections: \d+/);
    expect((await fetch(`${gateway.statusUrl}/api/v1/invoices`)).status).toBe(404);
  });

  it('honours Connection: close and HTTP/1.0 on proxied routes: answers Connection: close and closes the socket at once', async () => {
    for (const [name, text] of [
      ['HTTP/1.1, Connection: close', 'GET /api/v1/invoices HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\n\r\n'],
      ['HTTP/1.0', 'GET /api/v1/invoices HTTP/1.0\r\nHost: gw.test\r\n\r\n'],
      ['HTTP/1.0 POST', 'POST /api/v1/invoices HTTP/1.0\r\nHost: gw.test\r\nContent-Type: application/json\r\nContent-Length: 2\r\n\r\n{}'],
      // The upstream answers `Connection: keep-alive` and `Keep-Alive` of its own: not the caller's business.
      ['HTTP/1.0, upstream keep-alive fields', 'GET /api/v1/invoices/hop-by-hop HTTP/1.0\r\nHost: gw.test\r\n\r\n'],
    ]) {
      const exchange = await rawExchange(base, text, 2000);
      expect({ name, status: exchange.status, connection: exchange.headers.connection, keepAlive: exchange.headers['keep-alive'], closedByServer: exchange.closedByServer }).toEqual({
        name,
        status: 200,
        connection: 'close',
        keepAlive: undefined,
        closedByServer: true,
      });
    }
    // Without either, the caller's connection stays open for its next request, after the gateway's own answers too.
    for (const [path, status] of [['/api/v1/invoices', 200], ['/no-such-route', 404]] as const) {
      const kept = await rawExchange(base, `GET ${path} HTTP/1.1\r\nHost: gw.test\r\n\r\n`, 500);
      expect({ path, status: kept.status, connection: kept.headers.connection, closedByServer: kept.closedByServer }).toEqual({ path, status, connection: 'keep-alive', closedByServer: false });
    }
  });

  it('forwards none of the standard hop-by-hop fields, either way (RFC 9110 section 7.6.1)', async () => {
    const sent = await rawExchange(
      base,
      'GET /api/v1/invoices HTTP/1.1\r\nHost: gw.test\r\nConnection: close\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nProxy-Connection: keep-alive\r\nUpgrade: websocket\r\nX-End-To-End: 1\r\n\r\n',
    );
    expect(sent.status).toBe(200);
    const seen = JSON.parse(sent.body) as Seen;
    expect(Object.keys(seen.headers)).toEqual(expect.arrayContaining(['x-end-to-end']));
    expect(Object.keys(seen.headers).filter((name) => ['keep-alive', 'te', 'proxy-connection', 'upgrade'].includes(name))).toEqual([]);
    // The upstream connection is the gateway's, kept alive whatever the caller asked for its own.
    expect(seen.headers.connection ?? 'keep-alive').toBe('keep-alive');

    const answered = await rawExchange(base, 'GET /api/v1/invoices/hop-by-hop HTTP/1.1\r\nHost: gw.test\r\n\r\n', 500);
    expect(answered.status).toBe(200);
    expect(answered.headers['x-end-to-end']).toBe('1');
    // The gateway's own keep-alive, not the upstream's.
    expect(answered.headers.connection).toBe('keep-alive');
    expect(answered.headers['keep-alive']).not.toBe('timeout=5');
  });

  it('answers a request line that is not valid percent-encoding 400 and one over the line limit 414, as problems that do not echo it', async () => {
    const long = 'a'.repeat(GATEWAY_LIMITS.lineBytes + 100);
    for (const [path, status] of [
      ['/api/v1/invoices/%zz', 400],
      ['/%zz', 400],
      [`/${long}`, 414],
      [`/api/v1/invoices/${long}`, 414],
      [`/api/v1/invoices?q=${long}`, 414],
    ] as const) {
      const response = await fetch(`${base}${path}`);
      const text = await response.text();
      expect({ path: path.slice(0, 40), status: response.status }).toEqual({ path: path.slice(0, 40), status });
      expectProblem(response, JSON.parse(text) as Record<string, unknown>, status);
      expect(text).not.toMatch(/%zz|a{100}/);
    }
    expect(JSON.parse(await (await fetch(`${base}/${long}`)).text())).toMatchObject({ title: 'URI too long', type: expect.stringMatching(/\/uri-too-long$/) });
    // A well-formed escape the gateway cannot judge (not UTF-8) is the service's to refuse, in its format.
    // (The throwaway upstream is Fastify: its own 400.)
    expect((await get('/api/v1/invoices/%ff')).body).toMatchObject({ statusCode: 400, code: 'FST_ERR_BAD_URL' });
    // The 8000 octets RFC 9112 asks for are forwarded.
    const atLimit = `/api/v1/invoices/${'b'.repeat(8000 - '/api/v1/invoices/'.length)}`;
    const { response, body } = await get(atLimit);
    expect(response.status).toBe(200);
    expect(body.url).toBe(atLimit);
  });

  it('answers a header over the line limit, or a head over the buffers, 431 problem+json', async () => {
    const hits = upstreams.get('invoice-service')!.hits();
    const one = await get('/api/v1/invoices', { headers: { 'x-big': 'a'.repeat(GATEWAY_LIMITS.lineBytes + 10) } });
    expectProblem(one.response, one.body, 431);
    const many = Object.fromEntries(Array.from({ length: GATEWAY_LIMITS.headBuffers + 1 }, (_, i) => [`x-big-${i}`, 'a'.repeat(GATEWAY_LIMITS.lineBytes - 100)]));
    const all = await get('/api/v1/invoices', { headers: many });
    expectProblem(all.response, all.body, 431);
    expect(upstreams.get('invoice-service')!.hits()).toBe(hits);
  });

  it('answers two Host headers, or an HTTP/1.1 request without one, 400 problem+json and forwards neither (RFC 9112 section 3.2)', async () => {
    const upstream = upstreams.get('invoice-service');
    const hitsBefore = upstream?.hits();
    for (const text of [
      'GET /api/v1/invoices HTTP/1.1\r\nHost: gw.test\r\nHost: evil.test\r\n\r\n',
      'GET /api/v1/invoices HTTP/1.1\r\nHost: gw.test\r\nhost: gw.test\r\n\r\n',
      'GET /api/v1/invoices HTTP/1.0\r\nHost: gw.test\r\nHOST: evil.test\r\n\r\n',
      'GET /api/v1/invoices HTTP/1.1\r\n\r\n',
    ]) {
      const body = expectRawProblem(await rawExchange(base, text, 500), 400);
      expect(JSON.stringify(body)).not.toContain('evil');
    }
    expect(upstream?.hits()).toBe(hitsBefore);
    // HTTP/1.0 may omit it.
    expect((await rawExchange(base, 'GET /api/v1/invoices HTTP/1.0\r\n\r\n')).status).toBe(200);
  });

  it('opens its upstream connections from the proxy bind address when set', async () => {
    // Linux routes all of 127.0.0.0/8 on lo: the upstream on 127.0.0.1 accepts from 127.0.0.2.
    const second = await withRoutes([{ prefix: '/api/v1/invoices', service: 'invoice-service' }], {}, { proxyBind: '127.0.0.2' });
    try {
      const seen = (await (await fetch(`${second.url}/api/v1/invoices`)).json()) as Seen;
      expect(seen.peer).toBe('127.0.0.2');
      // Unset (the suite's gateway): the system's choice, the upstream's own address here.
      expect((await get('/api/v1/invoices')).body.peer).toBe('127.0.0.1');
    } finally {
      await second.stop();
    }
  });

  it('writes one JSON access line per request, with the path the caller asked for, the request id and the trace id', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'gateway-log-'));
    const logFile = join(dir, 'access.log');
    const second = await withRoutes([{ prefix: '/api/v1/invoices', service: 'invoice-service' }], {}, { accessLog: logFile });
    try {
      await fetch(`${second.url}/api/v1/invoices/inv_1?limit=5`, { headers: { 'X-Request-Id': 'log-1', traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' } });
      await fetch(`${second.url}/nowhere/at/all`, { headers: { 'X-Request-Id': 'log-2' } });
    } finally {
      await second.stop();
    }
    const lines = readFileSync(logFile, 'utf8').trim().split('\n').map((l) => JSON.parse(l) as Record<string, unknown>);
    rmSync(dir, { recursive: true, force: true });
    expect(lines.find((l) => l.request_id === 'log-1')).toMatchObject({ method: 'GET', path: '/api/v1/invoices/inv_1', status: 200, trace_id: '4bf92f3577b34da6a3ce929d0e0e4736' });
    // An error page is logged under the path asked for, not the internal location that answered it.
    expect(lines.find((l) => l.request_id === 'log-2')).toMatchObject({ path: '/nowhere/at/all', status: 404 });
  });

  it('keeps its upstream connections alive: many requests, few connections', async () => {
    const counting = await startUpstream('counting');
    let connections = 0;
    counting.app.server.on('connection', () => connections++);
    const second = await withRoutes([{ prefix: '/api/v1/invoices', service: 'invoice-service' }], { 'invoice-service': hostPort(counting.url) });
    try {
      for (let i = 0; i < 50; i++) expect((await fetch(`${second.url}/api/v1/invoices/${i}`)).status).toBe(200);
      expect(connections).toBe(1);
    } finally {
      await second.stop();
      await counting.app.close();
    }
  });
});

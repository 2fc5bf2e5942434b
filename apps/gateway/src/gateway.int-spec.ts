import { GATEWAY_ROUTES, SERVICES, ServiceName } from '@invoicing/contracts';
import { PROBLEM_TYPE_BASE } from '@invoicing/service-kit';
import Fastify, { FastifyInstance } from 'fastify';
import { createHash } from 'node:crypto';
import { Agent, request } from 'node:http';
import { AddressInfo, createServer, Server, Socket } from 'node:net';
import type { GatewayConfig } from './config';
import { createGateway, Gateway, listenGateway } from './gateway-app';
import { MAX_URL_LENGTH } from './http/request-guards';

/** What a throwaway upstream saw, echoed as JSON. */
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

/** A TCP server that accepts and immediately drops every connection: a crashing upstream. */
async function startResettingServer(): Promise<{ server: Server; url: string }> {
  const server = createServer((socket) => socket.destroy());
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  return { server, url: `http://127.0.0.1:${(server.address() as AddressInfo).port}` };
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

async function closedPortUrl(): Promise<string> {
  return `http://127.0.0.1:${await closedPort()}`;
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

function configFor(upstreams: Record<ServiceName, string>, overrides: Partial<GatewayConfig> = {}): GatewayConfig {
  return {
    NODE_ENV: 'test',
    HOST: '127.0.0.1',
    PORT: 0,
    METRICS_PORT: 0,
    LOG_LEVEL: 'silent',
    SHUTDOWN_GRACE_SECONDS: 1,
    UPSTREAM_TIMEOUT_MS: 500,
    upstreams,
    ...overrides,
  };
}

async function listen(gateway: Gateway): Promise<string> {
  return gateway.fastify.listen({ port: 0, host: '127.0.0.1' });
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

describe('gateway (in front of throwaway upstreams)', () => {
  const upstreams = new Map<ServiceName, Awaited<ReturnType<typeof startUpstream>>>();
  let resetting: Awaited<ReturnType<typeof startResettingServer>>;
  let gateway: Gateway;
  let base: string;

  /** Every service pointing at its throwaway upstream; single tests override one entry. */
  const mainUpstreams = (): Record<ServiceName, string> =>
    Object.fromEntries(SERVICE_NAMES.map((name) => [name, upstreams.get(name)?.url ?? 'http://127.0.0.1:1'])) as Record<ServiceName, string>;

  beforeAll(async () => {
    for (const name of SERVICE_NAMES) upstreams.set(name, await startUpstream(name));
    resetting = await startResettingServer();
    gateway = await createGateway(configFor(mainUpstreams()));
    base = await listen(gateway);
  });

  afterAll(async () => {
    await gateway?.fastify.close();
    for (const { app } of upstreams.values()) await app.close();
    await new Promise((r) => resetting?.server.close(r));
  });

  async function get(path: string, init?: RequestInit): Promise<{ response: Response; body: Record<string, unknown> }> {
    const response = await fetch(`${base}${path}`, init);
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
    for (const path of ['/api/v1/invoicesX', '/api/v1/invoices.json', '/settingsX', '/api/v1', '/', '/api/v2/invoices']) {
      const { response, body } = await get(path);
      expectProblem(response, body, 404);
    }
  });

  it('passes the query string through byte for byte', async () => {
    const query = '?limit=10&starting_after=inv_01J&flag&x=a%20b+c&x=%E2%82%AC&empty=';
    const { body } = await get(`/api/v1/invoices${query}`);
    expect(body.url).toBe(`/api/v1/invoices${query}`);
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

  it('forwards a 2 MiB body untouched: the gateway itself enforces no limit', async () => {
    const big = Buffer.alloc(2 * MiB, 'a');
    big.write('{"start":true}', 0);
    const { response, body } = await get('/api/v1/invoices', { method: 'POST', headers: { 'content-type': 'application/json' }, body: big });
    expect(response.status).toBe(200);
    expect(body).toMatchObject({ body_bytes: big.length, body_sha256: createHash('sha256').update(big).digest('hex') });
  });

  it("relays the upstream's own 413 for an oversized body, in the upstream's words", async () => {
    const limited = await startUpstream('limited', MiB, { drainRejectedBody: true });
    const second = await createGateway(configFor({ ...mainUpstreams(), 'invoice-service': limited.url }), [{ prefix: '/api/v1/invoices', service: 'invoice-service' }]);
    const url = await listen(second);
    try {
      for (let i = 0; i < 5; i++) {
        const response = await fetch(`${url}/api/v1/invoices`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(2 * MiB, 'a') });
        expect(response.status).toBe(413);
        expect(response.headers.get('content-type')).toMatch(/^application\/problem\+json/);
        expect(await response.json()).toEqual({ status: 413, detail: 'limited refused the body' });
      }
    } finally {
      await second.fastify.close();
      await limited.app.close();
    }
  });

  it("delivers an upstream's early 413 to a caller still uploading, every time, and reads the rest of the body on an open connection", async () => {
    const early = await startEarlyAnswerServer();
    const second = await createGateway(configFor({ ...mainUpstreams(), 'invoice-service': early.url }), [{ prefix: '/api/v1/invoices', service: 'invoice-service' }]);
    const url = new URL(await listen(second));
    // The answer arrives while the caller has sent little of its body. The gateway
    // once handed undici the caller's own request as the body: undici's teardown of the upstream
    // connection (answered before the body was sent) then destroyed the caller's socket, under the
    // answer, and the caller read EPIPE or a reset (seen through the compose stack).
    let connections = 0;
    second.fastify.server.on('connection', () => connections++);
    const agent = new Agent({ keepAlive: true, maxSockets: 1 });
    type Outcome = { status: number | string; body: string; sent: number };
    const upload = (): Promise<Outcome> =>
      new Promise((resolve) => {
        // Slowly enough that the answer comes mid-upload: chunks under the request's high-water
        // mark, a millisecond apart. Settled once the answer is read and the upload is finished,
        // as a client does before it sends the next request on the connection.
        const total = MiB / 2;
        const chunk = Buffer.alloc(8 * 1024, 'a');
        let sent = 0;
        let answered: Omit<Outcome, 'sent'> | null = null;
        let finished = false;
        const settle = (): void => void (answered && finished && resolve({ ...answered, sent: answeredAt }));
        let answeredAt = 0;
        const req = request(
          { host: url.hostname, port: url.port, path: '/api/v1/invoices', method: 'POST', agent, headers: { 'content-type': 'application/json', 'content-length': total } },
          (res) => {
            answeredAt = sent;
            let body = '';
            res.setEncoding('utf8').on('data', (d: string) => (body += d));
            res.on('end', () => {
              answered = { status: res.statusCode ?? 0, body };
              settle();
            });
          },
        );
        req.on('finish', () => {
          finished = true;
          settle();
        });
        req.on('error', (e: NodeJS.ErrnoException) => resolve({ status: e.code ?? e.message, body: '', sent }));
        // Never a hang: an upload the gateway cut off may see neither an error nor its end.
        const timer = setTimeout(() => {
          resolve({ status: `no answer and end within 3 s (${sent} bytes sent)`, body: '', sent });
          req.destroy();
        }, 3000);
        req.on('close', () => {
          clearTimeout(timer);
          // A no-op once settled; otherwise the connection was cut under the upload.
          resolve({ status: answered ? 'cut off after the answer' : 'cut off without an answer', body: answered?.body ?? '', sent });
        });
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
      while (outcomes.length < 20) {
        outcomes.push(await upload());
        const last = outcomes[outcomes.length - 1];
        if (last.status !== 413 || last.body !== answer) break;
      }
    } finally {
      agent.destroy();
      second.fastify.server.closeAllConnections();
      await second.fastify.close();
      await early.close();
    }
    expect(outcomes.filter((o) => o.status !== 413 || o.body !== answer)).toEqual([]);
    // The answers did come early (else this test proves nothing)...
    expect(outcomes.filter((o) => o.sent < MiB / 2).length).toBeGreaterThan(10);
    // ...and the gateway read each body to its end instead of closing: one connection for all.
    expect(connections).toBe(1);
  });

  it('settles (413 or a 502 problem, never a hang) when the upstream closes the connection mid-upload, 25 times, and closes promptly after each', async () => {
    // The upstream refuses the 2 MiB body on its Content-Length and closes: the caller gets its answer
    // while still uploading, and the gateway drains the rest of the upload. It once hung here: closed
    // right after the answer (as each round does), the gateway waited for that connection, idle once
    // drained, until the keep-alive timeout (72 s). Each round is bounded, so a hang fails in seconds.
    const closing = await startUpstream('closing', MiB);
    type Outcome = { status: number; type: string | null; closed: string };
    const unsettled = (o: Outcome): boolean =>
      o.closed !== 'promptly' || o.type === 'TimeoutError' || (o.status !== 0 && !([413, 502].includes(o.status) && /^application\/problem\+json/.test(o.type ?? '')));
    const outcomes: Outcome[] = [];
    try {
      while (outcomes.length < 25) {
        const second = await createGateway(configFor({ ...mainUpstreams(), 'invoice-service': closing.url }), [{ prefix: '/api/v1/invoices', service: 'invoice-service' }]);
        const url = await listen(second);
        // A connection error while the caller still uploads is acceptable (status 0); a timeout is not.
        const answer = await fetch(`${url}/api/v1/invoices`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: Buffer.alloc(2 * MiB, 'a'), signal: AbortSignal.timeout(3000) }).then(
          (r) => ({ status: r.status, type: r.headers.get('content-type') }),
          (e: Error) => ({ status: 0, type: (e.cause as { code?: string } | undefined)?.code ?? e.name }),
        );
        const closed = second.fastify.close();
        const prompt = await within(3000, closed);
        if (!prompt) {
          second.fastify.server.closeAllConnections();
          await closed;
        }
        outcomes.push({ ...answer, closed: prompt ? 'promptly' : 'not within 3 s' });
        if (unsettled(outcomes[outcomes.length - 1])) break;
      }
    } finally {
      await closing.app.close();
    }
    expect(outcomes.filter(unsettled)).toEqual([]);
    expect(outcomes).toHaveLength(25);
  });

  it("gives an answer sent while it closes `Connection: close`, and closes without waiting for the caller's keep-alive", async () => {
    const slow = await startUpstream('slow');
    const second = await createGateway(configFor({ ...mainUpstreams(), 'expense-service': slow.url }, { UPSTREAM_TIMEOUT_MS: 5000 }), [{ prefix: '/api/v1/slow', service: 'expense-service' }]);
    const url = await listen(second);
    const agent = new Agent({ keepAlive: true });
    try {
      const answer = new Promise<{ status: number; connection?: string }>((resolve, reject) => {
        request(`${url}/api/v1/slow`, { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve({ status: res.statusCode ?? 0, connection: res.headers.connection }));
        })
          .on('error', reject)
          .end();
      });
      // The upstream takes 1.5 s: close while the request is in flight.
      await new Promise((r) => setTimeout(r, 300));
      const closed = second.fastify.close();
      expect(await answer).toEqual({ status: 200, connection: 'close' });
      // Not kept alive for the agent's next request: the close is done once the answer is.
      expect(await within(1000, closed)).toBe(true);
    } finally {
      agent.destroy();
      await second.fastify.close();
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
  });

  it('forwards the caller X-Request-Id upstream and echoes it', async () => {
    const { response, body } = await get('/api/v1/invoices', { headers: { 'X-Request-Id': 'req-from-caller.1' } });
    expect(body.request_id).toBe('req-from-caller.1');
    expect(response.headers.get('x-request-id')).toBe('req-from-caller.1');
  });

  it('generates an X-Request-Id when absent (or unacceptable) and sends the same one both ways', async () => {
    for (const init of [undefined, { headers: { 'X-Request-Id': 'x'.repeat(300) } }]) {
      const { response, body } = await get('/api/v1/clients', init);
      const id = response.headers.get('x-request-id');
      expect(id).toMatch(/^[0-9a-f-]{36}$/);
      expect(body.request_id).toBe(id);
    }
  });

  it('sets X-Forwarded-For to the real peer, ignoring a forged one', async () => {
    const { body } = await get('/api/v1/auth/token', { headers: { 'X-Forwarded-For': '203.0.113.9' } });
    expect(body.forwarded_for).toBe('127.0.0.1');
  });

  it("relays an upstream's 503 as it is, without retrying it", async () => {
    const flaky = await startUpstream('flaky');
    const second = await createGateway(configFor({ ...mainUpstreams(), 'auth-service': flaky.url }), [{ prefix: '/api/v1/unavailable', service: 'auth-service' }]);
    const url = await listen(second);
    try {
      const response = await fetch(`${url}/api/v1/unavailable`);
      expect(response.status).toBe(503);
      expect(response.headers.get('retry-after')).toBe('7');
      expect(await response.json()).toEqual({ status: 503, detail: 'flaky dependency down' });
      expect(flaky.hits()).toBe(1);
    } finally {
      await second.fastify.close();
      await flaky.app.close();
    }
  });

  it('lets the longest prefix win', async () => {
    const outer = await startUpstream('outer');
    const inner = await startUpstream('inner');
    const second = await createGateway(configFor({ ...mainUpstreams(), 'invoice-service': outer.url, 'auth-service': inner.url }), [
      { prefix: '/api/v1/invoices', service: 'invoice-service' },
      { prefix: '/api/v1/invoices/exports', service: 'auth-service' },
    ]);
    const url = await listen(second);
    try {
      const upstreamOf = async (path: string) => ((await (await fetch(`${url}${path}`)).json()) as Seen).upstream;
      expect(await upstreamOf('/api/v1/invoices/exports')).toBe('inner');
      expect(await upstreamOf('/api/v1/invoices/exports/7')).toBe('inner');
      expect(await upstreamOf('/api/v1/invoices/exportsX')).toBe('outer');
      expect(await upstreamOf('/api/v1/invoices/inv_1')).toBe('outer');
    } finally {
      await second.fastify.close();
      await outer.app.close();
      await inner.app.close();
    }
  });

  it('answers 503 problem+json when the upstream is unreachable, 502 when it drops the connection', async () => {
    const second = await createGateway(configFor({ ...mainUpstreams(), 'payment-service': await closedPortUrl(), 'product-service': resetting.url }), [
      { prefix: '/api/v1/payments', service: 'payment-service' },
      { prefix: '/api/v1/products', service: 'product-service' },
    ]);
    const url = await listen(second);
    try {
      const down = await fetch(`${url}/api/v1/payments`, { headers: { 'X-Request-Id': 'down-1' } });
      const downBody = (await down.json()) as Record<string, unknown>;
      expectProblem(down, downBody, 503);
      expect(downBody.request_id).toBe('down-1');
      expect(down.headers.get('retry-after')).toBe('1');

      const reset = await fetch(`${url}/api/v1/products`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' });
      const resetBody = (await reset.json()) as Record<string, unknown>;
      expectProblem(reset, resetBody, 502);
      expect(resetBody.title).toBe('Bad gateway');
    } finally {
      await second.fastify.close();
    }
  });

  it('answers 504 problem+json when the upstream is slower than UPSTREAM_TIMEOUT_MS', async () => {
    const slow = await startUpstream('slow');
    const second = await createGateway(configFor({ ...mainUpstreams(), 'expense-service': slow.url }, { UPSTREAM_TIMEOUT_MS: 300 }), [
      { prefix: '/api/v1/slow', service: 'expense-service' },
    ]);
    const url = await listen(second);
    try {
      const started = Date.now();
      const r = await fetch(`${url}/api/v1/slow`);
      expectProblem(r, (await r.json()) as Record<string, unknown>, 504);
      expect(Date.now() - started).toBeLessThan(1400);
    } finally {
      await second.fastify.close();
      await slow.app.close();
    }
  });

  it('serves its own health endpoints on the public port', async () => {
    expect((await get('/health/live')).response.status).toBe(200);
    const ready = await get('/health/ready');
    expect(ready.response.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ready' });
  });

  it('serves its metrics on METRICS_PORT only: on the public port /metrics is an unknown path (404 problem)', async () => {
    const metricsPort = await closedPort();
    const config = configFor(mainUpstreams(), { METRICS_PORT: metricsPort });
    const second = await createGateway(config);
    await listenGateway(second, config);
    const url = `http://127.0.0.1:${(second.fastify.server.address() as AddressInfo).port}`;
    try {
      expect((await fetch(`${url}/api/v1/invoices/inv_1`)).status).toBe(200);
      for (const path of ['/metrics', '/metrics/', '/METRICS']) {
        const response = await fetch(`${url}${path}`);
        const text = await response.text();
        expect({ path, status: response.status, prometheus: text.includes('http_request_duration_seconds') }).toEqual({ path, status: 404, prometheus: false });
        expectProblem(response, JSON.parse(text) as Record<string, unknown>, 404);
      }
      const metrics = await fetch(`http://127.0.0.1:${metricsPort}/metrics`);
      expect(metrics.status).toBe(200);
      const text = await metrics.text();
      expect(text).toContain('http_request_duration_seconds');
      expect(text).toContain('service="gateway"');
      expect(text).toMatch(/route="\/api\/v1\/invoices\/\*"/);
      // The metrics listener serves nothing else.
      expect((await fetch(`http://127.0.0.1:${metricsPort}/api/v1/invoices`)).status).toBe(404);
    } finally {
      await second.fastify.close();
    }
    // Closed with the public app.
    expect(second.metrics.server.listening).toBe(false);
    // METRICS_PORT=0: no listener (the suite's own gateway).
    expect(gateway.metrics.server.listening).toBe(false);
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
    // Without either, the caller's connection stays open for its next request, after the gateway's
    // own answers too (a bodyless request once counted as one with an undeclared body: closed).
    for (const [path, status] of [['/api/v1/invoices', 200], ['/no-such-route', 404]] as const) {
      const kept = await rawExchange(base, `GET ${path} HTTP/1.1\r\nHost: gw.test\r\n\r\n`, 500);
      expect({ path, status: kept.status, connection: kept.headers.connection, closedByServer: kept.closedByServer }).toEqual({ path, status, connection: 'keep-alive', closedByServer: false });
    }
  });

  it('forwards no hop-by-hop field, either way (RFC 9110 section 7.6.1)', async () => {
    // A caller's Keep-Alive made the upstream client refuse the request: a 502.
    const sent = await rawExchange(
      base,
      'GET /api/v1/invoices HTTP/1.1\r\nHost: gw.test\r\nConnection: close, X-Hop\r\nX-Hop: 1\r\nKeep-Alive: timeout=5\r\nTE: trailers\r\nProxy-Connection: keep-alive\r\nX-End-To-End: 1\r\n\r\n',
    );
    expect(sent.status).toBe(200);
    const seen = JSON.parse(sent.body) as Seen;
    expect(Object.keys(seen.headers)).toEqual(expect.arrayContaining(['x-end-to-end']));
    expect(Object.keys(seen.headers).filter((name) => ['x-hop', 'keep-alive', 'te', 'proxy-connection'].includes(name))).toEqual([]);
    expect(seen.headers.connection).not.toMatch(/close|x-hop/i);

    const answered = await rawExchange(base, 'GET /api/v1/invoices/hop-by-hop HTTP/1.1\r\nHost: gw.test\r\n\r\n', 500);
    expect(answered.status).toBe(200);
    expect(answered.headers['x-end-to-end']).toBe('1');
    expect(answered.headers['x-upstream-hop']).toBeUndefined();
    // The gateway's own keep-alive, not the upstream's.
    expect(answered.headers.connection).toBe('keep-alive');
    expect(answered.headers['keep-alive']).not.toBe('timeout=5');
  });

  it('answers a URL that is not valid percent-encoding 400, and one over MAX_URL_LENGTH 414, as problems that do not echo it', async () => {
    const long = 'a'.repeat(10000);
    for (const [path, status] of [
      ['/%ff', 400],
      ['/api/v1/invoices/%ff', 400],
      ['/api/v1/invoices/%zz', 400],
      [`/${long}`, 414],
      [`/api/v1/invoices/${long}`, 414],
      [`/api/v1/invoices?q=${long}`, 414],
    ] as const) {
      const response = await fetch(`${base}${path}`);
      const text = await response.text();
      expect({ path: path.slice(0, 40), status: response.status }).toEqual({ path: path.slice(0, 40), status });
      expectProblem(response, JSON.parse(text) as Record<string, unknown>, status);
      expect(text).not.toMatch(/%ff|%zz|a{100}/);
    }
    expect(JSON.parse(await (await fetch(`${base}/${long}`)).text())).toMatchObject({ title: 'URI too long', type: expect.stringMatching(/\/uri-too-long$/) });
    // Up to the limit, the URL is forwarded.
    const atLimit = `/api/v1/invoices/${'b'.repeat(MAX_URL_LENGTH - '/api/v1/invoices/'.length)}`;
    const { response, body } = await get(atLimit);
    expect(response.status).toBe(200);
    expect(body.url).toBe(atLimit);
    expect((await fetch(`${base}${atLimit}b`)).status).toBe(414);
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

  it('opens its upstream connections from UPSTREAM_SOURCE_ADDRESS when set', async () => {
    // Linux routes all of 127.0.0.0/8 on lo: the upstream on 127.0.0.1 accepts from 127.0.0.2.
    const second = await createGateway(configFor(mainUpstreams(), { UPSTREAM_SOURCE_ADDRESS: '127.0.0.2' }), [{ prefix: '/api/v1/invoices', service: 'invoice-service' }]);
    const url = await listen(second);
    try {
      const seen = (await (await fetch(`${url}/api/v1/invoices`)).json()) as Seen;
      expect(seen.peer).toBe('127.0.0.2');
      // Unset (the suite's gateway): the system's choice, the upstream's own address here.
      expect((await get('/api/v1/invoices')).body.peer).toBe('127.0.0.1');
    } finally {
      await second.fastify.close();
    }
  });
});


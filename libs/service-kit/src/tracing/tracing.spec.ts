import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { startTracing, traceLogMixin, traceRequests, tracingEnabled } from './index';

/**
 * What is loaded is a property of a fresh process (Jest's registry keeps no `require.cache` of its
 * own, and the SDK, once registered, stays for the process): each case runs in a child Node, which
 * compiles the TypeScript sources with tsx and prints one line of JSON after `RESULT:`.
 */
const ROOT = join(__dirname, '../../../..');
const TRACING = join(__dirname, 'index.ts');

function child(code: string): Record<string, unknown> & { logs: Array<Record<string, unknown>> } {
  const run = spawnSync(process.execPath, ['--require', 'tsx/cjs', '-e', code], {
    cwd: ROOT,
    env: { PATH: process.env.PATH, TSX_TSCONFIG_PATH: 'tsconfig.base.json' },
    encoding: 'utf8',
    timeout: 60000,
  });
  const lines = run.stdout.split('\n');
  const result = lines.find((l) => l.startsWith('RESULT:'));
  if (run.status !== 0 || !result) throw new Error(`child exited ${run.status}: ${run.stderr}${run.stdout}`);
  const logs = lines.filter((l) => l.startsWith('{')).map((l) => JSON.parse(l) as Record<string, unknown>);
  return { ...(JSON.parse(result.slice('RESULT:'.length)) as Record<string, unknown>), logs };
}

/** Starts tracing as `options` say and reports whether it runs and which OpenTelemetry modules are loaded. */
function loadedAfterStart(options: string): { started: boolean; loaded: string[] } {
  const { started, loaded } = child(`
    const tracing = require(${JSON.stringify(TRACING)});
    const started = tracing.startTracing('svc', ${options});
    const loaded = Object.keys(require.cache).filter((f) => f.includes('@opentelemetry')).map((f) => f.replace(/^.*node_modules\\//, ''));
    console.log('RESULT:' + JSON.stringify({ started, loaded }));
    tracing.shutdownTracing().then(() => process.exit(0));
  `);
  return { started: started as boolean, loaded: loaded as string[] };
}

describe('startTracing', () => {
  it('loads no OpenTelemetry module at all without an endpoint', () => {
    expect(loadedAfterStart(`{ env: {}, argv: [] }`)).toEqual({ started: false, loaded: [] });
  });

  it('starts nothing for the one-shot commands, nor for an endpoint that is not an http(s) URL (the config check names it)', () => {
    expect(loadedAfterStart(`{ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'http://127.0.0.1:4318' }, argv: ['migrate'] }`)).toEqual({ started: false, loaded: [] });
    expect(loadedAfterStart(`{ env: { OTEL_EXPORTER_OTLP_ENDPOINT: 'collector:4318' }, argv: [] }`)).toEqual({ started: false, loaded: [] });
  });

  it('loads the SDK and the instrumentations for `serve` with an endpoint (either variable), not the HTTP instrumentation', () => {
    for (const variable of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
      const { started, loaded } = loadedAfterStart(`{ env: { ${variable}: 'http://127.0.0.1:4318' }, argv: ['serve'] }`);
      expect(started).toBe(true);
      for (const module of ['sdk-trace-node', 'sdk-trace-base', 'exporter-trace-otlp-http', 'instrumentation-pg', 'instrumentation-ioredis', 'instrumentation-undici']) {
        expect(loaded.some((f) => f.startsWith(`@opentelemetry/${module}/`))).toBe(true);
      }
    }
  });
});

interface ExportedSpan {
  name: string;
  kind: number;
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  status: { code: number };
  attributes: Record<string, unknown>;
}

/**
 * A Fastify server set up as createServiceApp does it (traceRequests, the access log), tracing to an
 * InMemorySpanExporter, and a few requests over real HTTP, one after the other. Reports every span
 * exported, the responses' request ids, and (through `child`) the JSON log lines.
 */
function tracedRequests(): { spans: ExportedSpan[]; logs: Array<Record<string, unknown>>; passed: { hasSpan: boolean; carrier: Record<string, string> } } {
  const result = child(`
    const { InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
    const tracing = require(${JSON.stringify(TRACING)});
    const exporter = new InMemorySpanExporter();
    tracing.startTracing('svc', { exporter, argv: [] });
    // Required after tracing started, as main.ts orders them.
    const http = require('node:http');
    const api = require('@opentelemetry/api');
    const Fastify = require('fastify');
    const { createLogger, installAccessLog } = require('./libs/service-kit/src/observability/logger.ts');
    const { fastifyBaseOptions } = require('./libs/service-kit/src/http/fastify-base.ts');
    const { installHealthRoutes } = require('./libs/service-kit/src/health/ops-routes.ts');
    const fastify = Fastify({ ...fastifyBaseOptions(createLogger('svc', 'info'), { trustProxy: false }) });
    tracing.traceRequests(fastify);
    installAccessLog(fastify);
    // A span started in the handler (as pg, ioredis and fetch start theirs) and a log line of its own.
    const work = (name) => api.trace.getTracer('test').startSpan(name).end();
    fastify.get('/things/:id', async (request) => { work('read thing'); request.log.info('reading'); return { id: request.params.id }; });
    fastify.post('/things', async (request) => { await new Promise((r) => setTimeout(r, 5)); work('write thing'); return { got: request.body }; });
    fastify.get('/broken', async () => { work('broken work'); throw new Error('boom'); });
    fastify.get('/slow', async () => { await new Promise((r) => setTimeout(r, 300)); work('too late'); return {}; });
    installHealthRoutes(fastify, { db: () => { work('readiness check'); return true; } }, { shuttingDown: false });
    fastify.get('/metrics', async () => { work('scrape'); return 'ok'; });
    // An unsampled request: what its handler sees, and what it would pass on (Kafka, the outbox, fetch).
    let passed;
    fastify.get('/passed', async (request) => {
      const carrier = {};
      api.propagation.inject(api.context.active(), carrier);
      passed = { hasSpan: api.trace.getSpan(api.context.active()) !== undefined, carrier };
      request.log.info('unsampled');
      return {};
    });
    const call = (port, method, path, headers, body) => new Promise((resolve, reject) => {
      const request = http.request({ host: '127.0.0.1', port, method, path, headers }, (response) => {
        response.resume();
        response.on('end', () => resolve(response.statusCode));
      });
      request.on('error', reject);
      if (body === undefined) return request.end();
      // The body after the headers, later: the handler runs from the body's events, not the request's.
      request.flushHeaders();
      setTimeout(() => request.end(body), 30);
    });
    const abandon = (port, path) => new Promise((resolve) => {
      const request = http.get({ host: '127.0.0.1', port, path, headers: { 'x-request-id': 'req-gone' } });
      request.on('error', () => undefined);
      setTimeout(() => { request.destroy(); setTimeout(resolve, 400); }, 50);
    });
    fastify.listen({ port: 0, host: '127.0.0.1' }).then(async () => {
      const { port } = fastify.server.address();
      await call(port, 'GET', '/things/42?fields=id', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01', 'x-request-id': 'req-get' });
      await call(port, 'POST', '/things', { 'content-type': 'application/json', 'content-length': '9', 'x-request-id': 'req-post' }, '{"a":"b"}');
      await call(port, 'GET', '/broken', { 'x-request-id': 'req-broken' });
      await call(port, 'GET', '/passed', { traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00', 'x-request-id': 'req-unsampled' });
      await call(port, 'GET', '/nowhere', { 'x-request-id': 'req-404' });
      await call(port, 'GET', '/health/live', {});
      await call(port, 'GET', '/health/ready', {});
      await call(port, 'GET', '/metrics', {});
      await abandon(port, '/slow');
      await tracing.flushTracing();
      const spans = exporter.getFinishedSpans().map((s) => ({
        name: s.name, kind: s.kind, traceId: s.spanContext().traceId, spanId: s.spanContext().spanId,
        parentSpanId: s.parentSpanContext && s.parentSpanContext.spanId, status: s.status, attributes: s.attributes,
      }));
      await fastify.close();
      console.log('RESULT:' + JSON.stringify({ spans, passed }));
      await tracing.shutdownTracing();
    });
  `);
  return { spans: result.spans as ExportedSpan[], logs: result.logs, passed: result.passed as { hasSpan: boolean; carrier: Record<string, string> } };
}

describe('server spans (over HTTP)', () => {
  const caller = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
  let spans: ExportedSpan[];
  let logs: Array<Record<string, unknown>>;
  let passed: { hasSpan: boolean; carrier: Record<string, string> };
  beforeAll(() => ({ spans, logs, passed } = tracedRequests()));
  const server = (requestId: string) => {
    const found = spans.filter((s) => s.kind === 1 /* SERVER */ && s.attributes.request_id === requestId);
    expect(found).toHaveLength(1);
    return found[0];
  };
  const named = (name: string) => spans.find((s) => s.name === name);

  it("names the span by method and route, under the caller's trace, with the request id and the status", () => {
    const span = server('req-get');
    expect(span).toMatchObject({ name: 'GET /things/:id', traceId: caller.traceId, parentSpanId: caller.spanId, status: { code: 0 } });
    // The path without its query; the route pattern, not the URL.
    expect(span.attributes).toEqual({
      'http.request.method': 'GET',
      'url.path': '/things/42',
      'http.route': '/things/:id',
      request_id: 'req-get',
      'http.response.status_code': 200,
    });
  });

  it('runs the handler inside the server span: what it starts is the span\'s child, its log lines and the access line carry its ids', () => {
    const span = server('req-get');
    expect(named('read thing')).toMatchObject({ traceId: caller.traceId, parentSpanId: span.spanId });
    const ids = { trace_id: caller.traceId, span_id: span.spanId };
    expect(logs.find((l) => l.msg === 'reading')).toMatchObject({ request_id: 'req-get', ...ids });
    expect(logs.find((l) => l.msg === 'request completed' && l.request_id === 'req-get')).toMatchObject(ids);
  });

  it('starts a trace without a traceparent, and keeps the context through a body that arrives after the headers', () => {
    const span = server('req-post');
    expect(span.name).toBe('POST /things');
    expect(span.parentSpanId).toBeUndefined();
    expect(span.traceId).not.toBe(caller.traceId);
    expect(named('write thing')).toMatchObject({ traceId: span.traceId, parentSpanId: span.spanId });
    expect(logs.find((l) => l.msg === 'request completed' && l.request_id === 'req-post')).toMatchObject({ trace_id: span.traceId, span_id: span.spanId });
  });

  it('marks a 5xx as an error; a 404 (no route) keeps the bare method', () => {
    expect(server('req-broken')).toMatchObject({ name: 'GET /broken', status: { code: 2 /* ERROR */ }, attributes: { 'http.response.status_code': 500 } });
    expect(named('broken work')?.parentSpanId).toBe(server('req-broken').spanId);
    const missing = server('req-404');
    expect(missing).toMatchObject({ name: 'GET', status: { code: 0 }, attributes: { 'http.response.status_code': 404 } });
    expect(missing.attributes['http.route']).toBeUndefined();
  });

  it('ends the span when the connection closes before the response, without a status code', () => {
    const span = server('req-gone');
    expect(span.name).toBe('GET /slow');
    expect(span.attributes['http.response.status_code']).toBeUndefined();
  });

  it('records nothing for an unsampled request, leaves no span for pg, Redis or fetch to hang theirs on, and passes its trace on unsampled', () => {
    // No server span (the list of server spans below has no req-unsampled either).
    expect(spans.filter((s) => s.attributes.request_id === 'req-unsampled')).toEqual([]);
    expect(passed.hasSpan).toBe(false);
    const [version, traceId, parentId, flags] = passed.carrier.traceparent.split('-');
    expect({ version, traceId, flags }).toEqual({ version: '00', traceId: caller.traceId, flags: '00' });
    expect(parentId).toMatch(/^[0-9a-f]{16}$/);
    expect(parentId).not.toBe(caller.spanId);
    // Its log lines still carry the trace id, for the gateway's access line and the caller's own.
    expect(logs.find((l) => l.msg === 'unsampled')).toMatchObject({ request_id: 'req-unsampled', trace_id: caller.traceId, span_id: parentId });
  });

  it('traces neither the probes nor /metrics', () => {
    expect(spans.filter((s) => /health|metrics/.test(s.name) || /^\/(health|metrics)/.test(String(s.attributes['url.path'])))).toEqual([]);
    // Their handlers run outside any request span: what they would start needs a parent (pg, ioredis, fetch).
    for (const name of ['readiness check', 'scrape']) {
      expect(named(name)).toBeDefined();
      expect(named(name)?.parentSpanId).toBeUndefined();
    }
    expect(spans.filter((s) => s.kind === 1).map((s) => s.attributes.request_id).sort()).toEqual(['req-404', 'req-broken', 'req-get', 'req-gone', 'req-post']);
  });
});

describe('with tracing off (this process)', () => {
  it('adds no log mixin and no hook', () => {
    expect(tracingEnabled()).toBe(false);
    expect(startTracing('svc', { env: {}, argv: [] })).toBe(false);
    expect(traceLogMixin()).toBeUndefined();
    const fastify = { addHook: jest.fn() };
    traceRequests(fastify as never);
    expect(fastify.addHook).not.toHaveBeenCalled();
  });
});

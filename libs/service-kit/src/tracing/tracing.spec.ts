import { spawnSync } from 'node:child_process';
import { join } from 'node:path';
import { nameServerSpans, startTracing, traceLogMixin, tracingEnabled } from './index';

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

  it('loads the SDK and the instrumentations for `serve` with an endpoint (either variable)', () => {
    for (const variable of ['OTEL_EXPORTER_OTLP_ENDPOINT', 'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT']) {
      const { started, loaded } = loadedAfterStart(`{ env: { ${variable}: 'http://127.0.0.1:4318' }, argv: ['serve'] }`);
      expect(started).toBe(true);
      for (const module of ['sdk-trace-node', 'sdk-trace-base', 'exporter-trace-otlp-http', 'instrumentation-http', 'instrumentation-pg', 'instrumentation-ioredis']) {
        expect(loaded.some((f) => f.startsWith(`@opentelemetry/${module}/`))).toBe(true);
      }
    }
  });

  it("names the server span by method and route under the caller's trace, and puts its ids on the request's log lines", () => {
    const caller = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '00f067aa0ba902b7' };
    const result = child(`
      const { InMemorySpanExporter } = require('@opentelemetry/sdk-trace-base');
      const tracing = require(${JSON.stringify(TRACING)});
      const exporter = new InMemorySpanExporter();
      tracing.startTracing('svc', { exporter, argv: [] });
      // Required after tracing started, as main.ts orders them.
      const http = require('node:http');
      const Fastify = require('fastify');
      const { createLogger, installAccessLog } = require('./libs/service-kit/src/observability/logger.ts');
      const { fastifyBaseOptions } = require('./libs/service-kit/src/http/fastify-base.ts');
      const fastify = Fastify({ ...fastifyBaseOptions(createLogger('svc', 'info'), { trustProxy: false }) });
      tracing.nameServerSpans(fastify);
      installAccessLog(fastify);
      fastify.get('/things/:id', async (request) => ({ id: request.params.id }));
      fastify.listen({ port: 0, host: '127.0.0.1' }).then(() => {
        const { port } = fastify.server.address();
        const headers = { traceparent: '00-${caller.traceId}-${caller.spanId}-01', 'x-request-id': 'req-1' };
        http.get({ host: '127.0.0.1', port, path: '/things/42', headers }, (response) => {
          response.resume();
          response.on('end', () => setTimeout(async () => {
            await tracing.flushTracing();
            const spans = exporter.getFinishedSpans().map((s) => ({
              name: s.name, kind: s.kind, traceId: s.spanContext().traceId, spanId: s.spanContext().spanId,
              parentSpanId: s.parentSpanContext && s.parentSpanContext.spanId, attributes: s.attributes,
            }));
            await fastify.close();
            console.log('RESULT:' + JSON.stringify({ spans }));
            await tracing.shutdownTracing();
          }, 50));
        });
      });
    `);
    const spans = result.spans as Array<{ name: string; kind: number; traceId: string; spanId: string; parentSpanId?: string; attributes: Record<string, unknown> }>;
    expect(spans).toHaveLength(1);
    const [server] = spans;
    expect(server).toMatchObject({ name: 'GET /things/:id', kind: 1 /* SERVER */, traceId: caller.traceId, parentSpanId: caller.spanId });
    expect(server.attributes).toMatchObject({ 'http.route': '/things/:id', request_id: 'req-1', 'http.response.status_code': 200 });
    const access = result.logs.find((l) => l.msg === 'request completed');
    expect(access).toMatchObject({ request_id: 'req-1', trace_id: caller.traceId, span_id: server.spanId });
  });
});

describe('with tracing off (this process)', () => {
  it('adds no log mixin and no hook', () => {
    expect(tracingEnabled()).toBe(false);
    expect(startTracing('svc', { env: {}, argv: [] })).toBe(false);
    expect(traceLogMixin()).toBeUndefined();
    const fastify = { addHook: jest.fn() };
    nameServerSpans(fastify as never);
    expect(fastify.addHook).not.toHaveBeenCalled();
  });
});

import {
  context,
  Context,
  createContextKey,
  diag,
  DiagLogger,
  DiagLogLevel,
  isSpanContextValid,
  propagation,
  ROOT_CONTEXT,
  Span,
  SpanContext,
  SpanKind,
  SpanStatusCode,
  TextMapGetter,
  TextMapPropagator,
  TextMapSetter,
  trace,
  Tracer,
} from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-node';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import { isOpsPath } from '../health/ops-routes';

export type { SpanExporter };

/** What ./index keeps of a started SDK. */
export interface RunningTracing {
  shutdown(): Promise<void>;
  flush(): Promise<void>;
  logFields(): Record<string, string>;
  /** Starts a server span for each request `server` emits (see {@link traceIncomingRequests}). */
  traceServer(server: Server): void;
  /** Names the server span of the request `response` answers by its route, and labels it with the request id. */
  describeRequest(response: ServerResponse, route: string | undefined, requestId: string): void;
}

/**
 * The SDK, required by ./index only when tracing is on. Spans are batched (BatchSpanProcessor: the
 * OTEL_BSP_* variables tune it) and sent over OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_ENDPOINT +
 * `/v1/traces`, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given; the exporter reads those (and
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT...) itself. Sampling: parent-based, always
 * on for roots, unless OTEL_TRACES_SAMPLER says otherwise. The context manager is the provider's
 * default, AsyncLocalStorage.
 */
export function startSdk(options: { service: string; exporter?: SpanExporter }): RunningTracing {
  diag.setLogger(jsonDiagLogger(options.service), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': options.service })),
    spanProcessors: [new BatchSpanProcessor(options.exporter ?? new OTLPTraceExporter())],
  });
  // W3C trace context only: `traceparent` from the gateway, and on Kafka messages (libs/event-bus).
  // The default would add W3C baggage, which nothing of ours reads and any caller could fill.
  provider.register({ propagator: new PassOnPropagator() });
  // No HttpInstrumentation: incoming requests get a server span of our own (traceIncomingRequests,
  // ADR 0028), and the only node:http client is the OTLP exporter.
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      // fetch(): the reference look-ups between resource services (ReferenceResolver).
      new UndiciInstrumentation({ requireParentforSpans: true }),
      // Queries inside a request or a consumed message only: the outbox relay polls every second
      // and would otherwise make a trace of each poll. Never the parameter values (the default,
      // stated). The connect spans stay: with `ignoreConnectSpans` the instrumentation no longer
      // binds pool.connect's callback to the caller's context, and pg-pool hands a released client
      // to a waiting caller in the releasing request's context, so under a full pool `pool.query`
      // (EntityReader) would put its query in another request's trace.
      new PgInstrumentation({ requireParentSpan: true, enhancedDatabaseReporting: false }),
      // The command name alone: the arguments hold session and token hashes, not for a trace store.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  const tracer = provider.getTracer('@invoicing/service-kit');
  return {
    shutdown: () => provider.shutdown(),
    flush: () => provider.forceFlush(),
    logFields: (): Record<string, string> => {
      const active = context.active();
      const span = trace.getSpan(active)?.spanContext() ?? (active.getValue(PASSED_ON) as SpanContext | undefined);
      // A new object every time: pino merges the line's own fields into it.
      return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {};
    },
    traceServer: (server) => traceIncomingRequests(server, tracer),
    describeRequest: (response, route, requestId) => {
      const span = (response as TracedResponse)[SERVER_SPAN];
      if (span === undefined) return;
      if (route) {
        span.updateName(`${(response as TracedResponse).req.method} ${route}`);
        span.setAttribute('http.route', route);
      }
      span.setAttribute('request_id', requestId);
    },
  };
}

/** The request's server span, on its response until the response closes (then undefined). */
const SERVER_SPAN = Symbol('invoicing.serverSpan');
type TracedResponse = ServerResponse<IncomingMessage> & { [SERVER_SPAN]?: Span };
const TRACED_SERVER = Symbol('invoicing.tracedServer');

/** `traceparent` and `tracestate` as Node parsed them (lower-case names). */
const headerGetter: TextMapGetter<IncomingHttpHeaders> = {
  get: (headers, key) => headers[key],
  keys: (headers) => Object.keys(headers),
};

/**
 * One SERVER span per request, in place of @opentelemetry/instrumentation-http's (among the top
 * costs of a traced service's CPU profile under load, ADR 0028): `server.emit('request')` is wrapped
 * on this server only. The span's parent is the caller's `traceparent` (the gateway's span),
 * and the server's `request` listeners (Fastify, then Nest) run inside the span's context, so every
 * span started in the request (pg, ioredis, fetch, a direct Kafka send) is its child and every log
 * line carries its ids. An unsampled request's span records nothing (no attributes, no listener) but
 * is still made current: what the request calls passes its `traceparent` on, flag included. No listener of the request or response is wrapped: Fastify re-enters the request's
 * async context itself once the body is read, and the response's `finish` runs where `end()` was
 * called. The span starts with two attributes (method, path), gets its route name and the request id
 * from {@link RunningTracing.describeRequest} (Fastify's onRequest), and ends when the response
 * closes (sent, or the connection gone) with the status code; 5xx is an ERROR. Probes and /metrics
 * make no span.
 */
function traceIncomingRequests(server: Server, tracer: Tracer): void {
  const traced = server as Server & { [TRACED_SERVER]?: true };
  if (traced[TRACED_SERVER]) return;
  traced[TRACED_SERVER] = true;
  const emit = server.emit as Emit;
  server.emit = function emitTraced(this: Server, event: string | symbol, ...args: unknown[]): boolean {
    if (event !== 'request') return emit.call(this, event, ...args);
    const request = args[0] as IncomingMessage;
    const response = args[1] as TracedResponse;
    const url = request.url ?? '/';
    if (isOpsPath(url)) return emit.call(this, event, request, response);
    const method = request.method ?? 'GET';
    const parent = propagation.extract(ROOT_CONTEXT, request.headers, headerGetter);
    const span = tracer.startSpan(method, { kind: SpanKind.SERVER }, parent);
    if (span.isRecording()) {
      const query = url.indexOf('?');
      span.setAttribute('http.request.method', method);
      span.setAttribute('url.path', query === -1 ? url : url.slice(0, query));
      response[SERVER_SPAN] = span;
      response.on('close', endServerSpan);
    }
    if (span.isRecording()) return context.with(trace.setSpan(parent, span), emitRequest, undefined, emit, this, request, response);
    // Unsampled: no span in the context (neither ours nor the caller's remote one), so the pg, Redis
    // and fetch instrumentations (requireParentSpan)
    // skip this request's calls altogether; they cost a sampled request's work otherwise, sampled or
    // not (docs/perf.md). The span context it passes on (flag 00) is kept under PASSED_ON, where the
    // propagator, the log fields and libs/event-bus find it.
    return context.with(trace.deleteSpan(parent).setValue(PASSED_ON, span.spanContext()), emitRequest, undefined, emit, this, request, response);
  } as Server['emit'];
}

/**
 * The span context an unsampled request passes on. `createContextKey` is `Symbol.for` of its
 * description, so libs/event-bus and libs/resource-api name the same key without importing the SDK.
 */
const PASSED_ON = createContextKey('invoicing.tracing.passed-on');

/**
 * W3C Trace Context, and for an unsampled request (no span in the context) the span context kept
 * under PASSED_ON: its trace id and "not sampled" flag reach Kafka messages, the outbox and fetch
 * calls, so what they start downstream is not sampled either.
 */
class PassOnPropagator implements TextMapPropagator {
  private readonly w3c = new W3CTraceContextPropagator();

  inject(ctx: Context, carrier: unknown, setter: TextMapSetter): void {
    const passed = trace.getSpan(ctx) === undefined ? (ctx.getValue(PASSED_ON) as SpanContext | undefined) : undefined;
    this.w3c.inject(passed ? trace.setSpanContext(ctx, passed) : ctx, carrier, setter);
  }

  extract(ctx: Context, carrier: unknown, getter: TextMapGetter): Context {
    return this.w3c.extract(ctx, carrier, getter);
  }

  fields(): string[] {
    return this.w3c.fields();
  }
}

/** EventEmitter's emit, without the overloads of http.Server's. */
type Emit = (this: Server, event: string | symbol, ...args: unknown[]) => boolean;

function emitRequest(emit: Emit, server: Server, request: IncomingMessage, response: ServerResponse): boolean {
  return emit.call(server, 'request', request, response);
}

/** A response's `close` listener (one function for all: nothing allocated per request). */
function endServerSpan(this: TracedResponse): void {
  const span = this[SERVER_SPAN];
  if (span === undefined) return;
  this[SERVER_SPAN] = undefined;
  // Nothing was sent when the connection closed first: no status to report.
  if (this.headersSent) {
    span.setAttribute('http.response.status_code', this.statusCode);
    if (this.statusCode >= 500) span.setStatus({ code: SpanStatusCode.ERROR });
  }
  span.end();
}

/** The same message at most once in this many milliseconds (a collector down fails every batch). */
const DIAG_REPEAT_MS = 60_000;

/**
 * The SDK's own warnings and errors (a collector that cannot be reached, a full queue), as JSON lines
 * like the service's (on stderr: pino owns stdout's batched writes). Without a logger they vanish and
 * a tracing set-up that exports nothing looks like one that works.
 */
function jsonDiagLogger(service: string): DiagLogger {
  const last = new Map<string, number>();
  const write = (level: number) => (message: string, ...args: unknown[]) => {
    const now = Date.now();
    if (now - (last.get(message) ?? -Infinity) < DIAG_REPEAT_MS) return;
    if (last.size >= 100) last.clear();
    last.set(message, now);
    const detail = args.map(describe).join(' ');
    process.stderr.write(`${JSON.stringify({ level, time: new Date(now).toISOString(), service, msg: `opentelemetry: ${readable(message)}`, detail: detail || undefined })}\n`);
  };
  const ignore = () => undefined;
  return { error: write(50), warn: write(40), info: ignore, debug: ignore, verbose: ignore };
}

function describe(value: unknown): string {
  if (value instanceof Error) return value.message;
  if (typeof value === 'string') return value;
  try {
    return JSON.stringify(value);
  } catch {
    return String(value);
  }
}

/** The SDK reports a failed export as the error serialized to JSON, stack included: its message only. */
function readable(message: string): string {
  if (!message.startsWith('{')) return message;
  try {
    const parsed = JSON.parse(message) as { message?: unknown };
    return typeof parsed.message === 'string' ? parsed.message : message;
  } catch {
    return message;
  }
}

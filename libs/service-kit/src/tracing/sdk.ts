import { context, diag, DiagLogger, DiagLogLevel, isSpanContextValid, trace } from '@opentelemetry/api';
import { getRPCMetadata, RPCType, W3CTraceContextPropagator } from '@opentelemetry/core';
import { OTLPTraceExporter } from '@opentelemetry/exporter-trace-otlp-http';
import { registerInstrumentations } from '@opentelemetry/instrumentation';
import { HttpInstrumentation } from '@opentelemetry/instrumentation-http';
import { IORedisInstrumentation } from '@opentelemetry/instrumentation-ioredis';
import { PgInstrumentation } from '@opentelemetry/instrumentation-pg';
import { UndiciInstrumentation } from '@opentelemetry/instrumentation-undici';
import { defaultResource, resourceFromAttributes } from '@opentelemetry/resources';
import { BatchSpanProcessor, NodeTracerProvider, SpanExporter } from '@opentelemetry/sdk-trace-node';
import { isOpsPath } from '../health/ops-routes';

export type { SpanExporter };

/** What ./index keeps of a started SDK. */
export interface RunningTracing {
  shutdown(): Promise<void>;
  flush(): Promise<void>;
  logFields(): Record<string, string>;
  describeRequest(route: string | undefined, requestId: string): void;
}

/**
 * The SDK, required by ./index only when tracing is on. Spans are batched (BatchSpanProcessor: the
 * OTEL_BSP_* variables tune it) and sent over OTLP/HTTP (JSON) to OTEL_EXPORTER_OTLP_ENDPOINT +
 * `/v1/traces`, or OTEL_EXPORTER_OTLP_TRACES_ENDPOINT as given; the exporter reads those (and
 * OTEL_EXPORTER_OTLP_HEADERS, OTEL_EXPORTER_OTLP_TIMEOUT...) itself. Sampling: parent-based, always
 * on for roots, unless OTEL_TRACES_SAMPLER says otherwise.
 */
export function startSdk(options: { service: string; exporter?: SpanExporter }): RunningTracing {
  diag.setLogger(jsonDiagLogger(options.service), { logLevel: DiagLogLevel.WARN, suppressOverrideMessage: true });
  const provider = new NodeTracerProvider({
    resource: defaultResource().merge(resourceFromAttributes({ 'service.name': options.service })),
    spanProcessors: [new BatchSpanProcessor(options.exporter ?? new OTLPTraceExporter())],
  });
  // W3C trace context only: `traceparent` from the gateway, and on Kafka messages (libs/event-bus).
  // The default would add W3C baggage, which nothing of ours reads and any caller could fill.
  provider.register({ propagator: new W3CTraceContextPropagator() });
  registerInstrumentations({
    tracerProvider: provider,
    instrumentations: [
      new HttpInstrumentation({
        ignoreIncomingRequestHook: (request) => isOpsPath(request.url),
        // Our only node:http client is the OTLP exporter, which suppresses its own tracing; nothing
        // outside a request is worth a trace of its own.
        requireParentforOutgoingSpans: true,
      }),
      // fetch(): the reference look-ups between resource services (ReferenceResolver).
      new UndiciInstrumentation({ requireParentforSpans: true }),
      // Queries inside a request or a consumed message only: the outbox relay polls every second
      // and would otherwise make a trace of each poll.
      new PgInstrumentation({ requireParentSpan: true }),
      // The command name alone: the arguments hold session and token hashes, not for a trace store.
      new IORedisInstrumentation({ requireParentSpan: true, dbStatementSerializer: (command) => command }),
    ],
  });
  return {
    shutdown: () => provider.shutdown(),
    flush: () => provider.forceFlush(),
    logFields: (): Record<string, string> => {
      const span = trace.getSpan(context.active())?.spanContext();
      // A new object every time: pino merges the line's own fields into it.
      return span && isSpanContextValid(span) ? { trace_id: span.traceId, span_id: span.spanId } : {};
    },
    describeRequest: (route, requestId) => {
      // The HTTP instrumentation's per-request metadata: it names the span `METHOD route` and sets
      // `http.route` from `route` when the response ends.
      const metadata = getRPCMetadata(context.active());
      if (metadata?.type !== RPCType.HTTP) return;
      if (route) metadata.route = route;
      metadata.span.setAttribute('request_id', requestId);
    },
  };
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

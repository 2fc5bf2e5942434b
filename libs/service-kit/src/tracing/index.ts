import type { FastifyInstance } from 'fastify';
// Type-only: erased from the output, but it keeps sdk.ts in every app's compilation (tsc follows
// it), so the `require('./sdk')` below finds the file at run time.
import type * as Sdk from './sdk';

/**
 * OpenTelemetry tracing of a service (docs/observability.md, ADR 0028): on only when an OTLP
 * endpoint is configured. This module is the whole cost when it is not: it imports nothing at run
 * time, and the SDK and the instrumentations (./sdk) are required only once tracing starts.
 *
 * Instrumentation patches modules as they are required (pg, ioredis, undici), so tracing must
 * start before anything requires them: each service's `main.ts` imports its `tracing.ts`, which calls
 * {@link startTracing}, first of all, before Nest, TypeORM, kafkajs or this library's index are
 * loaded. A flag to `node` (`--require`) would do the same but would have to be repeated in every
 * start script, image and manifest; an import at the top of `main.ts` travels with the code.
 */
let running: Sdk.RunningTracing | null = null;

export interface TracingOptions {
  /** Defaults to process.env (the exporter reads its other OTEL_* settings there itself). */
  env?: NodeJS.ProcessEnv;
  /** The command line after `node main.js`; defaults to process.argv.slice(2). */
  argv?: readonly string[];
  /** Tests: where spans go instead of OTLP (an InMemorySpanExporter); starts tracing without an endpoint. */
  exporter?: Sdk.SpanExporter;
}

/** The OTLP/HTTP endpoint spans go to, when one is configured (the traces-specific one wins). */
export function otlpTracesEndpoint(env: NodeJS.ProcessEnv): string | undefined {
  return env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT || env.OTEL_EXPORTER_OTLP_ENDPOINT || undefined;
}

/**
 * Starts tracing for the `serve` command when OTEL_EXPORTER_OTLP_ENDPOINT (or
 * OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) is set; otherwise does nothing and loads nothing. The other
 * commands (migrate, env-spec, create-key...) are not traced: they end with process.exit, which would
 * drop the last batch anyway. A malformed endpoint starts nothing either: the service's config check
 * (tracingEnvShape) then refuses it by name. OTEL_SERVICE_NAME, when set, replaces `service`.
 * Returns whether tracing runs.
 */
export function startTracing(service: string, options: TracingOptions = {}): boolean {
  if (running) return true;
  const env = options.env ?? process.env;
  const [command = 'serve'] = options.argv ?? process.argv.slice(2);
  if (command !== 'serve') return false;
  const endpoint = otlpTracesEndpoint(env);
  if (!options.exporter && (endpoint === undefined || !/^https?:\/\//i.test(endpoint) || !URL.canParse(endpoint))) return false;
  // Lazily, so that with tracing off not one module of the SDK is loaded.
  const sdk = require('./sdk') as typeof Sdk;
  running = sdk.startSdk({ service: env.OTEL_SERVICE_NAME || service, exporter: options.exporter });
  return true;
}

export function tracingEnabled(): boolean {
  return running !== null;
}

/**
 * Ends every span still open in the batch and exports what is batched (bounded by the exporter's
 * timeout), then stops tracing. Called after the SIGTERM drain (drainOnSignals); nothing when off.
 */
export async function shutdownTracing(): Promise<void> {
  const current = running;
  running = null;
  await current?.shutdown();
}

/** Exports what is batched now (tests). */
export async function flushTracing(): Promise<void> {
  await running?.flush();
}

/**
 * A pino `mixin` adding `trace_id` and `span_id` of the active span to each line; undefined when
 * tracing is off, so that pino calls nothing per line.
 */
export function traceLogMixin(): (() => Record<string, string>) | undefined {
  return running?.logFields;
}

/**
 * Traces each request `fastify` serves: one server span per request, started when its server emits
 * the request (the caller's `traceparent` as parent) and ended when the response closes, with
 * everything the request does inside its context. Fastify knows the route when the request arrives:
 * an onRequest hook names the span by method and route (`GET /api/v1/invoices/:id`, with
 * `http.route`) and labels it with the request id the log lines carry (`request_id`). Call before the
 * server listens. Does nothing when tracing is off (no hook, the server untouched).
 */
export function traceRequests(fastify: FastifyInstance): void {
  const tracing = running;
  if (!tracing) return;
  tracing.traceServer(fastify.server);
  fastify.addHook('onRequest', (request, reply, done) => {
    tracing.describeRequest(reply.raw, request.routeOptions.url, request.id);
    done();
  });
}

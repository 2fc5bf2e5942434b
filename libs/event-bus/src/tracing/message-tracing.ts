import { Attributes, context, Context, createContextKey, propagation, ROOT_CONTEXT, Span, SpanContext, SpanKind, SpanStatusCode, TextMapGetter, trace } from '@opentelemetry/api';
import type { IHeaders, KafkaMessage } from 'kafkajs';

/**
 * Trace context across Kafka (ADR 0028): each message carries the W3C `traceparent` of the span that
 * sent it, and its consumer's span continues that trace, so a request and what it causes in other
 * services (a key revocation, a payment applied to its invoice) are one trace.
 *
 * Done here rather than by @opentelemetry/instrumentation-kafkajs, which parents a send on whatever
 * context is active at `producer.send`: for the outbox relay that is the relay's poll, and one send
 * carries rows written by many requests. Here each message's parent is the context stored with its
 * outbox row (or, for a direct send, the active one).
 *
 * Only @opentelemetry/api is used: with no SDK registered (tracing off) its tracer and propagator are
 * no-ops, spans record nothing and nothing is written to the headers.
 */
const tracer = trace.getTracer('@invoicing/event-bus');

/** Semantic conventions for messaging spans (incubating, hence spelt out rather than imported). */
const MESSAGING = {
  system: 'messaging.system',
  destination: 'messaging.destination.name',
  operationType: 'messaging.operation.type',
  operationName: 'messaging.operation.name',
  key: 'messaging.kafka.message.key',
  partition: 'messaging.destination.partition.id',
  offset: 'messaging.kafka.offset',
  group: 'messaging.consumer.group.name',
  batchCount: 'messaging.batch.message_count',
} as const;

/**
 * The trace context active now, as message headers carry it (`traceparent`, `tracestate`), to be
 * stored with an outbox row; null when there is none (tracing off, or no span active).
 */
export function activeTraceHeaders(): Record<string, string> | null {
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return Object.keys(carrier).length > 0 ? carrier : null;
}

/** Reads kafkajs headers (Buffers once consumed, strings on the way out). */
const kafkaHeaders: TextMapGetter<IHeaders | undefined> = {
  keys: (carrier) => (carrier ? Object.keys(carrier) : []),
  get: (carrier, key) => {
    const value = carrier?.[key];
    if (value === undefined) return undefined;
    return Array.isArray(value) ? value.map(String) : String(value);
  },
};

/** A message whose headers already hold a trace context (the relay copied its row's) continues it. */
function parentOf(headers: Record<string, string> | undefined): Context {
  return headers && propagation.fields().some((f) => headers[f] !== undefined) ? propagation.extract(ROOT_CONTEXT, headers) : activeParent();
}

/**
 * The span context an unsampled request passes on, kept in the context in place of a span
 * (libs/service-kit's tracing: the same key, `createContextKey` being `Symbol.for`).
 */
const PASSED_ON = createContextKey('invoicing.tracing.passed-on');

/** The active context, with an unsampled request's passed-on span context as the parent, so a send from it is not sampled either. */
function activeParent(): Context {
  const active = context.active();
  if (trace.getSpan(active) !== undefined) return active;
  const passed = active.getValue(PASSED_ON) as SpanContext | undefined;
  return passed ? trace.setSpanContext(active, passed) : active;
}

/**
 * Sends `messages` with `send`, each inside a PRODUCER span (`send <topic>`) whose context replaces
 * the message's trace headers: its parent is the trace context the message already carries (an
 * outbox row's) or, failing that, the active one. The spans end when `send` settles.
 */
export async function sendWithTrace<M extends { key: string; headers?: Record<string, string> }, T>(
  topic: string,
  messages: readonly M[],
  send: (messages: M[]) => Promise<T>,
): Promise<T> {
  const spans: Span[] = [];
  const traced = messages.map((message) => {
    const span = tracer.startSpan(
      `send ${topic}`,
      { kind: SpanKind.PRODUCER, attributes: messageAttributes(topic, 'send', message.key, messages.length) },
      parentOf(message.headers),
    );
    spans.push(span);
    const headers = { ...message.headers };
    for (const field of propagation.fields()) delete headers[field];
    propagation.inject(trace.setSpan(ROOT_CONTEXT, span), headers);
    return { ...message, headers };
  });
  try {
    const result = await send(traced);
    for (const span of spans) span.end();
    return result;
  } catch (e) {
    for (const span of spans) failed(span, e);
    throw e;
  }
}

/**
 * Runs `handle` for one consumed message inside a CONSUMER span (`process <topic>`) whose parent is
 * the trace context in the message's headers (the sender's span), so the handler's queries and sends
 * belong to the sender's trace. No headers: a new trace.
 */
export async function processWithTrace<T>(
  topic: string,
  partition: number,
  message: KafkaMessage,
  groupId: string,
  handle: () => Promise<T> | T,
): Promise<T> {
  const parent = propagation.extract(ROOT_CONTEXT, message.headers, kafkaHeaders);
  const attributes = messageAttributes(topic, 'process', message.key?.toString());
  attributes[MESSAGING.partition] = String(partition);
  attributes[MESSAGING.offset] = Number(message.offset);
  attributes[MESSAGING.group] = groupId;
  return runInSpan(tracer.startSpan(`process ${topic}`, { kind: SpanKind.CONSUMER, attributes }, parent), parent, handle);
}

/**
 * The work of several messages done at once (one reaction to a batch of events, in one
 * transaction): a consumer span of its own, linked to each message's sender span (its parent
 * would be any one of them), with the batch size. One message: its own span, as processWithTrace.
 */
export async function processManyWithTrace<T>(
  topic: string,
  groupId: string,
  messages: ReadonlyArray<{ partition: number; message: KafkaMessage }>,
  handle: () => Promise<T> | T,
): Promise<T> {
  if (messages.length === 1) return processWithTrace(topic, messages[0].partition, messages[0].message, groupId, handle);
  const links = messages.flatMap(({ message }) => {
    const sender = trace.getSpanContext(propagation.extract(ROOT_CONTEXT, message.headers, kafkaHeaders));
    return sender ? [{ context: sender }] : [];
  });
  const attributes = messageAttributes(topic, 'process', undefined, messages.length);
  attributes[MESSAGING.group] = groupId;
  return runInSpan(tracer.startSpan(`process ${topic}`, { kind: SpanKind.CONSUMER, attributes, links }, ROOT_CONTEXT), ROOT_CONTEXT, handle);
}

/** Runs `handle` with `span` active under `parent`; the span ends with it, marked failed on a throw. */
async function runInSpan<T>(span: Span, parent: Context, handle: () => Promise<T> | T): Promise<T> {
  try {
    const result = await context.with(trace.setSpan(parent, span), handle);
    span.end();
    return result;
  } catch (e) {
    failed(span, e);
    throw e;
  }
}

function messageAttributes(topic: string, operation: 'send' | 'process', key: string | undefined, count = 1): Attributes {
  const attributes: Attributes = {
    [MESSAGING.system]: 'kafka',
    [MESSAGING.destination]: topic,
    [MESSAGING.operationType]: operation,
    [MESSAGING.operationName]: operation,
  };
  if (key !== undefined) attributes[MESSAGING.key] = key;
  if (count > 1) attributes[MESSAGING.batchCount] = count;
  return attributes;
}

function failed(span: Span, e: unknown): void {
  span.recordException(e instanceof Error ? e : String(e));
  span.setStatus({ code: SpanStatusCode.ERROR, message: e instanceof Error ? e.message : String(e) });
  span.end();
}

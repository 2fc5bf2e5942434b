import { EventEmitter } from 'node:events';
import { context, createContextKey, propagation, ROOT_CONTEXT, Span, SpanKind, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, ReadableSpan, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { NodeTracerProvider } from '@opentelemetry/sdk-trace-node';
import type { Kafka } from 'kafkajs';
import { KafkaEventPublisher, OutgoingMessage } from '../event-publisher';
import { KafkaGroupSubscriber } from '../group-subscriber';
import { enqueueEvent, enqueueEvents, OutboxRelay } from '../outbox/outbox';
import { activeTraceHeaders } from './message-tracing';

type EachMessage = (payload: { topic: string; partition: number; message: Record<string, unknown> }) => Promise<void>;

/**
 * A broker stand-in: the producer records what it sends; `deliver` hands each sent message to the
 * subscriber's consumer as kafkajs would (headers as Buffers).
 */
function fakeKafka(): { kafka: Kafka; sent: Array<{ topic: string; message: OutgoingMessage }>; deliver(): Promise<void> } {
  const sent: Array<{ topic: string; message: OutgoingMessage }> = [];
  let eachMessage: EachMessage | null = null;
  let delivered = 0;
  const consumer = Object.assign(new EventEmitter(), {
    events: { CRASH: 'consumer.crash', FETCH: 'consumer.fetch' },
    connect: async () => undefined,
    subscribe: async () => undefined,
    run: async (options: { eachMessage: EachMessage }) => {
      eachMessage = options.eachMessage;
    },
    disconnect: async () => undefined,
  });
  const producer = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    send: async (record: { topic: string; messages: OutgoingMessage[] }) => {
      for (const message of record.messages) sent.push({ topic: record.topic, message });
      return [];
    },
  };
  const kafka = { producer: () => producer, consumer: () => consumer } as unknown as Kafka;
  const deliver = async () => {
    for (; delivered < sent.length; delivered += 1) {
      const { topic, message } = sent[delivered];
      const headers = Object.fromEntries(Object.entries(message.headers ?? {}).map(([k, v]) => [k, Buffer.from(v)]));
      await eachMessage?.({
        topic,
        partition: 0,
        message: { offset: String(delivered), key: Buffer.from(message.key), value: Buffer.from(message.value), timestamp: '0', headers },
      });
    }
  };
  return { kafka, sent, deliver };
}

/** An outbox table in memory, answering the statements of enqueueEvent(s) and the relay. */
function fakeOutbox() {
  const rows: Array<{ id: string; topic: string; message_key: string; payload: unknown; trace_context: unknown; published: boolean }> = [];
  const query = async (sql: string, params: unknown[]): Promise<unknown[]> => {
    if (sql.startsWith('INSERT') && sql.includes('VALUES')) {
      rows.push({ id: params[0] as string, topic: params[1] as string, message_key: params[2] as string, payload: JSON.parse(params[3] as string), trace_context: JSON.parse((params[4] as string) ?? 'null'), published: false });
    } else if (sql.startsWith('INSERT')) {
      const [topic, ids, keys, payloads, traceContext] = params as [string, string[], string[], string[], string | null];
      ids.forEach((id, i) => rows.push({ id, topic, message_key: keys[i], payload: JSON.parse(payloads[i]), trace_context: JSON.parse(traceContext ?? 'null'), published: false }));
    } else if (sql.trimStart().startsWith('SELECT')) {
      return rows.filter((r) => !r.published);
    } else if (sql.includes('SET published_at = now()')) {
      const ids = params[0] as string[];
      for (const row of rows) if (ids.includes(row.id)) row.published = true;
    }
    return [];
  };
  const db = { query, transaction: async <T>(work: (tx: { query: typeof query }) => Promise<T>) => work({ query }) };
  return { db, rows };
}

const subscriberOf = (kafka: Kafka, topic: string, seen: string[]) =>
  new KafkaGroupSubscriber(kafka, {
    topic,
    groupId: 'invoice-service.domain',
    maxWaitTimeInMs: 100,
    handle: async () => {
      seen.push(trace.getActiveSpan()?.spanContext().spanId ?? 'none');
    },
  });

function defined<T>(value: T | undefined, what: string): T {
  if (value === undefined) throw new Error(`no ${what}`);
  return value;
}

async function until(condition: () => boolean): Promise<void> {
  const deadline = Date.now() + 5000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe('with tracing off (no SDK registered)', () => {
  it('stores no trace context, adds no header, and still delivers', async () => {
    expect(activeTraceHeaders()).toBeNull();
    const { db, rows } = fakeOutbox();
    await enqueueEvent(db as never, 's', { id: 'e1', topic: 't', key: 'k', payload: {} });
    expect(rows[0].trace_context).toBeNull();

    const { kafka, sent, deliver } = fakeKafka();
    const seen: string[] = [];
    await subscriberOf(kafka, 't', seen).start();
    await new KafkaEventPublisher(kafka).publish('t', [{ key: 'k', value: '{}', headers: { 'content-type': 'application/json' } }]);
    expect(sent[0].message.headers).toEqual({ 'content-type': 'application/json' });
    await deliver();
    expect(seen).toHaveLength(1);
  });
});

describe('trace context across Kafka', () => {
  const exporter = new InMemorySpanExporter();
  const provider = new NodeTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] });
  const tracer = trace.getTracer('spec');

  beforeAll(() => provider.register({ propagator: new W3CTraceContextPropagator() }));
  afterEach(() => exporter.reset());
  afterAll(async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
  });

  /** Runs `work` inside a new SERVER span, as a request handler runs, and ends the span. */
  async function inRequest<T>(name: string, work: () => Promise<T>): Promise<{ span: Span; result: T }> {
    const span = tracer.startSpan(name, { kind: SpanKind.SERVER }, ROOT_CONTEXT);
    const result = await context.with(trace.setSpan(ROOT_CONTEXT, span), work);
    span.end();
    return { span, result };
  }

  const finished = (kind: SpanKind): ReadableSpan[] => exporter.getFinishedSpans().filter((s) => s.kind === kind);

  it('a send from an unsampled request records no span, here or at the consumer, and carries its trace id unsampled', async () => {
    const { kafka, sent, deliver } = fakeKafka();
    const seen: string[] = [];
    await subscriberOf(kafka, 'auth.revocations.v1', seen).start();
    // What libs/service-kit's tracing leaves in an unsampled request's context: no span, the span
    // context it passes on under this key.
    const passedOn = { traceId: '4bf92f3577b34da6a3ce929d0e0e4736', spanId: '1111111111111111', traceFlags: 0, isRemote: false };
    const unsampled = ROOT_CONTEXT.setValue(createContextKey('invoicing.tracing.passed-on'), passedOn);
    await context.with(unsampled, () => new KafkaEventPublisher(kafka).publish('auth.revocations.v1', [{ key: 'k', value: '{}' }]));
    const traceparent = defined(sent[0].message.headers?.traceparent, 'traceparent');
    expect(traceparent).toMatch(/^00-4bf92f3577b34da6a3ce929d0e0e4736-[0-9a-f]{16}-00$/);
    await deliver();
    expect(seen).toHaveLength(1);
    expect(exporter.getFinishedSpans()).toEqual([]);
  });

  it("a direct send: the consumer's span is a child of the producer's span, in the request's trace", async () => {
    const { kafka, sent, deliver } = fakeKafka();
    const seen: string[] = [];
    await subscriberOf(kafka, 'auth.revocations.v1', seen).start();
    const publisher = new KafkaEventPublisher(kafka);
    const { span: request } = await inRequest('POST /api/v1/settings/api-keys/:id/revoke', () =>
      publisher.publish('auth.revocations.v1', [{ key: 'key_1', value: '{}', headers: { 'content-type': 'application/cloudevents+json; charset=UTF-8' } }]),
    );
    await deliver();

    const [send] = finished(SpanKind.PRODUCER);
    const [processed] = finished(SpanKind.CONSUMER);
    const traceId = request.spanContext().traceId;
    expect(send).toMatchObject({ name: 'send auth.revocations.v1', parentSpanContext: expect.objectContaining({ spanId: request.spanContext().spanId }) });
    expect(send.spanContext().traceId).toBe(traceId);
    expect(send.attributes).toMatchObject({ 'messaging.system': 'kafka', 'messaging.destination.name': 'auth.revocations.v1', 'messaging.operation.type': 'send', 'messaging.kafka.message.key': 'key_1' });
    // On the wire: the producer span's context (and the message's own headers, kept).
    expect(sent[0].message.headers).toEqual({
      'content-type': 'application/cloudevents+json; charset=UTF-8',
      traceparent: `00-${traceId}-${send.spanContext().spanId}-01`,
    });
    // Extracted by the consumer: same trace, the producer span as parent, and the handler runs in it.
    expect(processed.name).toBe('process auth.revocations.v1');
    expect(processed.spanContext().traceId).toBe(traceId);
    expect(processed.parentSpanContext?.spanId).toBe(send.spanContext().spanId);
    expect(processed.attributes).toMatchObject({
      'messaging.operation.type': 'process',
      'messaging.consumer.group.name': 'invoice-service.domain',
      'messaging.destination.partition.id': '0',
      'messaging.kafka.offset': 0,
    });
    expect(seen).toEqual([processed.spanContext().spanId]);
  });

  it("through the outbox: each row's consumer joins the trace of the request that wrote it, not the relay's nor the kicking request's", async () => {
    const { db, rows } = fakeOutbox();
    // Two requests write rows (one of them two rows in one statement); a write outside any span has none.
    const { span: first } = await inRequest('POST /api/v1/payments', () => enqueueEvent(db as never, 'payments', { id: 'e1', topic: 'invoicing.domain.v1', key: 'pay_1', payload: { n: 1 } }));
    const { span: second } = await inRequest('POST /api/v1/settings/api-keys/:id/revoke', () =>
      enqueueEvents(db as never, 'payments', 'invoicing.domain.v1', [
        { id: 'e2', key: 'key_2', payload: { n: 2 } },
        { id: 'e3', key: 'key_3', payload: { n: 3 } },
      ]),
    );
    await enqueueEvent(db as never, 'payments', { id: 'e4', topic: 'invoicing.domain.v1', key: 'pay_4', payload: { n: 4 } });
    expect(rows.map((r) => r.trace_context)).toEqual([
      { traceparent: `00-${first.spanContext().traceId}-${first.spanContext().spanId}-01` },
      { traceparent: `00-${second.spanContext().traceId}-${second.spanContext().spanId}-01` },
      { traceparent: `00-${second.spanContext().traceId}-${second.spanContext().spanId}-01` },
      null,
    ]);

    // A third request kicks the relay, which publishes all four in one send.
    const { kafka, sent, deliver } = fakeKafka();
    const seen: string[] = [];
    await subscriberOf(kafka, 'invoicing.domain.v1', seen).start();
    const relay = new OutboxRelay(db as never, 'payments', new KafkaEventPublisher(kafka));
    const { span: kicker } = await inRequest('POST /api/v1/invoices', async () => relay.start());
    await until(() => rows.every((r) => r.published));
    await relay.stop();
    await deliver();

    const sends = new Map(finished(SpanKind.PRODUCER).map((s) => [s.attributes['messaging.kafka.message.key'], s]));
    const processed = finished(SpanKind.CONSUMER);
    expect(sent).toHaveLength(4);
    expect(processed).toHaveLength(4);
    for (const [key, writer] of [['pay_1', first], ['key_2', second], ['key_3', second]] as const) {
      const send = defined(sends.get(key), `send span of ${key}`);
      expect({ key, trace: send.spanContext().traceId, parent: send.parentSpanContext?.spanId }).toEqual({ key, trace: writer.spanContext().traceId, parent: writer.spanContext().spanId });
      const consumed = defined(
        processed.find((p) => p.attributes['messaging.kafka.message.key'] === key),
        `process span of ${key}`,
      );
      expect({ key, trace: consumed.spanContext().traceId, parent: consumed.parentSpanContext?.spanId }).toEqual({ key, trace: writer.spanContext().traceId, parent: send.spanContext().spanId });
    }
    // The row without a context starts a trace of its own: not the kicking request's.
    expect(defined(sends.get('pay_4'), 'send span of pay_4').parentSpanContext).toBeUndefined();
    const kickersTrace = exporter.getFinishedSpans().filter((s) => s.spanContext().traceId === kicker.spanContext().traceId);
    expect(kickersTrace.map((s) => s.name)).toEqual(['POST /api/v1/invoices']);
    expect(seen).toHaveLength(4);
  });
});

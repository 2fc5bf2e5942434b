import { Controller, INestApplication, Injectable, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { EventPattern, Payload } from '@nestjs/microservices';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { randomUUID } from 'node:crypto';
import { KafkaEventPublisher } from '../event-publisher';
import { BatchedMessage, createKafka, IncomingMessage } from '../kafka-client';
import { connectEventTransport, EventBusModule } from './event-bus.module';
import { KafkaEventTransport, ReplaySubscriptionState } from './kafka-event-transport';

const brokers = ['127.0.0.1:9092'];
const kafka = createKafka({ brokers, clientId: 'event-bus-transport-int' });
const replayed = `test.event-bus.transport.replay.${randomUUID()}`;
const shared = `test.event-bus.transport.group.${randomUUID()}`;
const batched = `test.event-bus.transport.batch.${randomUUID()}`;

@Injectable()
class Seen {
  readonly replayed: string[] = [];
  readonly shared: string[] = [];
  /** Each batch the batch handler was given, as its values; and those it applied. */
  readonly batches: string[][] = [];
  readonly applied: string[] = [];
  /** Values whose first delivery the handler fails, as a handler whose database is down would. */
  readonly failOnce = new Set<string>();
}

@Injectable()
class Subscriptions {
  readonly replay: ReplaySubscriptionState;

  constructor(transport: KafkaEventTransport) {
    this.replay = transport.subscribe({
      topic: replayed,
      delivery: 'every-instance',
      clientId: 'transport-int-replay',
      groupId: `transport-int.${randomUUID()}`,
      replayWindowMs: 3600_000,
      maxWaitTimeInMs: 100,
      // A checkpoint every 250 ms: the freshness asserted below.
      checkpointIntervalMs: 250,
    });
    transport.subscribe({ topic: shared, delivery: 'once-per-service', clientId: 'transport-int-group', groupId: `transport-int.${randomUUID()}`, maxWaitTimeInMs: 100 });
    transport.subscribe({ topic: batched, delivery: 'once-per-service', batch: true, clientId: 'transport-int-batch', groupId: `transport-int.${randomUUID()}`, maxWaitTimeInMs: 100 });
  }
}

@Controller()
class Handlers {
  constructor(private readonly seen: Seen) {}

  @EventPattern(replayed)
  replay(@Payload() message: IncomingMessage): void {
    this.seen.replayed.push(String(message.value));
  }

  @EventPattern(shared)
  async group(@Payload() message: IncomingMessage): Promise<void> {
    const value = String(message.value);
    if (this.seen.failOnce.delete(value)) throw new Error(`cannot apply ${value} yet`);
    this.seen.shared.push(value);
  }
}

@Controller()
class BatchHandler {
  constructor(private readonly seen: Seen) {}

  @EventPattern(batched)
  async apply(messages: BatchedMessage[]): Promise<void> {
    const values = messages.map((m) => String(m.value));
    this.seen.batches.push(values);
    // All or nothing, as one transaction: a failure leaves the whole slice to be delivered again.
    if (values.some((v) => this.seen.failOnce.delete(v))) throw new Error('cannot apply this batch yet');
    for (const m of messages) await m.process(async () => this.seen.applied.push(String(m.value)));
  }
}

@Module({ imports: [EventBusModule.forRoot({ brokers })], controllers: [Handlers, BatchHandler], providers: [Seen, Subscriptions] })
class AppModule {}

async function until(condition: () => boolean, ms = 30000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('timed out');
    await new Promise((r) => setTimeout(r, 50));
  }
}

let app: INestApplication;
const publisher = new KafkaEventPublisher(kafka);

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({
    topics: [
      { topic: replayed, numPartitions: 3, replicationFactor: 1 },
      { topic: shared, numPartitions: 1, replicationFactor: 1 },
      { topic: batched, numPartitions: 1, replicationFactor: 1 },
    ],
    waitForLeaders: true,
  });
  await admin.disconnect();
  // Published before the app starts: the replay window must bring them.
  await publisher.publish(replayed, Array.from({ length: 10 }, (_, i) => ({ key: `k${i}`, value: `before-${i}` })));
  jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: ['warn'] });
  connectEventTransport(app);
  await app.init();
  await app.startAllMicroservices();
});

afterAll(async () => {
  await app?.close();
  await publisher.close();
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [replayed, shared, batched] }).catch(() => undefined);
  await admin.disconnect();
  jest.restoreAllMocks();
});

describe(`${KafkaEventTransport.name} against the broker`, () => {
  it('replays the window to the @EventPattern handler, reports caught up and fresh, then delivers live events', async () => {
    const { replay } = app.get(Subscriptions);
    await until(() => replay.caughtUp);
    const seen = app.get(Seen);
    expect(new Set(seen.replayed)).toEqual(new Set(Array.from({ length: 10 }, (_, i) => `before-${i}`)));

    await publisher.publish(replayed, [{ key: 'live', value: 'live-1' }]);
    await until(() => seen.replayed.includes('live-1'), 10000);
    await new Promise((r) => setTimeout(r, 1000));
    expect(Date.now() - (replay.upToDateAt ?? 0)).toBeLessThan(1000);
  });

  it('delivers again a message whose handler threw, and the next ones after it, in order', async () => {
    const seen = app.get(Seen);
    seen.failOnce.add('g-2');
    await publisher.publish(shared, ['g-1', 'g-2', 'g-3'].map((value) => ({ key: 'one-key', value })));
    await until(() => seen.shared.length >= 3);
    expect(seen.shared).toEqual(['g-1', 'g-2', 'g-3']);
    expect(seen.failOnce.size).toBe(0);
  });

  it('hands a batch subscription what a fetch brought as one array, and delivers a failed batch again whole, in order', async () => {
    const seen = app.get(Seen);
    seen.failOnce.add('b-3');
    const values = Array.from({ length: 50 }, (_, i) => `b-${i}`);
    await publisher.publish(batched, values.map((value) => ({ key: 'one-key', value })));
    await until(() => seen.applied.length >= 50);
    expect(seen.applied).toEqual(values);
    // Fewer calls than messages: they came in batches; the one that failed came back with b-3 in it.
    expect(seen.batches.length).toBeLessThan(50);
    expect(seen.batches.filter((b) => b.includes('b-3'))).toHaveLength(2);
  });
});

import { Controller, INestApplication, Injectable, Logger, Module } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { Ctx, EventPattern, Payload } from '@nestjs/microservices';
import { FastifyAdapter } from '@nestjs/platform-fastify';
import { CONSUMER_RELAUNCH_DELAY_MS, IncomingMessage, jsonValueOf } from '../kafka-client';
import { FakeKafka, fakeKafka } from '../testing/fake-kafka';
import { connectEventTransport, EventBusModule } from './event-bus.module';
import { EventHandlerError, KafkaEventContext, KafkaEventTransport, ReplaySubscriptionState, SubscriptionState } from './kafka-event-transport';

/** What the handlers below saw, in order, and what they are told to do. */
@Injectable()
class Seen {
  readonly messages: Array<{ topic: string; offset: string; value: unknown; fromContext: string }> = [];
  failNext: unknown = null;
  gate: Promise<void> | null = null;
}

/** Owns two subscriptions as the revocation feed and the domain-event consumer do: declared on the transport. */
@Injectable()
class Owner {
  readonly revocations: ReplaySubscriptionState;
  readonly domain: SubscriptionState;

  constructor(transport: KafkaEventTransport) {
    this.revocations = transport.subscribe({
      topic: 'revocations',
      delivery: 'every-instance',
      clientId: 'test-revocations',
      groupId: 'test.host.1',
      replayWindowMs: 60_000,
      maxWaitTimeInMs: 100,
    });
    this.domain = transport.subscribe({ topic: 'domain', delivery: 'once-per-service', clientId: 'test-domain', groupId: 'test.domain', maxWaitTimeInMs: 100 });
  }
}

@Controller()
class Handlers {
  constructor(private readonly seen: Seen) {}

  @EventPattern('revocations')
  revocation(@Payload() message: IncomingMessage, @Ctx() context: KafkaEventContext): void {
    this.record(message, context);
  }

  @EventPattern('domain')
  async domain(@Payload() message: IncomingMessage, @Ctx() context: KafkaEventContext): Promise<void> {
    await this.seen.gate;
    if (this.seen.failNext) {
      const failure = this.seen.failNext;
      this.seen.failNext = null;
      throw failure;
    }
    this.record(message, context);
  }

  private record(message: IncomingMessage, context: KafkaEventContext): void {
    this.seen.messages.push({ topic: message.topic, offset: message.offset, value: jsonValueOf(message), fromContext: context.getMessage().offset });
  }
}

async function hybridApp(fake: FakeKafka, options: { owner?: boolean } = {}): Promise<INestApplication> {
  @Module({
    imports: [EventBusModule.forRoot({ brokers: ['kafka:9092'], retryDelayMs: 2000, createKafka: () => fake.kafka })],
    controllers: [Handlers],
    providers: [Seen, ...(options.owner === false ? [] : [Owner])],
  })
  class AppModule {}
  const app = await NestFactory.create(AppModule, new FastifyAdapter(), { logger: false, abortOnError: false });
  connectEventTransport(app);
  await app.init();
  await app.startAllMicroservices();
  return app;
}

/** Lets the transport's background start (admin, connect, run, seek) finish. */
async function settle(): Promise<void> {
  for (let i = 0; i < 20; i++) await new Promise((resolve) => setImmediate(resolve));
}

/** The latest consumer of the group, or of a group of its own a relaunch gave it (`<groupId>.<n>`). */
const consumerOf = (fake: FakeKafka, groupId: string) => {
  const consumer = [...fake.consumers].reverse().find((c) => c.groupId === groupId || c.groupId.startsWith(`${groupId}.`));
  if (!consumer) throw new Error(`no consumer of ${groupId}`);
  return consumer;
};

describe(KafkaEventTransport.name, () => {
  let app: INestApplication | null = null;

  beforeEach(() => {
    jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    jest.spyOn(Logger.prototype, 'error').mockImplementation(() => undefined);
  });

  afterEach(async () => {
    await app?.close();
    app = null;
    jest.useRealTimers();
    jest.restoreAllMocks();
  });

  it('serves each subscription to the @EventPattern handler of its topic, in order, with the message and its context', async () => {
    const fake = fakeKafka();
    app = await hybridApp(fake);
    await settle();
    const revocations = consumerOf(fake, 'test.host.1');
    const domain = consumerOf(fake, 'test.domain');
    expect([revocations.topics, domain.topics]).toEqual([['revocations'], ['domain']]);

    await revocations.deliverValue(7, '{"n":1}');
    await domain.deliverValue(3, '{"n":2}');
    await revocations.deliverValue(8, 'not json');
    expect(app.get(Seen).messages).toEqual([
      { topic: 'revocations', offset: '7', value: { n: 1 }, fromContext: '7' },
      { topic: 'domain', offset: '3', value: { n: 2 }, fromContext: '3' },
      { topic: 'revocations', offset: '8', value: undefined, fromContext: '8' },
    ]);
  });

  it("keeps the replaying subscriber's guarantees: the instance's own group, the replay window, readiness and freshness", async () => {
    const fake = fakeKafka();
    app = await hybridApp(fake);
    await settle();
    const { revocations, domain } = app.get(Owner);
    const consumer = consumerOf(fake, 'test.host.1');
    expect(consumer.seeks).toEqual([{ topic: 'revocations', partition: 0, offset: '7' }]);
    expect({ running: revocations.running, caughtUp: revocations.caughtUp, upToDateAt: revocations.upToDateAt, domain: domain.running }).toEqual({
      running: true,
      caughtUp: false,
      upToDateAt: null,
      domain: true,
    });

    await consumer.deliver(7, 8, 9);
    expect(revocations.caughtUp).toBe(true);
    const caughtUpAt = revocations.upToDateAt as number;
    await new Promise((r) => setTimeout(r, 5));
    // A completed fetch prompts a checkpoint; the consumer holds everything up to its end offsets.
    consumer.fetched();
    await settle();
    expect(revocations.upToDateAt).toBeGreaterThan(caughtUpAt);
  });

  it('does not hold the boot while Kafka is unreachable, and starts each subscription once it answers', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const fake = fakeKafka();
    fake.unreachable.value = true;
    app = await hybridApp(fake);
    await settle();
    const { revocations, domain } = app.get(Owner);
    expect([revocations.running, revocations.caughtUp, domain.running]).toEqual([false, false, false]);
    // An attempt every 2 s, each told to `on('error')` listeners, leaving nothing connected behind it.
    const failed: string[] = [];
    app.get(KafkaEventTransport).on('error', (_error, topic) => failed.push(topic));
    await jest.advanceTimersByTimeAsync(2000);
    await settle();
    expect(failed.sort()).toEqual(['domain', 'revocations']);
    expect(fake.consumers.every((c) => !c.connected)).toBe(true);

    fake.unreachable.value = false;
    await jest.advanceTimersByTimeAsync(2000);
    await settle();
    expect([revocations.running, domain.running]).toEqual([true, true]);
    await consumerOf(fake, 'test.host.1').deliver(7, 8, 9);
    expect(revocations.caughtUp).toBe(true);
  });

  it('leaves the offset uncommitted when a handler throws, so kafkajs delivers the message again', async () => {
    const fake = fakeKafka();
    app = await hybridApp(fake);
    await settle();
    const seen = app.get(Seen);
    const domain = consumerOf(fake, 'test.domain');

    // Nest's exception layer logs the error and answers with an observable error: it still fails the message.
    seen.failNext = new Error('Postgres is down');
    const failed = domain.deliverValue(5, '{}');
    await expect(failed).rejects.toBeInstanceOf(EventHandlerError);
    await expect(failed).rejects.toThrow(/handler of domain failed at partition 0, offset 5: Internal server error/);
    expect(seen.messages).toEqual([]);

    await domain.deliverValue(5, '{}');
    expect(seen.messages.map((m) => m.offset)).toEqual(['5']);
  });

  it("runs each message inside Nest's processing hooks once they are set, failures included", async () => {
    const fake = fakeKafka();
    app = await hybridApp(fake);
    const transport = app.get(KafkaEventTransport);
    const started: string[] = [];
    const ended: string[] = [];
    transport.setOnProcessingStartHook((_id, context, done) => {
      started.push((context as KafkaEventContext).getMessage().offset);
      return done();
    });
    transport.setOnProcessingEndHook((_id, context) => ended.push((context as KafkaEventContext).getMessage().offset));
    await settle();
    const domain = consumerOf(fake, 'test.domain');
    await domain.deliverValue(1, '{}');
    app.get(Seen).failNext = new Error('down');
    await expect(domain.deliverValue(2, '{}')).rejects.toBeInstanceOf(EventHandlerError);
    expect({ started, ended }).toEqual({ started: ['1', '2'], ended: ['1'] });
  });

  it('hands kafkajs the next message only once the handler has settled', async () => {
    const fake = fakeKafka();
    app = await hybridApp(fake);
    await settle();
    const seen = app.get(Seen);
    let open: () => void = () => undefined;
    seen.gate = new Promise((resolve) => (open = resolve));
    let done = false;
    const delivery = consumerOf(fake, 'test.domain')
      .deliverValue(1, '{}')
      .then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    open();
    await delivery;
    expect(seen.messages.map((m) => m.offset)).toEqual(['1']);
  });

  it('relaunches a consumer kafkajs gives up on after a broker restart, and goes on serving the handler', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const fake = fakeKafka();
    app = await hybridApp(fake);
    await settle();
    const { revocations } = app.get(Owner);
    const first = consumerOf(fake, 'test.host.1');
    await first.deliver(7, 8, 9);
    const before = revocations.upToDateAt;

    fake.end.value = 11;
    first.crash(false);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS);
    await settle();
    const relaunched = consumerOf(fake, 'test.host.1');
    expect(relaunched).not.toBe(first);
    // A group of its own: the consumer it replaces cannot share its partitions.
    expect(relaunched.groupId).toBe('test.host.1.1');
    expect(relaunched.seeks).toEqual([{ topic: 'revocations', partition: 0, offset: '7' }]);
    relaunched.fetched();
    expect(revocations.upToDateAt).toBe(before); // replaying: not fresh yet
    await relaunched.deliver(7, 8, 9, 10);
    expect(revocations.upToDateAt).toBe(Date.now());
    expect(app.get(Seen).messages.filter((m) => m.topic === 'revocations').map((m) => m.offset)).toEqual(['7', '8', '9', '7', '8', '9', '10']);
  });

  it('stops every consumer, and the retries of a subscription that never started, on close', async () => {
    jest.useFakeTimers({ doNotFake: ['nextTick', 'setImmediate', 'queueMicrotask'] });
    const fake = fakeKafka();
    app = await hybridApp(fake);
    await settle();
    const running = fake.consumers.filter((c) => c.connected);
    expect(running).toHaveLength(2);
    fake.unreachable.value = true;
    const { revocations } = app.get(Owner);
    await app.close();
    app = null;
    expect(fake.consumers.some((c) => c.connected)).toBe(false);
    expect(revocations.running).toBe(false);
    const count = fake.consumers.length;
    await jest.advanceTimersByTimeAsync(10_000);
    expect(fake.consumers).toHaveLength(count);
  });

  it('refuses to start a subscription that no handler serves (a wiring mistake stops the boot)', async () => {
    const fake = fakeKafka();
    @Injectable()
    class Orphan {
      constructor(transport: KafkaEventTransport) {
        transport.subscribe({ topic: 'nobody', delivery: 'once-per-service', clientId: 'c', groupId: 'g', maxWaitTimeInMs: 100 });
      }
    }
    @Module({ imports: [EventBusModule.forRoot({ brokers: [], createKafka: () => fake.kafka })], providers: [Orphan] })
    class OrphanModule {}
    const orphan = await NestFactory.create(OrphanModule, new FastifyAdapter(), { logger: false, abortOnError: false });
    connectEventTransport(orphan);
    await orphan.init();
    await expect(orphan.startAllMicroservices()).rejects.toThrow("no @EventPattern('nobody') handler");
    await orphan.close();
  });
});

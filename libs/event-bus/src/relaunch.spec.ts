import { EventEmitter } from 'node:events';
import type { Kafka } from 'kafkajs';
import { KafkaGroupSubscriber } from './group-subscriber';
import { CONSUMER_RELAUNCH_DELAY_MS } from './kafka-client';
import { KafkaReplayingSubscriber } from './replaying-subscriber';

/** A kafkajs consumer stand-in: records what is asked of it and can crash like the real one. */
class FakeConsumer extends EventEmitter {
  readonly events = { CRASH: 'consumer.crash' };
  readonly seeks: Array<{ partition: number; offset: string }> = [];
  connected = false;
  running = false;
  failConnect = false;

  async connect(): Promise<void> {
    if (this.failConnect) throw new Error('ECONNREFUSED');
    this.connected = true;
  }
  subscribed = false;

  async subscribe(): Promise<void> {
    this.subscribed = true;
  }
  async run(): Promise<void> {
    this.running = true;
  }
  seek(s: { partition: number; offset: string }): void {
    this.seeks.push(s);
  }
  async disconnect(): Promise<void> {
    this.connected = false;
    this.running = false;
  }
  /** What kafkajs emits after a crash; `restart: false` means it has given up on this consumer. */
  crash(restart: boolean): void {
    this.emit(this.events.CRASH, { payload: { error: new Error('Failed to find group coordinator'), groupId: 'g', restart } });
  }
}

function fakeKafka(): { kafka: Kafka; consumers: FakeConsumer[]; nextFailsToConnect: { value: number } } {
  const consumers: FakeConsumer[] = [];
  const nextFailsToConnect = { value: 0 };
  const admin = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    fetchTopicOffsets: async () => [{ partition: 0, high: '10', low: '0', offset: '10' }],
    fetchTopicOffsetsByTimestamp: async () => [{ partition: 0, offset: '7' }],
  };
  const kafka = {
    admin: () => admin,
    consumer: () => {
      const consumer = new FakeConsumer();
      if (nextFailsToConnect.value > 0) {
        nextFailsToConnect.value -= 1;
        consumer.failConnect = true;
      }
      consumers.push(consumer);
      return consumer;
    },
  } as unknown as Kafka;
  return { kafka, consumers, nextFailsToConnect };
}

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe(KafkaReplayingSubscriber.name, () => {
  const subscriber = (kafka: Kafka) =>
    new KafkaReplayingSubscriber(kafka, { topic: 't', groupId: 'g', replayWindowMs: 60000, maxWaitTimeInMs: 100, handle: () => undefined });

  it('starts a consumer again, from the replay window, when kafkajs gives up on it after a crash', async () => {
    const { kafka, consumers, nextFailsToConnect } = fakeKafka();
    const s = subscriber(kafka);
    await s.start();
    expect(consumers).toHaveLength(1);

    // The broker is still coming back: the first relaunch fails to connect, the next one works.
    nextFailsToConnect.value = 1;
    consumers[0].crash(false);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS);
    expect(consumers).toHaveLength(2);
    expect(consumers[1].connected).toBe(false);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS);
    expect(consumers).toHaveLength(3);
    expect(consumers[2].subscribed && consumers[2].running).toBe(true);
    expect(consumers[2].seeks).toEqual([{ topic: 't', partition: 0, offset: '7' }]);
    await s.stop();
  });

  it('leaves a consumer that kafkajs restarts itself alone, and relaunches nothing once stopped', async () => {
    const { kafka, consumers } = fakeKafka();
    const s = subscriber(kafka);
    await s.start();
    consumers[0].crash(true);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS * 3);
    expect(consumers).toHaveLength(1);

    consumers[0].crash(false);
    await s.stop();
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS * 3);
    expect(consumers).toHaveLength(1);
  });
});

describe(KafkaGroupSubscriber.name, () => {
  it('starts a consumer again in the same group when kafkajs gives up on it after a crash', async () => {
    const { kafka, consumers } = fakeKafka();
    const s = new KafkaGroupSubscriber(kafka, { topic: 't', groupId: 'g', maxWaitTimeInMs: 100, handle: async () => undefined });
    await s.start();
    consumers[0].crash(false);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS);
    expect(consumers).toHaveLength(2);
    expect(consumers[1].running).toBe(true);
    await s.stop();
  });
});

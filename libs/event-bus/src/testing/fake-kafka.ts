/**
 * Unit-test stand-ins for kafkajs, enough for the subscribers and the transport: one partition whose
 * replay window starts at offset 7, consumers that complete fetches, deliver messages and crash like
 * the real ones. Not part of the library build (tsconfig.lib.json).
 */
import { EventEmitter } from 'node:events';
import type { Kafka } from 'kafkajs';

type EachMessage = (payload: {
  topic: string;
  partition: number;
  message: { offset: string; key: Buffer | null; value: Buffer | null; timestamp: string; headers?: Record<string, Buffer> };
}) => Promise<void>;

export class FakeConsumer extends EventEmitter {
  readonly events = { CRASH: 'consumer.crash', FETCH: 'consumer.fetch' };
  readonly seeks: Array<{ partition: number; offset: string }> = [];
  readonly topics: string[] = [];
  connected = false;
  running = false;
  subscribed = false;
  failConnect = false;
  private eachMessage: EachMessage | null = null;

  constructor(
    readonly groupId: string,
    /** What the subscriber asked kafkajs for (its retry policy included). */
    readonly options: { groupId: string; retry?: { restartOnFailure?: (e: Error) => Promise<boolean> } } = { groupId },
  ) {
    super();
  }

  async connect(): Promise<void> {
    if (this.failConnect) throw new Error('ECONNREFUSED');
    this.connected = true;
  }
  async subscribe(options: { topics: string[] }): Promise<void> {
    this.subscribed = true;
    this.topics.push(...options.topics);
  }
  async run(options: { eachMessage: EachMessage }): Promise<void> {
    this.running = true;
    this.eachMessage = options.eachMessage;
  }
  seek(s: { partition: number; offset: string }): void {
    this.seeks.push(s);
  }
  async disconnect(): Promise<void> {
    this.connected = false;
    this.running = false;
  }
  /** What kafkajs emits after every completed fetch, one that brought no message included. */
  fetched(): void {
    this.emit(this.events.FETCH, { payload: { numberOfBatches: 0, duration: 100, nodeId: 1 } });
  }
  /** Hands messages of partition 0 (value `{}`) to the subscriber, as a fetch that brought them would. */
  async deliver(...offsets: number[]): Promise<void> {
    for (const offset of offsets) await this.deliverValue(offset, '{}');
  }
  /** Hands one message to the subscriber; rejects as kafkajs' eachMessage would see it (the offset then stays uncommitted). */
  async deliverValue(offset: number, value: string): Promise<void> {
    await this.eachMessage?.({
      topic: this.topics[0] ?? 't',
      partition: 0,
      message: { offset: String(offset), key: null, value: Buffer.from(value), timestamp: '0' },
    });
  }
  /** What kafkajs emits after a crash; `restart: false` means it has given up on this consumer. */
  crash(restart: boolean): void {
    this.emit(this.events.CRASH, { payload: { error: new Error('Failed to find group coordinator'), groupId: this.groupId, restart } });
  }
}

export interface FakeKafka {
  kafka: Kafka;
  consumers: FakeConsumer[];
  /** How many of the next consumers fail to connect (the broker still coming back). */
  nextFailsToConnect: { value: number };
  /** Where the partition ends now (10 at first). */
  end: { value: number };
  /** Makes the admin's requests fail (no broker at all), or succeed again. */
  unreachable: { value: boolean };
}

/** One partition whose replay window starts at offset 7 and which ends at `end.value`. */
export function fakeKafka(): FakeKafka {
  const consumers: FakeConsumer[] = [];
  const nextFailsToConnect = { value: 0 };
  const end = { value: 10 };
  const unreachable = { value: false };
  const admin = {
    connect: async () => {
      if (unreachable.value) throw new Error('ECONNREFUSED');
    },
    disconnect: async () => undefined,
    fetchTopicOffsets: async () => {
      if (unreachable.value) throw new Error('KafkaJSConnectionError: Connection error: connect ECONNREFUSED');
      return [{ partition: 0, high: String(end.value), low: '0', offset: String(end.value) }];
    },
    fetchTopicOffsetsByTimestamp: async () => [{ partition: 0, offset: '7' }],
  };
  const kafka = {
    admin: () => admin,
    consumer: (options: { groupId: string }) => {
      const consumer = new FakeConsumer(options.groupId, options);
      if (unreachable.value || nextFailsToConnect.value > 0) {
        if (!unreachable.value) nextFailsToConnect.value -= 1;
        consumer.failConnect = true;
      }
      consumers.push(consumer);
      return consumer;
    },
  } as unknown as Kafka;
  return { kafka, consumers, nextFailsToConnect, end, unreachable };
}

/**
 * Unit-test stand-ins for what `createKafka` returns (handed to the Kafka transport with its
 * `createKafka` option), enough for the revocation feed's replaying subscriber: one partition, an admin that reports the replay window, consumers that complete
 * fetches and deliver messages when told to. Not part of the library build (tsconfig.lib.json).
 */
import { EventEmitter } from 'node:events';
import { newId, RevocationEvent, SESSIONS_REVOKED_V1 } from '@invoicing/contracts';
import type { createKafka } from '@invoicing/event-bus';

type EachMessage = (payload: {
  topic: string;
  partition: number;
  message: { offset: string; key: Buffer | null; value: Buffer | null; timestamp: string };
}) => Promise<void>;

export class FakeConsumer extends EventEmitter {
  readonly events = { CRASH: 'consumer.crash', FETCH: 'consumer.fetch' };
  groupId = '';
  private eachMessage: EachMessage | null = null;
  running = false;
  readonly seeks: Array<{ partition: number; offset: string }> = [];

  async connect(): Promise<void> {
    this.running = false;
  }
  async subscribe(): Promise<void> {
    this.running = false;
  }
  async run(options: { eachMessage: EachMessage }): Promise<void> {
    this.eachMessage = options.eachMessage;
    this.running = true;
  }
  seek(s: { partition: number; offset: string }): void {
    this.seeks.push(s);
  }
  async disconnect(): Promise<void> {
    this.running = false;
  }

  /** What kafkajs emits after every completed fetch, one that brought no message included. */
  fetched(): void {
    this.emit(this.events.FETCH, { payload: { numberOfBatches: 0, duration: 100, nodeId: 1 } });
  }

  /** Hands a message of partition 0 to the subscriber, as a fetch that brought it would. */
  async deliver(offset: number, value: unknown): Promise<void> {
    await this.eachMessage?.({
      topic: 'auth.revocations.v1',
      partition: 0,
      message: { offset: String(offset), key: null, value: Buffer.from(JSON.stringify(value)), timestamp: '0' },
    });
  }
}

export interface FakeKafka {
  kafka: ReturnType<typeof createKafka>;
  consumers: FakeConsumer[];
  /** The consumer the subscriber uses now. */
  readonly consumer: FakeConsumer;
}

/** A topic of one partition whose replay window spans offsets `start` to `end` (empty by default). */
export function fakeKafka(window: { start: number; end: number } = { start: 0, end: 0 }): FakeKafka {
  const consumers: FakeConsumer[] = [];
  const admin = {
    connect: async () => undefined,
    disconnect: async () => undefined,
    fetchTopicOffsets: async () => [{ partition: 0, high: String(window.end), low: '0', offset: String(window.end) }],
    fetchTopicOffsetsByTimestamp: async () => [{ partition: 0, offset: String(window.start) }],
  };
  const kafka = {
    admin: () => admin,
    consumer: (options: { groupId: string }) => {
      const consumer = new FakeConsumer();
      consumer.groupId = options.groupId;
      consumers.push(consumer);
      return consumer;
    },
  } as unknown as ReturnType<typeof createKafka>;
  return {
    kafka,
    consumers,
    get consumer() {
      return consumers[consumers.length - 1];
    },
  };
}

/** A valid `sessions_revoked` event for one session, revoked at `at`. */
export function sessionsRevoked(sessionId: string, at: number, apiKeyId = newId('key')): RevocationEvent {
  const time = new Date(at).toISOString();
  return {
    specversion: '1.0',
    id: newId('evt'),
    source: '/auth-service',
    type: SESSIONS_REVOKED_V1,
    subject: apiKeyId,
    time,
    datacontenttype: 'application/json',
    data: {
      organization_id: newId('org'),
      api_key_id: apiKeyId,
      client_id: 'ak_live_test',
      reason: 'session_revoked',
      session_ids: [sessionId],
      revoked_at: time,
    },
  };
}

/** Lets the feed's asynchronous start (admin, connect, run, seek) finish. */
export async function settle(): Promise<void> {
  for (let i = 0; i < 10; i++) await new Promise((resolve) => setImmediate(resolve));
}

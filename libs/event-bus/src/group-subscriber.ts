import type { Consumer, Kafka } from 'kafkajs';
import type { IncomingMessage } from './replaying-subscriber';

export interface GroupSubscriberOptions {
  topic: string;
  /** Shared by all instances of one service: each message is handled once per service. */
  groupId: string;
  maxWaitTimeInMs: number;
  /** Throwing leaves the offset uncommitted: the message is delivered again (at least once). */
  handle(message: IncomingMessage): Promise<void>;
}

/** A consumer-group subscription that starts at the beginning of the topic for a new group. */
export class KafkaGroupSubscriber {
  private consumer: Consumer | null = null;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: GroupSubscriberOptions,
  ) {}

  async start(): Promise<void> {
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      maxWaitTimeInMs: this.options.maxWaitTimeInMs,
      sessionTimeout: 10000,
      heartbeatInterval: 1000,
      allowAutoTopicCreation: false,
    });
    this.consumer = consumer;
    await consumer.connect();
    await consumer.subscribe({ topics: [this.options.topic], fromBeginning: true });
    await consumer.run({
      autoCommit: true,
      eachMessage: async ({ topic, partition, message }) =>
        this.options.handle({
          topic,
          partition,
          offset: message.offset,
          key: message.key ? message.key.toString() : null,
          value: message.value,
          timestamp: Number(message.timestamp),
        }),
    });
  }

  async stop(): Promise<void> {
    const consumer = this.consumer;
    this.consumer = null;
    if (consumer) await consumer.disconnect().catch(() => undefined);
  }
}

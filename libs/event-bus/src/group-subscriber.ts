import type { Consumer, Kafka } from 'kafkajs';
import { BatchedMessage, IncomingMessage, runConsumer, Subscription, subscriptionConsumer } from './kafka-client';

export interface GroupSubscriberOptions {
  topic: string;
  /** Shared by all instances of one service: each message is handled once per service. */
  groupId: string;
  maxWaitTimeInMs: number;
  /** Throwing leaves the offset uncommitted: the message is delivered again (at least once). */
  handle(message: IncomingMessage): Promise<void>;
  /** When set, used instead of `handle`: slices of one partition's messages (runConsumer's `handleBatch`). */
  handleBatch?(messages: BatchedMessage[]): Promise<void>;
}

/** A consumer-group subscription that starts at the beginning of the topic for a new group. */
export class KafkaGroupSubscriber {
  private consumer: Consumer | null = null;
  private stopped = true;
  private readonly subscription: Subscription = { isCurrent: (c) => this.consumer === c, isStopped: () => this.stopped };

  constructor(
    private readonly kafka: Kafka,
    private readonly options: GroupSubscriberOptions,
  ) {}

  async start(): Promise<void> {
    this.stopped = false;
    await this.launch();
  }

  private async launch(): Promise<void> {
    // A consumer kafkajs gives up on is started again in the same group: it resumes from the
    // group's committed offsets (delivery is at least once either way).
    const consumer = subscriptionConsumer(this.kafka, this.options, this.subscription, () => this.launch());
    this.consumer = consumer;
    const { handleBatch } = this.options;
    await runConsumer(consumer, {
      topic: this.options.topic,
      groupId: this.options.groupId,
      handle: (message) => this.options.handle(message),
      handleBatch: handleBatch ? (messages) => handleBatch(messages) : undefined,
    });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const consumer = this.consumer;
    this.consumer = null;
    if (consumer) await consumer.disconnect().catch(() => undefined);
  }
}

import { Kafka, Partitioners, Producer } from 'kafkajs';
import { sendWithTrace } from './tracing/message-tracing';

export interface OutgoingMessage {
  /** Partitioning key: messages with one key stay in order. */
  key: string;
  value: string;
  /**
   * A `traceparent` here (the outbox relay copies its row's) is the parent of the message's send
   * span; the publisher replaces it with that span's own (tracing/message-tracing.ts).
   */
  headers?: Record<string, string>;
}

/**
 * Publishes to Kafka with `acks=all`; throws when the broker is unreachable. Each message carries the
 * trace context of its send span, a child of its own `traceparent` or of the active span.
 */
export interface EventPublisher {
  publish(topic: string, messages: OutgoingMessage[]): Promise<void>;
  close(): Promise<void>;
}

export class KafkaEventPublisher implements EventPublisher {
  private producer: Producer | null = null;
  private connecting: Promise<Producer> | null = null;

  constructor(private readonly kafka: Kafka) {}

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    const producer = await this.connected();
    try {
      await sendWithTrace(topic, messages, (traced) => producer.send({ topic, acks: -1, messages: traced }));
    } catch (e) {
      // A producer that failed mid-flight may hold a stale connection: start over next time.
      await this.reset();
      throw e;
    }
  }

  async close(): Promise<void> {
    await this.reset();
  }

  private async connected(): Promise<Producer> {
    if (this.producer) return this.producer;
    if (!this.connecting) {
      // Not the idempotent producer: it needs unbounded retries, and the outbox relay must see a
      // failure to retry later. Delivery is at least once; events carry ids for deduplication.
      const producer = this.kafka.producer({
        maxInFlightRequests: 1,
        allowAutoTopicCreation: false,
        createPartitioner: Partitioners.DefaultPartitioner,
      });
      this.connecting = producer.connect().then(
        () => {
          this.producer = producer;
          return producer;
        },
        async (e: unknown) => {
          this.connecting = null;
          await producer.disconnect().catch(() => undefined);
          throw e;
        },
      );
    }
    return this.connecting;
  }

  private async reset(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    this.connecting = null;
    if (producer) await producer.disconnect().catch(() => undefined);
  }
}

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
      // Idempotent (ADR 0030): when a leader dies with a send in flight, kafkajs resends it to the
      // new leader, and the broker drops the copy it already has by the producer id and sequence,
      // so a broker failover writes no duplicate. Its retries stay bounded (the outbox relay must
      // see a failure to retry later); kafkajs warns that bounded retries may break the sequence,
      // which cannot happen here: a producer is discarded after its first failed send (reset), and
      // the next one has a new producer id. Delivery across relay retries is still at least once;
      // events carry ids for deduplication.
      const producer = this.kafka.producer({
        idempotent: true,
        retry: { retries: 5, initialRetryTime: 100, maxRetryTime: 1000 },
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

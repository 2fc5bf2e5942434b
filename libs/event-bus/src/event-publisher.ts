import type { Kafka } from 'kafkajs';
import { lastValueFrom } from 'rxjs';
import { KafkaEventClient } from './nest/kafka-event-client';

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

/**
 * The promise-shaped publisher the outbox relay and direct sends use, over the Nest client
 * ({@link KafkaEventClient}) that owns the producer: publishing goes through @nestjs/microservices
 * like consuming does (ADR 0031), at the cost of one small rxjs pipeline per call, next to a broker
 * round trip.
 */
export class KafkaEventPublisher implements EventPublisher {
  // Private: `emit` sends as soon as it is called, and an error nobody subscribes to goes nowhere.
  // Every send goes through `publish`, which awaits the broker's acknowledgement.
  private readonly client: KafkaEventClient;

  constructor(kafka: Kafka) {
    this.client = new KafkaEventClient(kafka);
  }

  async publish(topic: string, messages: OutgoingMessage[]): Promise<void> {
    await lastValueFrom(this.client.emit(topic, messages), { defaultValue: undefined });
  }

  close(): Promise<void> {
    return this.client.close();
  }
}

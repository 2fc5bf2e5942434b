import { ClientProxy, ReadPacket, WritePacket } from '@nestjs/microservices';
import { Kafka, Partitioners, Producer } from 'kafkajs';
import type { OutgoingMessage } from '../event-publisher';
import { sendWithTrace } from '../tracing/message-tracing';

/**
 * The Nest client every publish of the platform goes through: `emit(topic, messages)` sends with
 * `acks=all` from an idempotent producer, each message inside its send span (tracing/). The returned
 * observable errors when the broker is unreachable; it is hot, as Nest's `emit` always is, so the
 * send happens whether or not anything subscribes. Events only: Kafka carries no replies here
 * (`send` errors at once).
 */
export class KafkaEventClient extends ClientProxy {
  private producer: Producer | null = null;
  private connecting: Promise<Producer> | null = null;

  constructor(private readonly kafka: Kafka) {
    super();
  }

  /** Connects the producer once; `emit` calls it before every send, a resolved promise after the first. */
  connect(): Promise<Producer> {
    if (this.producer) return Promise.resolve(this.producer);
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

  async close(): Promise<void> {
    await this.reset();
  }

  /** The kafkajs producer, once connected. */
  unwrap<T>(): T {
    if (!this.producer) throw new Error('KafkaEventClient is not connected: emit an event (or call connect) first.');
    return this.producer as T;
  }

  protected async dispatchEvent<T = undefined>(packet: ReadPacket<OutgoingMessage | readonly OutgoingMessage[]>): Promise<T> {
    const topic = String(packet.pattern);
    const messages = Array.isArray(packet.data) ? (packet.data as readonly OutgoingMessage[]) : [packet.data as OutgoingMessage];
    const producer = await this.connect();
    try {
      await sendWithTrace(topic, messages, (traced) => producer.send({ topic, acks: -1, messages: traced }));
      return undefined as T;
    } catch (e) {
      // A producer that failed mid-flight may hold a stale connection: start over next time.
      await this.reset();
      throw e;
    }
  }

  protected publish(_packet: ReadPacket, callback: (packet: WritePacket) => void): () => void {
    callback({ err: new Error('KafkaEventClient publishes events only (emit); Kafka carries no replies here.'), isDisposed: true });
    return () => undefined;
  }

  private async reset(): Promise<void> {
    const producer = this.producer;
    this.producer = null;
    this.connecting = null;
    if (producer) await producer.disconnect().catch(() => undefined);
  }
}

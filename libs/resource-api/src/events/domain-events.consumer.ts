import { Controller, Logger } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, DomainEvent, DomainObjectKind, parsePublicId, validateDomainEvent } from '@invoicing/contracts';
import { BatchedMessage, IncomingMessage, jsonValueOf, KafkaEventTransport } from '@invoicing/event-bus';
import type { DataSource, EntityManager } from 'typeorm';
import type { KnownObject, ReferenceResolver } from '../references/known-objects';
import type { ResourceDefinition } from '../resources/resource-definition';

/** About 16 domain events: what a fetch waits for under load, at most REVOCATION_FETCH_MAX_WAIT_MS. */
const FETCH_MIN_BYTES = 16 * 1024;

const KIND_OF_TYPE = new Map(Object.entries(DOMAIN_EVENT_TYPES).map(([kind, type]) => [type, kind as DomainObjectKind]));

/**
 * Feeds the service's read model (and its `onEvent` reactions) from `invoicing.domain.v1`, through
 * the service's Kafka transport: a `once-per-service` subscription (one consumer group per service:
 * the read model is shared by its instances, so each event is applied once per service) whose
 * messages reach {@link DomainEventsController} in batches: what a fetch brought of a partition,
 * applied in order in **one transaction** (one commit for a burst of events, not one each: ADR 0036),
 * each event's queries inside its own consumer span. Subscribes only when the service reacts to some
 * event; the transport starts it without blocking the app and retries until Kafka answers.
 */
export class DomainEventsConsumer {
  private readonly logger = new Logger(DomainEventsConsumer.name);
  /** Slices handed over and not yet written, with their callers. */
  private readonly waiting: Array<{ messages: BatchedMessage[]; resolve(): void; reject(e: unknown): void }> = [];
  private writing = false;

  constructor(
    private readonly def: ResourceDefinition,
    private readonly db: DataSource,
    private readonly references: ReferenceResolver,
    transport: KafkaEventTransport,
    options: { service: string; maxWaitTimeInMs: number },
  ) {
    if (!this.needed) return;
    transport.subscribe({
      topic: DOMAIN_TOPIC,
      delivery: 'once-per-service',
      clientId: `${options.service}-domain`,
      groupId: `${options.service}.domain`,
      maxWaitTimeInMs: options.maxWaitTimeInMs,
      batch: true,
      // Under load a fetch waits for a few dozen events (or maxWaitTimeInMs): one commit applies them.
      minBytes: FETCH_MIN_BYTES,
    });
  }

  /** Whether this service reacts to any domain event at all. */
  get needed(): boolean {
    return (this.def.references?.length ?? 0) > 0 || Object.keys(this.def.onEvent ?? {}).length > 0;
  }

  /**
   * Applies a partition's slice of events, in order, in one transaction shared with the slices of the
   * other partitions handed over at the same moment (a group commit: the partitions of one fetch
   * arrive together); throwing (e.g. Postgres down) rolls the whole group back and leaves it to be
   * delivered again (every reaction is idempotent: the read model keeps the latest version, a
   * payment is applied once by its id). A slice that arrives while a group is being written waits
   * for the next one: the slices of one partition never overlap, so its order holds.
   */
  handleBatch(messages: BatchedMessage[]): Promise<void> {
    return new Promise((resolve, reject) => {
      this.waiting.push({ messages, resolve, reject });
      if (!this.writing) {
        this.writing = true;
        // The other partitions' slices of this fetch are handed over in the same turn.
        setImmediate(() => void this.writeGroups());
      }
    });
  }

  private async writeGroups(): Promise<void> {
    while (this.waiting.length > 0) {
      const group = this.waiting.splice(0);
      try {
        const events = group.flatMap(({ messages }) => messages.map((message) => ({ message, event: this.decode(message) })));
        if (events.some((e) => e.event !== null)) {
          await this.db.transaction(async (tx) => {
            for (const { message, event } of events) if (event) await message.process(() => this.apply(event, tx));
          });
        }
        for (const slice of group) slice.resolve();
      } catch (e) {
        for (const slice of group) slice.reject(e);
      }
    }
    this.writing = false;
  }

  /** Applies one event in a transaction of its own (a message delivered alone). */
  async handle(message: IncomingMessage): Promise<void> {
    const event = this.decode(message);
    if (event) await this.db.transaction((tx) => this.apply(event, tx));
  }

  /** The event a message holds when this service keeps or reacts to it; null otherwise (logged when malformed). */
  private decode(message: IncomingMessage): Decoded | null {
    const result = validateDomainEvent(jsonValueOf(message));
    if (!result.ok) {
      this.logger.error({ msg: 'domain event rejected', partition: message.partition, offset: message.offset, errors: result.errors });
      return null;
    }
    const event = result.value;
    const kind = KIND_OF_TYPE.get(event.type);
    // The one place an event's organization is parsed: reactions get the uuid.
    const organizationId = parsePublicId('org', event.data.organization_id);
    if (!kind || !organizationId) return null;
    const remember = this.def.references?.includes(kind) ?? false;
    const react = this.def.onEvent?.[event.type];
    if (!remember && !react) return null;
    return { event, kind, organizationId, remember, react };
  }

  private async apply({ event, kind, organizationId, remember, react }: Decoded, tx: EntityManager): Promise<void> {
    if (remember) await this.references.remember(tx, kind, organizationId, event.data.object as KnownObject);
    if (react) await react(event, organizationId, tx);
  }
}

interface Decoded {
  event: DomainEvent;
  kind: DomainObjectKind;
  organizationId: string;
  remember: boolean;
  react: ((event: DomainEvent, organizationId: string, tx: EntityManager) => Promise<void>) | undefined;
}

/**
 * The consumer's handler: the messages of `invoicing.domain.v1`, a partition's slice at a time and in
 * order. A throw fails the slice, which kafkajs then delivers again (its offsets are not committed).
 */
@Controller()
export class DomainEventsController {
  constructor(private readonly consumer: DomainEventsConsumer) {}

  // No parameter decorator: Nest passes the messages straight through (no pipes step).
  @EventPattern(DOMAIN_TOPIC)
  handle(messages: BatchedMessage[]): Promise<void> {
    return this.consumer.handleBatch(messages);
  }
}

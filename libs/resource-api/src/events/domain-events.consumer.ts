import { Controller, Logger } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { DOMAIN_TOPIC, DOMAIN_TOPIC_TYPES, DomainEvent, DomainEventType, DomainObjectKind, isObjectEvent, parsePublicId, validateDomainTopicEvent } from '@invoicing/contracts';
import { BatchedMessage, IncomingMessage, jsonValueOf, KafkaEventTransport, processTogether } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import type { KnownObject, ReferenceResolver } from '../references/known-objects';
import { retryingTransaction } from '../idempotency/transaction-retry';
import type { OrganizationProfileChange, ResourceDefinition } from '../resources/resource-definition';

/** About 16 domain events: what a fetch waits for under load, at most REVOCATION_FETCH_MAX_WAIT_MS. */
const FETCH_MIN_BYTES = 16 * 1024;

// Every type of the topic: a change (an invoice's balance) updates the read model as a creation does.
const KIND_OF_TYPE = new Map(Object.entries(DOMAIN_TOPIC_TYPES) as Array<[string, DomainObjectKind]>);

/**
 * Feeds the service's read model (and its `onEvents` reactions) from `invoicing.domain.v1`, through
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
    private readonly options: {
      service: string;
      maxWaitTimeInMs: number;
      /** Kicked after a batch whose reactions ran: they may have written events of their own (an invoice's balance changed). */
      relay?: { kick(): void };
    },
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
    return (this.def.references?.length ?? 0) > 0 || Object.keys(this.def.onEvents ?? {}).length > 0 || this.def.onOrganizationProfiles !== undefined;
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
        await this.apply(group.flatMap(({ messages }) => messages));
        for (const slice of group) slice.resolve();
      } catch (e) {
        for (const slice of group) slice.reject(e);
      }
    }
    this.writing = false;
  }

  /** Applies one event in a transaction of its own (a message delivered alone, untraced). */
  async handle(message: IncomingMessage): Promise<void> {
    await this.apply([{ ...message, process: (work) => work(), raw: null as never, groupId: '' }]);
  }

  /**
   * One transaction for the events of `messages`: first every object the read model keeps, each in
   * its message's span, then each type's reaction with all of that type's events. A deadlock with
   * another instance's batch (rows locked in another order by a reaction) or a serialization failure
   * is retried here, a few times, before the batch fails and is delivered again.
   */
  private async apply(messages: BatchedMessage[]): Promise<void> {
    const decoded: Array<{ message: BatchedMessage; event: Decoded }> = [];
    const profiles: OrganizationProfileChange[] = [];
    for (const message of messages) {
      const event = this.decode(message);
      if (event === null) continue;
      if ('profile' in event) profiles.push(event);
      else decoded.push({ message, event });
    }
    if (decoded.length === 0 && profiles.length === 0) return;
    const reactions = new Map<DomainEventType, { events: Array<{ event: DomainEvent; organizationId: string }>; messages: BatchedMessage[] }>();
    for (const { message, event } of decoded) {
      if (!event.react) continue;
      const reaction = reactions.get(event.event.type) ?? { events: [], messages: [] };
      reaction.events.push({ event: event.event, organizationId: event.organizationId });
      reaction.messages.push(message);
      reactions.set(event.event.type, reaction);
    }
    await retryingTransaction(
      () =>
        this.db.transaction(async (tx) => {
          for (const { message, event } of decoded) {
            if (event.remember) await message.process(() => this.references.remember(tx, event.kind, event.organizationId, event.event.data.object as KnownObject));
          }
          // One reaction to all the events of a type: in the span of its message when it is one,
          // else in a span of its own linked to each (processTogether).
          for (const [type, { events, messages: of }] of reactions) await processOf(of)(() => this.def.onEvents![type]!(events, tx));
          if (profiles.length > 0) await this.def.onOrganizationProfiles!(profiles, tx);
        }),
      (attempt, e) => this.logger.warn({ msg: 'domain events batch retried', attempt, events: decoded.length, error: String(e) }),
    );
    if (reactions.size > 0) this.options.relay?.kick();
  }

  /**
   * The event a message holds when this service keeps or reacts to it; null otherwise (logged when
   * malformed). An event of the topic that carries no object (an organization's profile changed in
   * Settings) is the definition's `onOrganizationProfiles`', when it has one; else skipped quietly.
   */
  private decode(message: IncomingMessage): Decoded | OrganizationProfileChange | null {
    const result = validateDomainTopicEvent(jsonValueOf(message));
    if (!result.ok) {
      this.logger.error({ msg: 'domain event rejected', partition: message.partition, offset: message.offset, errors: result.errors });
      return null;
    }
    if (!isObjectEvent(result.value)) {
      if (!this.def.onOrganizationProfiles) return null;
      const { data, time } = result.value;
      const organizationId = parsePublicId('org', data.organization_id);
      return organizationId ? { organizationId, version: data.version, profile: data.profile, changedAt: time } : null;
    }
    const event = result.value;
    const kind = KIND_OF_TYPE.get(event.type);
    // The one place an event's organization is parsed: reactions get the uuid.
    const organizationId = parsePublicId('org', event.data.organization_id);
    if (!kind || !organizationId) return null;
    const remember = this.def.references?.includes(kind) ?? false;
    const react = this.def.onEvents?.[event.type] !== undefined;
    if (!remember && !react) return null;
    return { event, kind, organizationId, remember, react };
  }
}

interface Decoded {
  event: DomainEvent;
  kind: DomainObjectKind;
  organizationId: string;
  remember: boolean;
  react: boolean;
}

/** Runs a reaction's work traced as processTogether does; untraced for messages delivered alone (handle). */
function processOf(messages: BatchedMessage[]): (work: () => Promise<void>) => Promise<void> {
  return messages.every((m) => m.raw) ? (work) => processTogether(messages, work) : (work) => work();
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

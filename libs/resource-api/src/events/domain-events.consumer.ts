import { Controller, Logger } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, DomainObjectKind, parsePublicId, validateDomainEvent } from '@invoicing/contracts';
import { IncomingMessage, jsonValueOf, KafkaEventTransport } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import type { KnownObject, ReferenceResolver } from '../references/known-objects';
import type { ResourceDefinition } from '../resources/resource-definition';

const KIND_OF_TYPE = new Map(Object.entries(DOMAIN_EVENT_TYPES).map(([kind, type]) => [type, kind as DomainObjectKind]));

/**
 * Feeds the service's read model (and its `onEvent` reactions) from `invoicing.domain.v1`, through
 * the service's Kafka transport: a `once-per-service` subscription (one consumer group per service:
 * the read model is shared by its instances, so each event is applied once per service) whose
 * messages reach {@link DomainEventsController}. Subscribes only when the service reacts to some
 * event; the transport starts it without blocking the app and retries until Kafka answers.
 */
export class DomainEventsConsumer {
  private readonly logger = new Logger(DomainEventsConsumer.name);

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
    });
  }

  /** Whether this service reacts to any domain event at all. */
  get needed(): boolean {
    return (this.def.references?.length ?? 0) > 0 || Object.keys(this.def.onEvent ?? {}).length > 0;
  }

  /** Applies one event; throwing (e.g. Postgres down) leaves it to be delivered again. */
  async handle(message: IncomingMessage): Promise<void> {
    const result = validateDomainEvent(jsonValueOf(message));
    if (!result.ok) {
      this.logger.error({ msg: 'domain event rejected', partition: message.partition, offset: message.offset, errors: result.errors });
      return;
    }
    const event = result.value;
    const kind = KIND_OF_TYPE.get(event.type);
    // The one place an event's organization is parsed: reactions get the uuid.
    const organizationId = parsePublicId('org', event.data.organization_id);
    if (!kind || !organizationId) return;
    const remember = this.def.references?.includes(kind) ?? false;
    const react = this.def.onEvent?.[event.type];
    if (!remember && !react) return;
    await this.db.transaction(async (tx) => {
      if (remember) await this.references.remember(tx, kind, organizationId, event.data.object as KnownObject);
      if (react) await react(event, organizationId, tx);
    });
  }
}

/**
 * The consumer's handler: every message of `invoicing.domain.v1`, one at a time and in order. A
 * throw fails the message, which kafkajs then delivers again (the offset is not committed).
 */
@Controller()
export class DomainEventsController {
  constructor(private readonly consumer: DomainEventsConsumer) {}

  // No parameter decorator: Nest passes the message straight through (no pipes step).
  @EventPattern(DOMAIN_TOPIC)
  handle(message: IncomingMessage): Promise<void> {
    return this.consumer.handle(message);
  }
}

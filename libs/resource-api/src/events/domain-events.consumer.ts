import { Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, DomainObjectKind, parsePublicId, validateDomainEvent } from '@invoicing/contracts';
import { createKafka, IncomingMessage, jsonValueOf, KafkaGroupSubscriber } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import type { KnownObject, ReferenceResolver } from '../references/known-objects';
import type { ResourceDefinition } from '../resources/resource-definition';

const KIND_OF_TYPE = new Map(Object.entries(DOMAIN_EVENT_TYPES).map(([kind, type]) => [type, kind as DomainObjectKind]));

/**
 * Feeds the service's read model (and its `onEvent` reactions) from `invoicing.domain.v1`. One
 * consumer group per service: the read model is shared by its instances, so each event is applied
 * once per service. Starting never blocks the app; it retries until Kafka answers.
 */
export class DomainEventsConsumer implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(DomainEventsConsumer.name);
  private subscriber: KafkaGroupSubscriber | null = null;
  private retry: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly def: ResourceDefinition,
    private readonly db: DataSource,
    private readonly references: ReferenceResolver,
    private readonly options: { brokers: string[]; service: string; maxWaitTimeInMs: number },
  ) {}

  /** Whether this service reacts to any domain event at all. */
  get needed(): boolean {
    return (this.def.references?.length ?? 0) > 0 || Object.keys(this.def.onEvent ?? {}).length > 0;
  }

  onApplicationBootstrap(): void {
    if (this.needed) void this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    await this.subscriber?.stop();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const kafka = createKafka({
      brokers: this.options.brokers,
      clientId: `${this.options.service}-domain`,
      log: (level, message, extra) => this.logger[level]({ msg: `kafka: ${message}`, ...extra }),
    });
    const subscriber = new KafkaGroupSubscriber(kafka, {
      topic: DOMAIN_TOPIC,
      groupId: `${this.options.service}.domain`,
      maxWaitTimeInMs: this.options.maxWaitTimeInMs,
      handle: (m) => this.handle(m),
    });
    try {
      await subscriber.start();
      this.subscriber = subscriber;
    } catch (e) {
      await subscriber.stop();
      this.logger.warn({ msg: 'domain events consumer cannot reach Kafka yet; retrying', error: String(e) });
      this.retry = setTimeout(() => void this.connect(), 2000);
    }
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

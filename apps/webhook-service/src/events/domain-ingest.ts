import { Controller, Injectable, Logger } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  createdEventType,
  DOMAIN_EVENT_TYPES,
  DOMAIN_TOPIC,
  DomainEvent,
  DomainObjectKind,
  INVOICE_BALANCE_CHANGED_TYPE,
  isObjectEvent,
  newId,
  parsePublicId,
  validateDomainTopicEvent,
  WEBHOOK_EVENT_CATALOGUE,
  WEBHOOK_LIMITS,
  WEBHOOK_PAYLOAD_VERSION,
  WebhookEventType,
} from '@invoicing/contracts';
import { BatchedMessage, jsonValueOf, KafkaEventTransport, processTogether } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import { queryRows } from '../database/query';
import { WebhookConfig } from '../config';
import { DeliveryWorker } from '../delivery/delivery-worker';

const KIND_OF_TYPE = new Map(Object.entries(DOMAIN_EVENT_TYPES).map(([kind, type]) => [type as string, kind as DomainObjectKind]));

/**
 * The webhook event a domain event makes: `<kind>.created` of a creation; of an invoice's balance
 * change, `invoice.paid` when it became paid, else `invoice.partially_paid` (the balance moved).
 */
export function webhookTypeOf(event: DomainEvent): WebhookEventType | null {
  if (event.type === INVOICE_BALANCE_CHANGED_TYPE) {
    return event.data.object.status === 'paid' && event.data.previous?.status !== 'paid' ? 'invoice.paid' : 'invoice.partially_paid';
  }
  const kind = KIND_OF_TYPE.get(event.type);
  return kind ? createdEventType(kind) : null;
}

/** An event ready to be stored: what {@link storeEvents} inserts. */
export interface NewWebhookEvent {
  /** Where it came from (the CloudEvents id of the message): one event per message, however often delivered. */
  sourceId: string;
  organizationId: string;
  type: string;
  scope: string;
  createdAt: string;
  object: Record<string, unknown>;
  /** On a change: the changed fields' values before it (`data.previous_attributes`). */
  previous?: Record<string, unknown>;
}

/**
 * Stores events and, in the same statement, one pending delivery to each enabled endpoint of the
 * organization that wants the type: one commit per batch of messages. An event already stored (a
 * message delivered again) is skipped whole, its deliveries with it.
 */
export async function storeEvents(db: Pick<DataSource, 'query'>, events: NewWebhookEvent[]): Promise<number> {
  if (events.length === 0) return 0;
  const ids: string[] = [];
  const payloads: string[] = [];
  for (const e of events) {
    const id = newId('wev');
    ids.push(parsePublicId('wev', id)!);
    const data = e.previous ? { object: e.object, previous_attributes: e.previous } : { object: e.object };
    payloads.push(JSON.stringify({ object: 'event', id, type: e.type, api_version: WEBHOOK_PAYLOAD_VERSION, created_at: e.createdAt, data }));
  }
  const rows: Array<{ deliveries: string }> = await queryRows(db, 
    `WITH input AS (
       SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::text[], $4::text[], $5::text[], $6::text[], $7::timestamptz[])
         AS t(id, organization_id, source_id, type, scope, payload, created_at)
     ), stored AS (
       INSERT INTO webhooks.events (id, organization_id, source_id, type, scope, payload, created_at)
       SELECT * FROM input ON CONFLICT (source_id) DO NOTHING
       RETURNING id, organization_id, type
     ), queued AS (
       INSERT INTO webhooks.deliveries (endpoint_id, event_id, organization_id, next_attempt_at)
       SELECT e.id, s.id, s.organization_id, now()
       FROM stored s JOIN webhooks.endpoints e
         ON e.organization_id = s.organization_id AND e.status = 'enabled' AND e.deleted_at IS NULL
        AND (e.enabled_events @> ARRAY[s.type] OR e.enabled_events @> ARRAY['*'])
       RETURNING 1
     )
     SELECT count(*)::text AS deliveries FROM queued`,
    [
      ids,
      events.map((e) => e.organizationId),
      events.map((e) => e.sourceId),
      events.map((e) => e.type),
      events.map((e) => e.scope),
      payloads,
      events.map((e) => e.createdAt),
    ],
  );
  return Number(rows[0]?.deliveries ?? 0);
}

/**
 * The oldest creation time an ingested event may have: a topic read from its start by a new consumer
 * group holds history older than the events API keeps, and that is not sent.
 */
export function retentionCutoff(now = Date.now()): number {
  return now - WEBHOOK_LIMITS.eventRetentionDays * 86_400_000;
}

/**
 * What every ingest does with a batch: its events stored in one statement (inside the messages'
 * consumer spans; throwing, e.g. Postgres down, leaves the batch to be delivered again), and the
 * worker woken at once when deliveries were queued.
 */
export async function ingestBatch(db: Pick<DataSource, 'query'>, worker: Pick<DeliveryWorker, 'kick'>, messages: BatchedMessage[], events: NewWebhookEvent[]): Promise<void> {
  if (events.length === 0) return;
  const queued = await processTogether(messages, () => storeEvents(db, events));
  if (queued > 0) worker.kick();
}

/**
 * `invoicing.domain.v1` → events: every object created on the platform becomes a `<kind>.created`
 * event of its organization, an invoice's balance change `invoice.paid` or `invoice.partially_paid`. A `once-per-service` batch subscription: the instances share the work,
 * each batch is one transaction, and a batch that fails (Postgres down) is delivered again.
 */
@Injectable()
export class DomainIngest {
  private readonly logger = new Logger(DomainIngest.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly worker: DeliveryWorker,
    transport: KafkaEventTransport,
    config: WebhookConfig,
  ) {
    transport.subscribe({
      topic: DOMAIN_TOPIC,
      delivery: 'once-per-service',
      clientId: 'webhook-service-domain',
      groupId: 'webhook-service.domain',
      maxWaitTimeInMs: config.REVOCATION_FETCH_MAX_WAIT_MS,
      batch: true,
    });
  }

  /**
   * What of these messages becomes an event (malformed ones are skipped, logged; those past the
   * retention skipped). The topic's events that carry no object (an organization's profile changed
   * in Settings) are no webhook event: skipped quietly.
   */
  toEvents(messages: BatchedMessage[]): NewWebhookEvent[] {
    const oldest = retentionCutoff();
    const events: NewWebhookEvent[] = [];
    for (const message of messages) {
      const checked = validateDomainTopicEvent(jsonValueOf(message));
      if (!checked.ok) {
        this.logger.warn(`skipped a message of ${message.topic} at offset ${message.offset}: ${checked.errors.slice(0, 3).join('; ')}`);
        continue;
      }
      if (!isObjectEvent(checked.value)) continue;
      const event = checked.value;
      const type = webhookTypeOf(event);
      const organizationId = parsePublicId('org', event.data.organization_id);
      if (!type || !organizationId) continue;
      const createdAt = new Date(event.time);
      // The topic is compacted and read from its start by a new consumer group: objects created
      // before the retention window are history, not events to list or send.
      if (createdAt.getTime() < oldest) continue;
      events.push({
        sourceId: event.id,
        organizationId,
        type,
        scope: WEBHOOK_EVENT_CATALOGUE[type].scope,
        createdAt: createdAt.toISOString(),
        object: event.data.object,
        ...(event.data.previous ? { previous: event.data.previous } : {}),
      });
    }
    return events;
  }

  apply(messages: BatchedMessage[]): Promise<void> {
    return ingestBatch(this.db, this.worker, messages, this.toEvents(messages));
  }
}

@Controller()
export class DomainIngestController {
  constructor(private readonly ingest: DomainIngest) {}

  @EventPattern(DOMAIN_TOPIC)
  apply(@Payload() messages: BatchedMessage[]): Promise<void> {
    return this.ingest.apply(messages);
  }
}

import { Controller, Injectable, Logger } from '@nestjs/common';
import { EventPattern, Payload } from '@nestjs/microservices';
import { InjectDataSource } from '@nestjs/typeorm';
import {
  API_KEY_CHANGED_V1,
  API_KEYS_TOPIC,
  ApiKeyChange,
  ApiKeyChangedV1,
  parsePublicId,
  validateApiKeyEvent,
  WEBHOOK_EVENT_CATALOGUE,
  WebhookEventType,
} from '@invoicing/contracts';
import { BatchedMessage, jsonValueOf, KafkaEventTransport } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import { WebhookConfig } from '../config';
import { DeliveryWorker } from '../delivery/delivery-worker';
import { ingestBatch, NewWebhookEvent, retentionCutoff } from './domain-ingest';

/**
 * The webhook events of a key's change. An exposed key is revoked with it: `api_key.exposed` and
 * `api_key.revoked` both, so an endpoint that wants every revocation hears of this one too.
 */
export const WEBHOOK_TYPES_OF_CHANGE: Record<ApiKeyChange, WebhookEventType[]> = {
  expiring: ['api_key.expiring'],
  revoked: ['api_key.revoked'],
  exposed: ['api_key.exposed', 'api_key.revoked'],
  secret_rolled: ['api_key.secret_rolled'],
};

/** The events of one message: the first keeps the message's id as its source, the others add their type. */
export function keyChangeEvents(event: ApiKeyChangedV1): NewWebhookEvent[] {
  const organizationId = parsePublicId('org', event.data.organization_id);
  if (!organizationId) return [];
  return WEBHOOK_TYPES_OF_CHANGE[event.data.change].map((type, i) => ({
    sourceId: i === 0 ? event.id : `${event.id}/${type}`,
    organizationId,
    type,
    scope: WEBHOOK_EVENT_CATALOGUE[type].scope,
    createdAt: new Date(event.data.changed_at).toISOString(),
    object: event.data.api_key,
  }));
}

/**
 * `invoicing.auth.api_key_changed.v1` on `auth.api-keys.v1` → `api_key.expiring`, `.revoked`,
 * `.exposed`, `.secret_rolled` events of the key's organization, with the key as the settings API
 * shows it. A batch per transaction, once per service, as the domain events; the topic keeps them 30
 * days, so a service down for hours misses none. A type of the topic this version does not know is
 * skipped.
 */
@Injectable()
export class KeyChangesIngest {
  private readonly logger = new Logger(KeyChangesIngest.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly worker: DeliveryWorker,
    transport: KafkaEventTransport,
    config: WebhookConfig,
  ) {
    transport.subscribe({
      topic: API_KEYS_TOPIC,
      delivery: 'once-per-service',
      clientId: 'webhook-service-api-keys',
      groupId: 'webhook-service.api-keys',
      maxWaitTimeInMs: config.REVOCATION_FETCH_MAX_WAIT_MS,
      batch: true,
    });
  }

  toEvents(messages: BatchedMessage[]): NewWebhookEvent[] {
    const oldest = retentionCutoff();
    const events: NewWebhookEvent[] = [];
    for (const message of messages) {
      const value = jsonValueOf(message) as { type?: unknown } | undefined;
      if (value?.type !== API_KEY_CHANGED_V1) continue;
      const checked = validateApiKeyEvent(value);
      if (!checked.ok) {
        this.logger.warn(`skipped a message of ${message.topic} at offset ${message.offset}: ${checked.errors.slice(0, 3).join('; ')}`);
        continue;
      }
      if (new Date(checked.value.data.changed_at).getTime() < oldest) continue;
      events.push(...keyChangeEvents(checked.value));
    }
    return events;
  }

  apply(messages: BatchedMessage[]): Promise<void> {
    return ingestBatch(this.db, this.worker, messages, this.toEvents(messages));
  }
}

@Controller()
export class KeyChangesIngestController {
  constructor(private readonly ingest: KeyChangesIngest) {}

  @EventPattern(API_KEYS_TOPIC)
  apply(@Payload() messages: BatchedMessage[]): Promise<void> {
    return this.ingest.apply(messages);
  }
}

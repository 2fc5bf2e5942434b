import { Controller, Injectable, Logger, Module } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { InjectDataSource } from '@nestjs/typeorm';
import { parsePublicId, validateWebhookEndpointEvent, WEBHOOK_ENDPOINTS_TOPIC, WebhookEndpointDisabledV1 } from '@invoicing/contracts';
import { IncomingMessage, jsonValueOf, KafkaEventTransport } from '@invoicing/event-bus';
import type { DataSource } from 'typeorm';
import { AuditEntry, AuditLog, derivedAuditId } from '../audit/audit-log';

/** The auth service's one consumer group on the topic: its instances share the events, each recorded once. */
export const WEBHOOK_AUDIT_GROUP_ID = 'auth-service.webhook-audit';

/**
 * The audit record's id, derived from the event's CloudEvents id (itself derived from the endpoint
 * and its failing_since by the webhook service): however often the event arrives (at least once, a
 * relay retry, a rebalance), `AuditLog.record` finds the id already recorded and writes nothing.
 * Never the event's own id, which belongs to the webhook service's outbox.
 */
export function auditIdOfWebhookEvent(eventId: string): string {
  return derivedAuditId(`audit/webhooks/${eventId}`);
}

/** The audit record of an endpoint the webhook service disabled (ADR 0037): by the system, from no address. */
export function webhookEndpointDisabledEntry(event: WebhookEndpointDisabledV1, organizationId: string): AuditEntry {
  return {
    id: auditIdOfWebhookEvent(event.id),
    type: 'webhook_endpoint.disabled',
    organizationId,
    actor: { kind: 'system', id: null },
    apiKeyId: null,
    clientAddress: null,
    occurredAt: new Date(event.data.disabled_at),
    data: { endpoint_id: event.data.endpoint_id, url: event.data.url, failing_since: event.data.failing_since, reason: event.data.reason },
  };
}

/**
 * Records in the organization's audit log what the webhook service announces on
 * `webhooks.endpoints.v1`: an endpoint it disabled for failing becomes `webhook_endpoint.disabled`.
 * A `once-per-service` subscription (the instances share the work, from the group's committed
 * offsets, the whole topic for a new group), one message at a time, each in a transaction of its own
 * with its record (the chain's lock, the record, its stream event). Idempotent: the record's id comes
 * from the event's, so an event delivered twice makes one record. A handler that throws (Postgres
 * down) leaves the offset uncommitted and the event is delivered again: nothing is lost while the
 * auth service or its database is down, for the topic's retention (30 days). Events that cannot be
 * recorded ever (malformed, an organization this service does not know) are logged and skipped,
 * rather than stop the partition behind them.
 */
@Injectable()
export class WebhookEndpointAudit {
  private readonly logger = new Logger(WebhookEndpointAudit.name);

  constructor(
    @InjectDataSource() private readonly db: DataSource,
    private readonly audit: AuditLog,
    transport: KafkaEventTransport,
  ) {
    transport.subscribe({
      topic: WEBHOOK_ENDPOINTS_TOPIC,
      delivery: 'once-per-service',
      clientId: 'auth-service-webhook-audit',
      groupId: WEBHOOK_AUDIT_GROUP_ID,
      // An idle fetch returns after this long: how late a record may be once Kafka has the event.
      maxWaitTimeInMs: 500,
    });
  }

  /** One message of the topic: its record, or nothing (a type of no concern, or one that can never be recorded). */
  async handle(message: IncomingMessage): Promise<void> {
    const value = jsonValueOf(message);
    const checked = validateWebhookEndpointEvent(value);
    if (!checked.ok) {
      const type = (value as { type?: unknown } | null | undefined)?.type;
      // A later type of the topic is not this service's concern (the list is open); a broken one is a bug upstream.
      if (typeof type === 'string' && checked.errors[0]?.startsWith('unknown event type')) return;
      this.logger.error({ msg: 'webhook endpoint event skipped: not valid', partition: message.partition, offset: message.offset, errors: checked.errors.slice(0, 5) });
      return;
    }
    const event = checked.value;
    // The schema's pattern makes it an id: never null here.
    const organizationId = parsePublicId('org', event.data.organization_id) ?? '';
    const recorded = await this.db.transaction(async (tx) => {
      const [known] = organizationId ? ((await tx.query(`SELECT 1 FROM auth.organizations WHERE id = $1`, [organizationId])) as unknown[]) : [];
      if (!known) return 'unknown_organization' as const;
      return (await this.audit.record(tx, webhookEndpointDisabledEntry(event, organizationId))) ? ('recorded' as const) : ('already_recorded' as const);
    });
    if (recorded === 'unknown_organization') {
      this.logger.error({ msg: 'webhook endpoint event skipped: no such organization', event_id: event.id, organization_id: event.data.organization_id, endpoint_id: event.data.endpoint_id });
    }
  }
}

/** The handler of the subscription: the transport hands it every message of the topic, one at a time. */
@Controller()
export class WebhookEndpointAuditController {
  constructor(private readonly audit: WebhookEndpointAudit) {}

  @EventPattern(WEBHOOK_ENDPOINTS_TOPIC)
  handle(message: IncomingMessage): Promise<void> {
    return this.audit.handle(message);
  }
}

/**
 * The feature: its subscription on the service's event transport (EventBusModule, imported once by
 * the root module) and its own AuditLog (stateless over the database).
 */
@Module({
  controllers: [WebhookEndpointAuditController],
  providers: [AuditLog, WebhookEndpointAudit],
})
export class WebhookAuditModule {}

import { toPublicId, validateWebhookEndpointEvent, WEBHOOK_ENDPOINT_DISABLED_V1, WebhookEndpointDisabledV1 } from '@invoicing/contracts';
import { nameBasedEventId } from '@invoicing/event-bus';

/** CloudEvents `source` of what the webhook service publishes. */
export const EVENT_SOURCE = '/invoicing/webhook-service';

/** An endpoint the delivery worker has just disabled for failing, as the statement that did it returns it. */
export interface DisabledEndpoint {
  /** uuid */
  endpointId: string;
  /** uuid */
  organizationId: string;
  url: string;
  failingSince: Date;
  disabledAt: Date;
}

/**
 * The event's id, derived from the endpoint and the start of the failures that disabled it: one
 * disabling has one id however often it is written (attempts of the endpoint still in flight when it
 * was disabled report it too, and the outbox keeps the first), so its subscribers deduplicate by
 * it. A later disabling of the same endpoint follows a success or a re-enable, which reset
 * `failing_since`: it gets an id of its own. (nameBasedEventId).
 */
export function endpointDisabledEventId(endpointId: string, failingSince: Date): string {
  return nameBasedEventId(`webhook_endpoint_disabled/${endpointId}/${failingSince.toISOString()}`);
}

/**
 * `invoicing.webhooks.webhook_endpoint_disabled.v1` of a disabled endpoint, checked against its
 * contract: an event that fails it throws, and so fails the transaction that would have disabled the
 * endpoint (the attempt's result is recorded again after its hold, as after any failed write).
 */
export function endpointDisabledEvent(endpoint: DisabledEndpoint): WebhookEndpointDisabledV1 {
  const endpointId = toPublicId('wep', endpoint.endpointId);
  const disabledAt = endpoint.disabledAt.toISOString();
  const event: WebhookEndpointDisabledV1 = {
    specversion: '1.0',
    id: endpointDisabledEventId(endpoint.endpointId, endpoint.failingSince),
    source: EVENT_SOURCE,
    type: WEBHOOK_ENDPOINT_DISABLED_V1,
    subject: endpointId,
    time: disabledAt,
    datacontenttype: 'application/json',
    data: {
      organization_id: toPublicId('org', endpoint.organizationId),
      endpoint_id: endpointId,
      url: endpoint.url,
      reason: 'failing',
      failing_since: endpoint.failingSince.toISOString(),
      disabled_at: disabledAt,
    },
  };
  const check = validateWebhookEndpointEvent(event);
  if (!check.ok) throw new Error(`webhook_endpoint_disabled event fails its schema: ${check.errors.join('; ')}`);
  return event;
}

import { idOf, nullable, objectBase, TIMESTAMP } from '../api/common.schema';
import { DomainObjectKind, Resource, RESOURCE_MANIFEST, RESOURCES } from '../manifest';
import { WEBHOOK_ENDPOINTS } from '../scopes';

/**
 * The events an organization's webhook endpoints can be sent (docs/api.md, Webhooks). Each names the
 * scope whose `read:` lets a token see it in `GET /api/v1/events`: the resource the object belongs to,
 * or the webhook endpoints for the key lifecycle and the test event.
 */
export const WEBHOOK_EVENT_CATALOGUE = {
  ...(Object.fromEntries(
    RESOURCES.map((r) => [`${RESOURCE_MANIFEST[r].kind}.created`, { scope: r, description: `A ${RESOURCE_MANIFEST[r].kind} was created.` }]),
  ) as Record<`${DomainObjectKind}.created`, { scope: Resource; description: string }>),
  'invoice.paid': { scope: 'invoices', description: 'An invoice was paid in full (its status became paid).' },
  'invoice.partially_paid': { scope: 'invoices', description: 'A payment changed an invoice\'s balance without paying it in full.' },
  'api_key.expiring': { scope: WEBHOOK_ENDPOINTS, description: 'An API key of the organization expires within seven days.' },
  'api_key.revoked': { scope: WEBHOOK_ENDPOINTS, description: 'An API key was revoked.' },
  'api_key.exposed': { scope: WEBHOOK_ENDPOINTS, description: 'An API key\'s secret was reported as exposed in public and revoked.' },
  'api_key.secret_rolled': { scope: WEBHOOK_ENDPOINTS, description: 'An API key\'s secret was rolled.' },
} as const;

export type WebhookEventType = keyof typeof WEBHOOK_EVENT_CATALOGUE;
/** What `POST /api/v1/webhook-endpoints/{id}/test` sends; never subscribed to, always sent to the endpoint tested. */
export const WEBHOOK_TEST_EVENT_TYPE = 'webhook_endpoint.test';

export const WEBHOOK_EVENT_TYPES = Object.keys(WEBHOOK_EVENT_CATALOGUE) as WebhookEventType[];

export function isWebhookEventType(value: unknown): value is WebhookEventType {
  return typeof value === 'string' && Object.prototype.hasOwnProperty.call(WEBHOOK_EVENT_CATALOGUE, value);
}

/** `client` → `client.created`: the webhook event of a domain event of creation. */
export function createdEventType(kind: DomainObjectKind): WebhookEventType {
  return `${kind}.created`;
}

/** Version of every event's payload; a change that is not additive gets a new one. */
export const WEBHOOK_PAYLOAD_VERSION = '2026-11-26';

/** Ceilings per organization (docs/api.md, Webhooks). */
export const WEBHOOK_LIMITS = {
  endpointsPerOrganization: 16,
  urlMaxLength: 2048,
  descriptionMaxLength: 500,
  /** Days an event stays readable through `GET /api/v1/events` and replayable. */
  eventRetentionDays: 30,
  /** Deliveries one replay request may queue again. */
  replayMaxDeliveries: 10_000,
} as const;

const EVENT_TYPES_SCHEMA = {
  type: 'array',
  minItems: 1,
  maxItems: WEBHOOK_EVENT_TYPES.length,
  uniqueItems: true,
  items: { enum: ['*', ...WEBHOOK_EVENT_TYPES] },
  description: 'The event types sent to the endpoint, or `["*"]` for all (types added later included).',
} as const;

export const CREATE_WEBHOOK_ENDPOINT_SCHEMA = {
  $id: 'CreateWebhookEndpointRequest',
  type: 'object',
  additionalProperties: false,
  required: ['url', 'enabled_events'],
  properties: {
    url: { type: 'string', minLength: 1, maxLength: WEBHOOK_LIMITS.urlMaxLength, description: 'An https URL (http only where the deployment allows private URLs, for local development).' },
    enabled_events: EVENT_TYPES_SCHEMA,
    description: { type: 'string', maxLength: WEBHOOK_LIMITS.descriptionMaxLength },
    signature_scheme: {
      enum: ['v1', 'v1a'],
      description: '`v1` (default): HMAC-SHA256 with the `whsec_` secret. `v1a`: ed25519; the receiver holds only the `whpk_` public key.',
    },
  },
} as const;

export const UPDATE_WEBHOOK_ENDPOINT_SCHEMA = {
  $id: 'UpdateWebhookEndpointRequest',
  type: 'object',
  additionalProperties: false,
  minProperties: 1,
  properties: {
    url: CREATE_WEBHOOK_ENDPOINT_SCHEMA.properties.url,
    enabled_events: EVENT_TYPES_SCHEMA,
    description: CREATE_WEBHOOK_ENDPOINT_SCHEMA.properties.description,
    status: { enum: ['enabled', 'disabled'] },
  },
} as const;

export const REPLAY_WEBHOOK_DELIVERIES_SCHEMA = {
  $id: 'ReplayWebhookDeliveriesRequest',
  type: 'object',
  additionalProperties: false,
  required: ['since'],
  properties: { since: { type: 'string', format: 'date-time', description: 'Every failed delivery to the endpoint of an event created at or after this is sent again.' } },
} as const;

export const WEBHOOK_ENDPOINT_SCHEMA = {
  $id: 'WebhookEndpoint',
  type: 'object',
  required: ['object', 'id', 'created_at', 'url', 'description', 'enabled_events', 'status', 'disabled_reason', 'signature_scheme'],
  properties: {
    ...objectBase('webhook_endpoint', 'wep'),
    url: { type: 'string' },
    description: nullable({ type: 'string' }),
    enabled_events: { type: 'array', items: { type: 'string' } },
    status: { enum: ['enabled', 'disabled'] },
    disabled_reason: { enum: ['requested', 'failing', null] },
    signature_scheme: { enum: ['v1', 'v1a'] },
    secret: { type: 'string', description: 'Only in the answers of the create and of `roll-secret`: `whsec_...` (v1), or the `whpk_...` public key to verify with (v1a).' },
    failing_since: nullable(TIMESTAMP),
  },
} as const;

export const WEBHOOK_EVENT_SCHEMA = {
  $id: 'WebhookEvent',
  type: 'object',
  required: ['object', 'id', 'created_at', 'type', 'api_version', 'data'],
  properties: {
    ...objectBase('event', 'wev'),
    type: { type: 'string' },
    api_version: { const: WEBHOOK_PAYLOAD_VERSION },
    data: {
      type: 'object',
      required: ['object'],
      properties: {
        object: { type: 'object', description: 'The object as the API returns it.' },
        previous_attributes: { type: 'object', description: 'On invoice.paid and invoice.partially_paid: amount_paid and status before the change.' },
      },
    },
  },
} as const;

export const WEBHOOK_ATTEMPT_SCHEMA = {
  $id: 'WebhookDeliveryAttempt',
  type: 'object',
  required: ['object', 'id', 'created_at', 'event', 'attempt', 'outcome', 'response_status', 'latency_ms', 'error'],
  properties: {
    ...objectBase('webhook_attempt', 'wat'),
    event: idOf('wev'),
    attempt: { type: 'integer', minimum: 1 },
    outcome: { enum: ['succeeded', 'failed'] },
    response_status: nullable({ type: 'integer' }),
    latency_ms: { type: 'integer' },
    error: nullable({ type: 'string' }),
  },
} as const;

export interface CreateWebhookEndpointRequest {
  url: string;
  enabled_events: Array<WebhookEventType | '*'>;
  description?: string;
  signature_scheme?: 'v1' | 'v1a';
}
export interface UpdateWebhookEndpointRequest {
  url?: string;
  enabled_events?: Array<WebhookEventType | '*'>;
  description?: string;
  status?: 'enabled' | 'disabled';
}

/** A delivered event, the body of every delivery (and of `GET /api/v1/events/{id}`). */
export interface WebhookEvent {
  object: 'event';
  id: string;
  type: WebhookEventType | typeof WEBHOOK_TEST_EVENT_TYPE;
  api_version: typeof WEBHOOK_PAYLOAD_VERSION;
  created_at: string;
  data: { object: Record<string, unknown>; previous_attributes?: Record<string, unknown> };
}

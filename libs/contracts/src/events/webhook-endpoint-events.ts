import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import webhookEndpointDisabledSchema from './schemas/webhook-endpoint-disabled.v1.schema.json';
import type { CloudEvent, ValidationResult } from './revocation-events';

/**
 * What happens to webhook endpoints that other services act on (ADR 0037), published by the webhook
 * service through its outbox: today, an endpoint the platform disabled because it kept failing,
 * which the auth service records in the organization's audit log. 6 partitions, message key = the
 * endpoint id (`wep_...`, also the subject), kept 30 days. Subscribers skip types they do not know.
 */
export const WEBHOOK_ENDPOINTS_TOPIC = 'webhooks.endpoints.v1';

export const WEBHOOK_ENDPOINT_DISABLED_V1 = 'invoicing.webhooks.webhook_endpoint_disabled.v1';

/**
 * Why the platform disabled an endpoint. Informative, and open for subscribers: a later version may
 * add reasons, never change what the event means.
 * - `failing`: no delivery attempt to it succeeded for WEBHOOK_DISABLE_AFTER_MS (5 days by default).
 */
export const WEBHOOK_ENDPOINT_DISABLED_REASONS = ['failing'] as const;
export type WebhookEndpointDisabledReason = (typeof WEBHOOK_ENDPOINT_DISABLED_REASONS)[number];

export interface WebhookEndpointDisabledV1Data {
  organization_id: string;
  /** `wep_...` */
  endpoint_id: string;
  /** The endpoint's URL when it was disabled. */
  url: string;
  reason: WebhookEndpointDisabledReason;
  /** When the first of the failed attempts in a row was made. */
  failing_since: string;
  /** When it was disabled (the event's `time`). */
  disabled_at: string;
}

export type WebhookEndpointDisabledV1 = CloudEvent<typeof WEBHOOK_ENDPOINT_DISABLED_V1, WebhookEndpointDisabledV1Data>;
/** Everything on {@link WEBHOOK_ENDPOINTS_TOPIC}. */
export type WebhookEndpointEvent = WebhookEndpointDisabledV1;

/** JSON Schemas (draft 2020-12) of each event type of the topic, keyed by CloudEvents `type`; also shipped as files. */
export const WEBHOOK_ENDPOINT_EVENT_SCHEMAS = {
  [WEBHOOK_ENDPOINT_DISABLED_V1]: webhookEndpointDisabledSchema,
} as const;

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validators = new Map<string, ReturnType<typeof ajv.compile>>([[WEBHOOK_ENDPOINT_DISABLED_V1, ajv.compile(webhookEndpointDisabledSchema)]]);

/**
 * Validates a decoded event of {@link WEBHOOK_ENDPOINTS_TOPIC} against the JSON Schema of its
 * `type`; a type this version does not know is refused (a subscriber skips it). The webhook service
 * checks every event with it before it enqueues one, the auth service every event it receives.
 */
export function validateWebhookEndpointEvent(value: unknown): ValidationResult<WebhookEndpointEvent> {
  const type = (value as { type?: unknown } | null)?.type;
  const validate = typeof type === 'string' ? validators.get(type) : undefined;
  if (!validate) return { ok: false, errors: [`unknown event type ${JSON.stringify(type)}`] };
  if (validate(value)) return { ok: true, value: value as unknown as WebhookEndpointEvent };
  return { ok: false, errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`) };
}

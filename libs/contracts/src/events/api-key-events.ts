import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import apiKeyChangedSchema from './schemas/api-key-changed.v1.schema.json';
import type { CloudEvent, ValidationResult } from './revocation-events';

/**
 * What a key's owner is told of by webhook (ADR 0037), written by the auth service into its outbox
 * in the transaction of the change. 6 partitions, message key = the API key id (`key_...`, also the
 * subject), kept 30 days: a topic of its own rather than `auth.revocations.v1`, which is kept two
 * hours, so that a subscriber down for longer (the webhook service) still finds every change.
 * Subscribers skip types they do not know.
 */
export const API_KEYS_TOPIC = 'auth.api-keys.v1';

export const API_KEY_CHANGED_V1 = 'invoicing.auth.api_key_changed.v1';

/**
 * What changed, told as `api_key.<change>`: the notice seven days before the expiry, a revocation
 * (by a user, or by the platform when its secret was reported public: then `exposed` too), a roll.
 */
export const API_KEY_CHANGES = ['expiring', 'revoked', 'exposed', 'secret_rolled'] as const;
export type ApiKeyChange = (typeof API_KEY_CHANGES)[number];

export interface ApiKeyChangedV1Data {
  organization_id: string;
  api_key_id: string;
  client_id: string;
  change: ApiKeyChange;
  /** The key as `GET /api/v1/settings/api-keys` shows it at the instant of the change (never a secret). */
  api_key: Record<string, unknown> & { object: 'api_key'; id: string; status: string };
  changed_at: string;
}

export type ApiKeyChangedV1 = CloudEvent<typeof API_KEY_CHANGED_V1, ApiKeyChangedV1Data>;
/** Everything on {@link API_KEYS_TOPIC}. */
export type ApiKeyEvent = ApiKeyChangedV1;

/** JSON Schemas (draft 2020-12) of each event type of the topic, keyed by CloudEvents `type`; also shipped as files. */
export const API_KEY_EVENT_SCHEMAS = {
  [API_KEY_CHANGED_V1]: apiKeyChangedSchema,
} as const;

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validators = new Map<string, ReturnType<typeof ajv.compile>>([[API_KEY_CHANGED_V1, ajv.compile(apiKeyChangedSchema)]]);

/**
 * Validates a decoded event of {@link API_KEYS_TOPIC} against the JSON Schema of its `type`; a type
 * this version does not know is refused (a subscriber skips it). The auth service checks every event
 * with it before it enqueues one, the webhook service every event it receives.
 */
export function validateApiKeyEvent(value: unknown): ValidationResult<ApiKeyEvent> {
  const type = (value as { type?: unknown } | null)?.type;
  const validate = typeof type === 'string' ? validators.get(type) : undefined;
  if (!validate) return { ok: false, errors: [`unknown event type ${JSON.stringify(type)}`] };
  if (validate(value)) return { ok: true, value: value as unknown as ApiKeyEvent };
  return { ok: false, errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`) };
}

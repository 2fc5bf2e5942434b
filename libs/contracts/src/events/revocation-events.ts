import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import apiKeyRevokedSchema from './schemas/api-key-revoked.v1.schema.json';
import sessionsRevokedSchema from './schemas/sessions-revoked.v1.schema.json';
import allowedIpsChangedSchema from './schemas/api-key-allowed-ips-changed.v1.schema.json';
import expiringSchema from './schemas/api-key-expiring.v1.schema.json';

/**
 * Topic of every revocation (docs/api.md section 6): 6 partitions, message key = API key id. It also
 * carries the other changes to a key that token verifiers or its owner's systems act on: a new
 * allowlist (which changes which requests its tokens may make) and the notice that a key is about
 * to expire. Subscribers skip types they do not know. (What a key's owner is told by webhook goes on
 * `auth.api-keys.v1`, kept longer: api-key-events.ts.)
 */
export const REVOCATIONS_TOPIC = 'auth.revocations.v1';

export const SESSIONS_REVOKED_V1 = 'invoicing.auth.sessions_revoked.v1';
export const API_KEY_REVOKED_V1 = 'invoicing.auth.api_key_revoked.v1';
export const API_KEY_ALLOWED_IPS_CHANGED_V1 = 'invoicing.auth.api_key_allowed_ips_changed.v1';
export const API_KEY_EXPIRING_V1 = 'invoicing.auth.api_key_expiring.v1';

/** CloudEvents 1.0 structured-mode envelope. */
export interface CloudEvent<TType extends string, TData> {
  specversion: '1.0';
  id: string;
  source: string;
  type: TType;
  subject: string;
  time: string;
  datacontenttype: 'application/json';
  data: TData;
}

interface RevocationDataBase {
  organization_id: string;
  api_key_id: string;
  client_id: string;
  /** Sessions (`sid` claims) revoked by this event. */
  session_ids: string[];
  revoked_at: string;
}

/**
 * Why sessions were revoked. Informative only: a subscriber revokes every listed session whatever
 * the reason, and must not refuse an event for a reason it does not know yet (ADR 0016).
 * - `refresh_token_reuse`: a spent refresh token was presented; every session of the key is listed.
 * - `session_revoked`: the client revoked one session itself (RFC 7009 `/api/v1/auth/revoke`).
 * - `secret_rolled`: the key's secret was rolled with `end_sessions`; every session of the key is listed.
 */
export const SESSIONS_REVOKED_REASONS = ['refresh_token_reuse', 'session_revoked', 'secret_rolled'] as const;
export type SessionsRevokedReason = (typeof SESSIONS_REVOKED_REASONS)[number];

export interface SessionsRevokedV1Data extends RevocationDataBase {
  reason: SessionsRevokedReason;
}

/**
 * Why a key stopped authenticating; informative, as for sessions.
 * - `revoked_by_user`: revoked in the settings area.
 * - `expired`: its `expires_at` passed (announced by the auth service at that instant, unasked).
 * - `exposed`: its secret was reported public (GitHub secret scanning) and the key revoked at once.
 */
export const API_KEY_REVOKED_REASONS = ['revoked_by_user', 'expired', 'exposed'] as const;
export type ApiKeyRevokedReason = (typeof API_KEY_REVOKED_REASONS)[number];

export interface ApiKeyRevokedV1Data extends RevocationDataBase {
  reason: ApiKeyRevokedReason;
}

/**
 * A key's allowlist changed. Tokens already issued carry the list in force when they were issued;
 * from this event on, every access token of the key is checked against `allowed_ips` instead (an
 * empty list: any address), until the last token issued before the change has expired.
 */
export interface ApiKeyAllowedIpsChangedV1Data {
  organization_id: string;
  api_key_id: string;
  client_id: string;
  /** Canonical entries (see parseAllowedIps); empty: any address. */
  allowed_ips: string[];
  /**
   * The key's allowlist version, incremented by every change under the key's row lock: of two
   * events of one key the higher version wins, whatever the clocks of the instances that wrote them
   * or the order in which relays published them.
   */
  version: number;
  changed_at: string;
}

/** Sent once, seven days before a key expires (or at creation, for a key that expires sooner). */
export interface ApiKeyExpiringV1Data {
  organization_id: string;
  api_key_id: string;
  client_id: string;
  name: string;
  expires_at: string;
}

export type SessionsRevokedV1 = CloudEvent<typeof SESSIONS_REVOKED_V1, SessionsRevokedV1Data>;
export type ApiKeyRevokedV1 = CloudEvent<typeof API_KEY_REVOKED_V1, ApiKeyRevokedV1Data>;
export type RevocationEvent = SessionsRevokedV1 | ApiKeyRevokedV1;
export type ApiKeyAllowedIpsChangedV1 = CloudEvent<typeof API_KEY_ALLOWED_IPS_CHANGED_V1, ApiKeyAllowedIpsChangedV1Data>;
export type ApiKeyExpiringV1 = CloudEvent<typeof API_KEY_EXPIRING_V1, ApiKeyExpiringV1Data>;
/** Everything on {@link REVOCATIONS_TOPIC}. */
export type AuthTopicEvent = RevocationEvent | ApiKeyAllowedIpsChangedV1 | ApiKeyExpiringV1;

/** JSON Schemas (draft 2020-12) of each event type, keyed by CloudEvents `type`; also shipped as files. */
export const REVOCATION_EVENT_SCHEMAS = {
  [SESSIONS_REVOKED_V1]: sessionsRevokedSchema,
  [API_KEY_REVOKED_V1]: apiKeyRevokedSchema,
  [API_KEY_ALLOWED_IPS_CHANGED_V1]: allowedIpsChangedSchema,
  [API_KEY_EXPIRING_V1]: expiringSchema,
} as const;

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validators = {
  [SESSIONS_REVOKED_V1]: ajv.compile(sessionsRevokedSchema),
  [API_KEY_REVOKED_V1]: ajv.compile(apiKeyRevokedSchema),
  [API_KEY_ALLOWED_IPS_CHANGED_V1]: ajv.compile(allowedIpsChangedSchema),
  [API_KEY_EXPIRING_V1]: ajv.compile(expiringSchema),
};

/** The same schemas with `data.reason` open (any non-empty string): what a subscriber acts on. */
function withOpenReason<T extends { $id: string; properties: { data: { properties: object } } }>(schema: T): T {
  const copy = JSON.parse(JSON.stringify(schema)) as T;
  copy.$id = schema.$id.replace(/\.json$/, ".open-reason.json");
  (copy.properties.data.properties as Record<string, unknown>).reason = { type: 'string', minLength: 1 };
  return copy;
}
const openReasonValidators = {
  ...validators,
  [SESSIONS_REVOKED_V1]: ajv.compile(withOpenReason(sessionsRevokedSchema)),
  [API_KEY_REVOKED_V1]: ajv.compile(withOpenReason(apiKeyRevokedSchema)),
};

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/**
 * Validates a decoded revocation (sessions or key) against the JSON Schema of its `type`. Other
 * types are rejected here; {@link validateAuthTopicEvent} accepts everything the topic carries.
 */
export function validateRevocationEvent(value: unknown): ValidationResult<RevocationEvent> {
  const type = (value as { type?: unknown } | null)?.type;
  if (type !== SESSIONS_REVOKED_V1 && type !== API_KEY_REVOKED_V1) {
    return { ok: false, errors: [`unknown event type ${JSON.stringify(type)}`] };
  }
  return validateAuthTopicEvent(value) as ValidationResult<RevocationEvent>;
}

/**
 * Validates a decoded message of {@link REVOCATIONS_TOPIC} against the JSON Schema of its `type`.
 * Unknown types are rejected, so a subscriber never acts on an event it does not understand (a v2
 * type gets its own schema).
 */
export function validateAuthTopicEvent(value: unknown, options: { openReasons?: boolean } = {}): ValidationResult<AuthTopicEvent> {
  const type = (value as { type?: unknown } | null)?.type;
  if (typeof type !== 'string' || !Object.hasOwn(validators, type)) {
    return { ok: false, errors: [`unknown event type ${JSON.stringify(type)}`] };
  }
  // `openReasons`: a reason added after this code was built is still a revocation to apply (ADR
  // 0016: the reason is informative). Token verifiers validate this way; the auth service checks
  // what it publishes against the closed lists.
  const validate = (options.openReasons ? openReasonValidators : validators)[type as keyof typeof validators];
  if (validate(value)) return { ok: true, value: value as unknown as AuthTopicEvent };
  return {
    ok: false,
    errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`),
  };
}

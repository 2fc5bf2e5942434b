import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import apiKeyRevokedSchema from './schemas/api-key-revoked.v1.schema.json';
import sessionsRevokedSchema from './schemas/sessions-revoked.v1.schema.json';

/** Topic of every revocation (contract section 6): 6 partitions, message key = API key id. */
export const REVOCATIONS_TOPIC = 'auth.revocations.v1';

export const SESSIONS_REVOKED_V1 = 'invoicing.auth.sessions_revoked.v1';
export const API_KEY_REVOKED_V1 = 'invoicing.auth.api_key_revoked.v1';

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
 */
export const SESSIONS_REVOKED_REASONS = ['refresh_token_reuse', 'session_revoked'] as const;
export type SessionsRevokedReason = (typeof SESSIONS_REVOKED_REASONS)[number];

export interface SessionsRevokedV1Data extends RevocationDataBase {
  reason: SessionsRevokedReason;
}

export interface ApiKeyRevokedV1Data extends RevocationDataBase {
  reason: 'revoked_by_user';
}

export type SessionsRevokedV1 = CloudEvent<typeof SESSIONS_REVOKED_V1, SessionsRevokedV1Data>;
export type ApiKeyRevokedV1 = CloudEvent<typeof API_KEY_REVOKED_V1, ApiKeyRevokedV1Data>;
export type RevocationEvent = SessionsRevokedV1 | ApiKeyRevokedV1;

/** JSON Schemas (draft 2020-12) of each event type, keyed by CloudEvents `type`; also shipped as files. */
export const REVOCATION_EVENT_SCHEMAS = {
  [SESSIONS_REVOKED_V1]: sessionsRevokedSchema,
  [API_KEY_REVOKED_V1]: apiKeyRevokedSchema,
} as const;

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validators = {
  [SESSIONS_REVOKED_V1]: ajv.compile(sessionsRevokedSchema),
  [API_KEY_REVOKED_V1]: ajv.compile(apiKeyRevokedSchema),
};

export type ValidationResult<T> = { ok: true; value: T } | { ok: false; errors: string[] };

/**
 * Validates a decoded message against the JSON Schema of its `type`. Unknown types are rejected, so a
 * subscriber never acts on an event it does not understand (a v2 type gets its own schema).
 */
export function validateRevocationEvent(value: unknown): ValidationResult<RevocationEvent> {
  const type = (value as { type?: unknown } | null)?.type;
  if (type !== SESSIONS_REVOKED_V1 && type !== API_KEY_REVOKED_V1) {
    return { ok: false, errors: [`unknown event type ${JSON.stringify(type)}`] };
  }
  const validate = validators[type];
  if (validate(value)) return { ok: true, value: value as unknown as RevocationEvent };
  return {
    ok: false,
    errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`),
  };
}

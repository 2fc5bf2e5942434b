import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import auditEventSchema from './schemas/audit-event.v1.schema.json';
import type { CloudEvent, ValidationResult } from './revocation-events';

/**
 * Topic of the audit stream (ADR 0024): every record of every organization's audit log, for a SIEM.
 * 6 partitions, message key = organization id (one organization's records stay in order), kept 7 days.
 */
export const AUDIT_TOPIC = 'auth.audit.v1';
export const AUDIT_EVENT_V1 = 'invoicing.auth.audit_event.v1';

/**
 * What the audit log records (the record's `type`). Open for subscribers: a later version may add
 * types, never change what one means.
 */
export const AUDIT_EVENT_TYPES = [
  'api_key.created',
  'api_key.rolled',
  'api_key.allowed_ips_changed',
  'api_key.renamed',
  'api_key.revoked',
  'api_key.expired',
  'api_key.exposed',
  'api_key.auth_failures_alert',
  'api_key.auth_failures_summary',
  'refresh_token.reuse_detected',
  'account.signed_up',
  'account.logged_in',
  'account.login_failed',
  'account.login_failures_alert',
  'account.login_failures_summary',
  'account.logged_out',
  'audit.failure_records_suppressed',
  'webhook_endpoint.disabled',
  'organization.profile_updated',
] as const;
export type AuditEventType = (typeof AUDIT_EVENT_TYPES)[number];

export interface AuditRecordV1 {
  id: string;
  organization_id: string;
  seq: number;
  type: string;
  occurred_at: string;
  actor: { kind: 'user' | 'api_key' | 'system'; id: string | null };
  api_key_id: string | null;
  client_address: string | null;
  data: Record<string, unknown>;
  prev_hash: string;
  hash: string;
}

export type AuditEventV1 = CloudEvent<typeof AUDIT_EVENT_V1, AuditRecordV1>;

export const AUDIT_EVENT_SCHEMA = auditEventSchema;

const ajv = new Ajv2020({ allErrors: true, strict: true });
addFormats(ajv);
const validate = ajv.compile(auditEventSchema);

export function validateAuditEvent(value: unknown): ValidationResult<AuditEventV1> {
  if (validate(value)) return { ok: true, value: value as unknown as AuditEventV1 };
  return { ok: false, errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`) };
}

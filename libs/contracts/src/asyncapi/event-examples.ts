import { API_KEY_CHANGED_V1, ApiKeyEvent } from '../events/api-key-events';
import { AUDIT_EVENT_V1, AuditEventV1 } from '../events/audit-events';
import { DOMAIN_EVENT_SCHEMAS, DOMAIN_EVENT_TYPES, DomainEvent, INVOICE_BALANCE_CHANGED_TYPE, ORGANIZATION_PROFILE_CHANGED_V1, OrganizationProfileChangedV1 } from '../events/domain-events';
import { WEBHOOK_ENDPOINT_DISABLED_V1, WebhookEndpointDisabledV1 } from '../events/webhook-endpoint-events';
import {
  API_KEY_ALLOWED_IPS_CHANGED_V1,
  API_KEY_EXPIRING_V1,
  API_KEY_REVOKED_V1,
  AuthTopicEvent,
  CloudEvent,
  SESSIONS_REVOKED_V1,
} from '../events/revocation-events';

/**
 * One example event of every type, as the platform publishes it (the message value), shown by the
 * AsyncAPI document and its page. The unit specs check each against the contracts' own validators
 * (validateAuthTopicEvent, validateDomainTopicEvent, validateAuditEvent, validateWebhookEndpointEvent,
 * validateApiKeyEvent) and against the payload schema the document states, so an example cannot
 * drift from what is sent.
 */

const TIME = '2026-11-24T10:00:00.000Z';
const AUTH_SOURCE = '/invoicing/auth-service';
/** Fixed, well-formed public ids (`<prefix>_` + 32 hex digits of a UUIDv7), so the document is stable. */
const ORGANIZATION_ID = 'org_0192d5a0c3b87a6e9f1d2c3b4a596870';
const USER_ID = 'usr_0192d5a0c3b87a6e9f1d2c3b4a596871';
const API_KEY_ID = 'key_0192d5a0c3b87a6e9f1d2c3b4a596872';
const CLIENT_ID = 'ak_live_7Hq2mWx9LpR4sT6v';
const SESSION_IDS = ['ses_0192d5a0c3b87a6e9f1d2c3b4a596873', 'ses_0192d5a0c3b87a6e9f1d2c3b4a596874'];

type AuthTopicExamples = { [T in AuthTopicEvent['type']]: Extract<AuthTopicEvent, { type: T }> };

function authEvent<T extends string, D>(type: T, id: string, data: D): CloudEvent<T, D> {
  return { specversion: '1.0', id, source: AUTH_SOURCE, type, subject: API_KEY_ID, time: TIME, datacontenttype: 'application/json', data };
}

/** Every type of auth.revocations.v1 (the mapped type makes a new one without an example a type error). */
const AUTH_TOPIC_EXAMPLES: AuthTopicExamples = {
  [SESSIONS_REVOKED_V1]: authEvent(SESSIONS_REVOKED_V1, '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596880', {
    organization_id: ORGANIZATION_ID,
    api_key_id: API_KEY_ID,
    client_id: CLIENT_ID,
    reason: 'refresh_token_reuse',
    session_ids: SESSION_IDS,
    revoked_at: TIME,
  }),
  [API_KEY_REVOKED_V1]: authEvent(API_KEY_REVOKED_V1, '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596881', {
    organization_id: ORGANIZATION_ID,
    api_key_id: API_KEY_ID,
    client_id: CLIENT_ID,
    reason: 'revoked_by_user',
    session_ids: SESSION_IDS,
    revoked_at: TIME,
  }),
  [API_KEY_ALLOWED_IPS_CHANGED_V1]: authEvent(API_KEY_ALLOWED_IPS_CHANGED_V1, '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596882', {
    organization_id: ORGANIZATION_ID,
    api_key_id: API_KEY_ID,
    client_id: CLIENT_ID,
    allowed_ips: ['203.0.113.0/24', '2001:db8::1'],
    version: 2,
    changed_at: TIME,
  }),
  [API_KEY_EXPIRING_V1]: authEvent(API_KEY_EXPIRING_V1, '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596883', {
    organization_id: ORGANIZATION_ID,
    api_key_id: API_KEY_ID,
    client_id: CLIENT_ID,
    name: 'ERP export',
    expires_at: '2026-12-01T10:00:00.000Z',
  }),
};

type ApiKeyExamples = { [T in ApiKeyEvent['type']]: Extract<ApiKeyEvent, { type: T }> };

/** Every type of auth.api-keys.v1: a roll, told with the key as Settings shows it after it. */
const API_KEY_EXAMPLES: ApiKeyExamples = {
  [API_KEY_CHANGED_V1]: authEvent(API_KEY_CHANGED_V1, '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596884', {
    organization_id: ORGANIZATION_ID,
    api_key_id: API_KEY_ID,
    client_id: CLIENT_ID,
    change: 'secret_rolled',
    api_key: {
      object: 'api_key',
      id: API_KEY_ID,
      organization_id: ORGANIZATION_ID,
      name: 'ERP export',
      client_id: CLIENT_ID,
      scopes: ['read:invoices', 'write:invoices'],
      status: 'active',
      created_at: '2026-11-01T09:00:00.000Z',
      last_used_at: TIME,
      revoked_at: null,
      expires_at: '2026-12-01T10:00:00.000Z',
      allowed_ips: [],
      secret_last_used_at: null,
      previous_secret_expires_at: '2026-11-25T10:00:00.000Z',
      previous_secret_last_used_at: TIME,
      exposed_at: null,
      exposed_url: null,
    },
    changed_at: TIME,
  }),
};

/**
 * The audit record of ADR 0024's worked example (seq 1 of its organization), whose `hash` an
 * independent verifier can recompute: SHA-256 of "invoicing-audit-v1\n" + prev_hash + "\n" + the
 * RFC 8785 JSON of the record without prev_hash and hash.
 */
const AUDIT_EXAMPLE: AuditEventV1 = {
  specversion: '1.0',
  id: 'evt_0192d5a0c3b87a6e9f1d2c3b4a596877',
  source: AUTH_SOURCE,
  type: AUDIT_EVENT_V1,
  subject: ORGANIZATION_ID,
  time: TIME,
  datacontenttype: 'application/json',
  data: {
    id: 'evt_0192d5a0c3b87a6e9f1d2c3b4a596877',
    organization_id: ORGANIZATION_ID,
    seq: 1,
    type: 'account.signed_up',
    occurred_at: TIME,
    actor: { kind: 'user', id: USER_ID },
    api_key_id: null,
    client_address: '198.51.100.10',
    data: { email: 'ada@example.com' },
    prev_hash: '0'.repeat(64),
    hash: '586c9b1394df127394cd6e6e48e77e3867e64242ea61cda81f9297ea934ae5a8',
  },
};

/** A webhook endpoint the platform disabled after five days of failed deliveries (ADR 0037). */
const WEBHOOK_ENDPOINT_DISABLED_EXAMPLE: WebhookEndpointDisabledV1 = {
  specversion: '1.0',
  id: '0192d5a0-c3b8-8a6e-9f1d-2c3b4a5968a0',
  source: '/invoicing/webhook-service',
  type: WEBHOOK_ENDPOINT_DISABLED_V1,
  subject: 'wep_0192d5a0c3b87a6e9f1d2c3b4a596878',
  time: TIME,
  datacontenttype: 'application/json',
  data: {
    organization_id: ORGANIZATION_ID,
    endpoint_id: 'wep_0192d5a0c3b87a6e9f1d2c3b4a596878',
    url: 'https://erp.acme.example/webhooks/invoicing',
    reason: 'failing',
    failing_since: '2026-11-19T09:58:12.345Z',
    disabled_at: TIME,
  },
};

/** Settings → Organization: the seller's IBAN and payment terms set (ADR 0039); the whole profile, version 3. */
const ORGANIZATION_PROFILE_CHANGED_EXAMPLE: OrganizationProfileChangedV1 = {
  specversion: '1.0',
  id: '0192d5a0-c3b8-8a6e-9f1d-2c3b4a5968b0',
  source: AUTH_SOURCE,
  type: ORGANIZATION_PROFILE_CHANGED_V1,
  subject: ORGANIZATION_ID,
  time: TIME,
  datacontenttype: 'application/json',
  data: {
    organization_id: ORGANIZATION_ID,
    version: 3,
    changed_fields: ['iban', 'payment_terms'],
    profile: {
      object: 'organization_profile',
      organization_id: ORGANIZATION_ID,
      legal_name: 'Acme SARL',
      address: { line1: '1 rue de la Paix', line2: null, city: 'Paris', postal_code: '75002', region: null, country: 'FR' },
      vat_id: 'FR40303265045',
      email: 'billing@acme.example',
      iban: 'FR1420041010050500013M02606',
      bic: 'PSSTFRPPPAR',
      payment_terms: 'Payable within 30 days by bank transfer.',
      version: 3,
      updated_at: TIME,
    },
  },
};

/** Values of a created object's fields, by field name: what a reader expects to see, where the type allows it. */
const FIELD_VALUES: Record<string, string | number> = {
  currency: 'EUR',
  country: 'FR',
  name: 'Acme SARL',
  email: 'billing@acme.example',
  phone: '+33 1 23 45 67 89',
  tax_id: 'FR40303265045',
  line1: '1 rue de la Paix',
  line2: 'Bâtiment B',
  region: 'Île-de-France',
  city: 'Paris',
  postal_code: '75002',
  description: 'Consulting, November',
  number: 'INV-000042',
  sku: 'CONS-DAY',
  reference: 'SEPA 2026-11-24',
  vendor: 'Rail Europe',
  category: 'travel',
  notes: 'Payable within 30 days.',
  due_date: '2026-12-24',
  quantity: 1,
  unit_price: 50000,
  tax_rate_bps: 2000,
  amount: 50000,
  tax: 10000,
  subtotal: 50000,
  tax_total: 10000,
  total: 60000,
  amount_paid: 0,
  amount_due: 60000,
};

/**
 * A value valid against `schema`, from its own constraints: `const`, the first of `enum`, the
 * formats and id patterns (`^xxx_[0-9a-f]{32}$`) the object schemas use; field names pick a
 * readable value. Whatever this cannot satisfy, the unit specs catch (every example is validated
 * against its type's schema).
 */
function exampleOf(schema: Record<string, unknown>, field: string): unknown {
  if ('const' in schema) return schema.const;
  if (Array.isArray(schema.enum)) return schema.enum.find((v) => v !== null) ?? null;
  const types = Array.isArray(schema.type) ? (schema.type as string[]) : [schema.type as string];
  const type = types.find((t) => t !== 'null') ?? 'null';
  const known = FIELD_VALUES[field];
  switch (type) {
    case 'object': {
      const properties = (schema.properties ?? {}) as Record<string, Record<string, unknown>>;
      return Object.fromEntries(Object.entries(properties).map(([name, sub]) => [name, exampleOf(sub, name)]));
    }
    case 'array':
      return [exampleOf((schema.items ?? {}) as Record<string, unknown>, field)];
    case 'integer':
    case 'number':
      return typeof known === 'number' ? known : typeof schema.minimum === 'number' ? schema.minimum : 1;
    case 'boolean':
      return true;
    case 'null':
      return null;
    default:
      return stringExample(schema, field);
  }
}

function stringExample(schema: Record<string, unknown>, field: string): string {
  const known = FIELD_VALUES[field];
  if (typeof known === 'string') return known;
  if (schema.format === 'date-time') return TIME;
  if (schema.format === 'date') return TIME.slice(0, 10);
  const idPattern = /^\^([a-z]{3})_\[0-9a-f\]\{32\}\$$/.exec(String(schema.pattern ?? ''));
  if (idPattern) return `${idPattern[1]}_0192d5a0c3b87a6e9f1d2c3b4a5968ff`;
  return field.replace(/_/g, ' ');
}

/** A created object's event: the object as its own schema describes it (the API's answer to the create). */
function domainExample(kind: string, type: string): DomainEvent {
  const schema = DOMAIN_EVENT_SCHEMAS[type as keyof typeof DOMAIN_EVENT_SCHEMAS] as { properties: { data: { properties: { object: Record<string, unknown> } } } };
  const object = exampleOf(schema.properties.data.properties.object, 'object') as DomainEvent['data']['object'];
  return {
    specversion: '1.0',
    id: '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596890',
    source: `/invoicing/${kind}-service`,
    type: type as DomainEvent['type'],
    subject: object.id,
    time: object.created_at,
    datacontenttype: 'application/json',
    data: { organization_id: ORGANIZATION_ID, object },
  };
}

/** A payment applied to an invoice: the invoice now partly paid, and its balance before. */
function balanceExample(): DomainEvent {
  const created = domainExample('invoice', INVOICE_BALANCE_CHANGED_TYPE);
  const object = { ...created.data.object, amount_paid: 5000, status: 'partially_paid' };
  return { ...created, id: '0192d5a0-c3b8-7a6e-9f1d-2c3b4a596891', time: TIME, data: { ...created.data, object, previous: { amount_paid: 0, status: 'open' } } };
}

/** One example event per CloudEvents `type` of every topic. */
export function eventExamples(): Record<string, CloudEvent<string, unknown>> {
  return {
    ...AUTH_TOPIC_EXAMPLES,
    ...Object.fromEntries(Object.entries(DOMAIN_EVENT_TYPES).map(([kind, type]) => [type, domainExample(kind, type)])),
    [INVOICE_BALANCE_CHANGED_TYPE]: balanceExample(),
    [ORGANIZATION_PROFILE_CHANGED_V1]: ORGANIZATION_PROFILE_CHANGED_EXAMPLE,
    [AUDIT_EVENT_V1]: AUDIT_EXAMPLE,
    [WEBHOOK_ENDPOINT_DISABLED_V1]: WEBHOOK_ENDPOINT_DISABLED_EXAMPLE,
    ...API_KEY_EXAMPLES,
  };
}

import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { CLIENT_SCHEMA } from '../api/clients.schema';
import { EXPENSE_SCHEMA } from '../api/expenses.schema';
import { INVOICE_SCHEMA } from '../api/invoices.schema';
import { PAYMENT_SCHEMA } from '../api/payments.schema';
import { PRODUCT_SCHEMA } from '../api/products.schema';
import type { CloudEvent, ValidationResult } from './revocation-events';

/**
 * Domain events: every created object is announced on this topic (key = object id), so services
 * keep local read models of what they reference instead of reading each other's tables. The topic is
 * compacted: the latest event per object stays, and a new service can rebuild its read models.
 */
export const DOMAIN_TOPIC = 'invoicing.domain.v1';

export const DOMAIN_EVENT_TYPES = {
  client: 'invoicing.clients.client_created.v1',
  product: 'invoicing.products.product_created.v1',
  invoice: 'invoicing.invoices.invoice_created.v1',
  payment: 'invoicing.payments.payment_created.v1',
  expense: 'invoicing.expenses.expense_created.v1',
} as const;
export type DomainObjectKind = keyof typeof DOMAIN_EVENT_TYPES;
export type DomainEventType = (typeof DOMAIN_EVENT_TYPES)[DomainObjectKind];

export interface DomainEventData {
  organization_id: string;
  /** The created object exactly as the API returned it. */
  object: { object: string; id: string; created_at: string } & Record<string, unknown>;
}
export type DomainEvent = CloudEvent<DomainEventType, DomainEventData>;

const OBJECT_SCHEMAS: Record<DomainObjectKind, Record<string, unknown>> = {
  client: CLIENT_SCHEMA,
  product: PRODUCT_SCHEMA,
  invoice: INVOICE_SCHEMA,
  payment: PAYMENT_SCHEMA,
  expense: EXPENSE_SCHEMA,
};

function envelope(type: string, objectSchema: Record<string, unknown>) {
  const { $id: _id, ...inlined } = objectSchema;
  return {
    $schema: 'https://json-schema.org/draft/2020-12/schema',
    title: type,
    type: 'object',
    required: ['specversion', 'id', 'source', 'type', 'subject', 'time', 'datacontenttype', 'data'],
    properties: {
      specversion: { const: '1.0' },
      id: { type: 'string', minLength: 1 },
      source: { type: 'string', minLength: 1 },
      type: { const: type },
      subject: { type: 'string', minLength: 1 },
      time: { type: 'string', format: 'date-time' },
      datacontenttype: { const: 'application/json' },
      data: {
        type: 'object',
        additionalProperties: false,
        required: ['organization_id', 'object'],
        properties: { organization_id: { type: 'string', pattern: '^org_[0-9a-f]{32}$' }, object: inlined },
      },
    },
  };
}

/** JSON Schema of each domain event type, keyed by CloudEvents `type`. */
export const DOMAIN_EVENT_SCHEMAS = Object.fromEntries(
  (Object.keys(DOMAIN_EVENT_TYPES) as DomainObjectKind[]).map((kind) => [
    DOMAIN_EVENT_TYPES[kind],
    envelope(DOMAIN_EVENT_TYPES[kind], OBJECT_SCHEMAS[kind]),
  ]),
) as unknown as Record<DomainEventType, Record<string, unknown>>;

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addFormat('currency', /^[A-Z]{3}$/);
ajv.addFormat('country', /^[A-Z]{2}$/);
const validators = new Map(Object.entries(DOMAIN_EVENT_SCHEMAS).map(([type, schema]) => [type, ajv.compile(schema)]));

export function validateDomainEvent(value: unknown): ValidationResult<DomainEvent> {
  const type = (value as { type?: unknown } | null)?.type;
  const validate = typeof type === 'string' ? validators.get(type) : undefined;
  if (!validate) return { ok: false, errors: [`unknown event type ${JSON.stringify(type)}`] };
  if (validate(value)) return { ok: true, value: value as unknown as DomainEvent };
  return { ok: false, errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`) };
}

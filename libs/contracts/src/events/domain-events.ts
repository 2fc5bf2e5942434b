import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { DomainObjectKind, RESOURCE_MANIFEST, RESOURCES } from '../manifest';
import type { CloudEvent, ValidationResult } from './revocation-events';

/**
 * Domain events: every created object is announced on this topic (key = object id), so services
 * keep local read models of what they reference instead of reading each other's tables. The topic is
 * compacted: the latest event per object stays, and a new service can rebuild its read models.
 */
export const DOMAIN_TOPIC = 'invoicing.domain.v1';

type Manifest = typeof RESOURCE_MANIFEST;
type EventTypes = { [R in keyof Manifest as Manifest[R]['kind']]: `invoicing.${R}.${Manifest[R]['kind']}_created.v1` };

/** CloudEvents `type` of each kind's creation: `invoicing.<resource>.<kind>_created.v1`. */
export const DOMAIN_EVENT_TYPES = Object.fromEntries(
  RESOURCES.map((r) => [RESOURCE_MANIFEST[r].kind, `invoicing.${r}.${RESOURCE_MANIFEST[r].kind}_created.v1`]),
) as EventTypes;
/**
 * A payment changed an invoice's balance: the invoice as the API now returns it, and its
 * `amount_paid` and `status` before (`previous`). Keyed by the invoice's id like its creation, so
 * the compacted topic keeps the latest state of each invoice.
 */
export const INVOICE_BALANCE_CHANGED_TYPE = 'invoicing.invoices.invoice_balance_changed.v1';

export type DomainEventType = EventTypes[DomainObjectKind] | typeof INVOICE_BALANCE_CHANGED_TYPE;

/** Every type of the domain topic, with the kind of object it carries. */
export const DOMAIN_TOPIC_TYPES = {
  ...(Object.fromEntries(Object.entries(DOMAIN_EVENT_TYPES).map(([kind, type]) => [type, kind])) as Record<EventTypes[DomainObjectKind], DomainObjectKind>),
  [INVOICE_BALANCE_CHANGED_TYPE]: 'invoice',
} as Readonly<Record<DomainEventType, DomainObjectKind>>;

export interface DomainEventData {
  organization_id: string;
  /** The object exactly as the API returned it (created) or now returns it (changed). */
  object: { object: string; id: string; created_at: string } & Record<string, unknown>;
  /** Only on a change: the changed fields' values before it. */
  previous?: Record<string, unknown>;
}
export type DomainEvent = CloudEvent<DomainEventType, DomainEventData>;

function envelope(type: string, objectSchema: Record<string, unknown>, previous?: Record<string, unknown>) {
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
        required: ['organization_id', 'object', ...(previous ? ['previous'] : [])],
        properties: { organization_id: { type: 'string', pattern: '^org_[0-9a-f]{32}$' }, object: inlined, ...(previous ? { previous } : {}) },
      },
    },
  };
}

/** JSON Schema of each domain event type, keyed by CloudEvents `type`. */
export const DOMAIN_EVENT_SCHEMAS = {
  ...Object.fromEntries(
    RESOURCES.map((r) => [DOMAIN_EVENT_TYPES[RESOURCE_MANIFEST[r].kind], envelope(DOMAIN_EVENT_TYPES[RESOURCE_MANIFEST[r].kind], RESOURCE_MANIFEST[r].objectSchema)]),
  ),
  [INVOICE_BALANCE_CHANGED_TYPE]: {
    ...envelope(INVOICE_BALANCE_CHANGED_TYPE, RESOURCE_MANIFEST.invoices.objectSchema, {
      type: 'object',
      additionalProperties: false,
      required: ['amount_paid', 'status'],
      properties: { amount_paid: { type: 'integer', minimum: 0 }, status: { enum: ['open', 'partially_paid', 'paid'] } },
    }),
    description: `An event on topic ${DOMAIN_TOPIC} (key: the invoice id): a payment changed the invoice's balance; data.previous holds amount_paid and status before it.`,
  },
} as unknown as Record<DomainEventType, Record<string, unknown>>;

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

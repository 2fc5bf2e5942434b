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
export type DomainEventType = EventTypes[DomainObjectKind];

export interface DomainEventData {
  organization_id: string;
  /** The created object exactly as the API returned it. */
  object: { object: string; id: string; created_at: string } & Record<string, unknown>;
}
export type DomainEvent = CloudEvent<DomainEventType, DomainEventData>;

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
  RESOURCES.map((r) => [DOMAIN_EVENT_TYPES[RESOURCE_MANIFEST[r].kind], envelope(DOMAIN_EVENT_TYPES[RESOURCE_MANIFEST[r].kind], RESOURCE_MANIFEST[r].objectSchema)]),
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

import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { DomainObjectKind, RESOURCE_MANIFEST, RESOURCES } from '../manifest';
import { ORGANIZATION_PROFILE_FIELDS, ORGANIZATION_PROFILE_SCHEMA, OrganizationProfile, OrganizationProfileField } from '../api/organization-profile.schema';
import type { CloudEvent, ValidationResult } from './revocation-events';

/**
 * Domain events: every created object is announced on this topic (key = object id), so services
 * keep local read models of what they reference instead of reading each other's tables. The topic is
 * compacted: the latest event per object stays, and a new service can rebuild its read models.
 * It also carries what the settings area changes that other services keep a copy of: an
 * organization's profile (key = organization id, {@link ORGANIZATION_PROFILE_CHANGED_V1}). Subscribers
 * skip types they do not know.
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

/**
 * An organization's profile changed (Settings → Organization, ADR 0039): the whole profile as it now
 * is, with its version and the fields that changed, written by the auth service to its outbox in the
 * transaction of the change. Keyed (and `subject`) by the organization id, so the compacted topic
 * keeps each organization's latest profile; `data.version` orders changes (a consumer keeps the
 * highest it has seen). The invoice service keeps it to print the seller as it stood when an invoice
 * was issued. Not an object's event: {@link DOMAIN_EVENT_TYPES} and {@link DOMAIN_TOPIC_TYPES} do not list it.
 */
export const ORGANIZATION_PROFILE_CHANGED_V1 = 'invoicing.settings.organization_profile_changed.v1';

export interface OrganizationProfileChangedV1Data {
  organization_id: string;
  /** The profile's version after the change (1 for its first). */
  version: number;
  /** What this change changed, in the profile's field order. */
  changed_fields: OrganizationProfileField[];
  /** The whole profile after the change, as `GET /api/v1/settings/organization` answers it. */
  profile: OrganizationProfile;
}
export type OrganizationProfileChangedV1 = CloudEvent<typeof ORGANIZATION_PROFILE_CHANGED_V1, OrganizationProfileChangedV1Data>;

/** Everything on {@link DOMAIN_TOPIC}: the objects' events, and an organization's profile changes. */
export type DomainTopicEvent = DomainEvent | OrganizationProfileChangedV1;

const { $id: _profileId, ...profileSchema } = ORGANIZATION_PROFILE_SCHEMA;

/** JSON Schema of {@link ORGANIZATION_PROFILE_CHANGED_V1}. */
export const ORGANIZATION_PROFILE_CHANGED_SCHEMA = {
  $schema: 'https://json-schema.org/draft/2020-12/schema',
  title: ORGANIZATION_PROFILE_CHANGED_V1,
  description:
    `An event on topic ${DOMAIN_TOPIC} (key: the organization id, also the subject): the organization's profile changed in Settings → Organization; ` +
    'data.profile is the whole profile after the change, data.version its version (order by it: keep the highest), data.changed_fields what this change changed. ' +
    'Written by the auth service to its outbox in the transaction of the change; delivered at least once, the same change always with the same id.',
  type: 'object',
  required: ['specversion', 'id', 'source', 'type', 'subject', 'time', 'datacontenttype', 'data'],
  properties: {
    specversion: { const: '1.0' },
    id: { type: 'string', minLength: 1 },
    source: { type: 'string', minLength: 1 },
    type: { const: ORGANIZATION_PROFILE_CHANGED_V1 },
    subject: { type: 'string', pattern: '^org_[0-9a-f]{32}$' },
    time: { type: 'string', format: 'date-time' },
    datacontenttype: { const: 'application/json' },
    data: {
      type: 'object',
      additionalProperties: false,
      required: ['organization_id', 'version', 'changed_fields', 'profile'],
      properties: {
        organization_id: { type: 'string', pattern: '^org_[0-9a-f]{32}$' },
        version: { type: 'integer', minimum: 1 },
        changed_fields: { type: 'array', minItems: 1, uniqueItems: true, items: { enum: [...ORGANIZATION_PROFILE_FIELDS] } },
        profile: profileSchema,
      },
    },
  },
};

/** JSON Schema of every type of {@link DOMAIN_TOPIC}, keyed by CloudEvents `type`. */
export const DOMAIN_TOPIC_EVENT_SCHEMAS = {
  ...DOMAIN_EVENT_SCHEMAS,
  [ORGANIZATION_PROFILE_CHANGED_V1]: ORGANIZATION_PROFILE_CHANGED_SCHEMA,
} as Record<DomainTopicEvent['type'], Record<string, unknown>>;

const ajv = new Ajv2020({ allErrors: true, strict: false });
addFormats(ajv);
ajv.addFormat('currency', /^[A-Z]{3}$/);
ajv.addFormat('country', /^[A-Z]{2}$/);
const validators = new Map(Object.entries(DOMAIN_TOPIC_EVENT_SCHEMAS).map(([type, schema]) => [type, ajv.compile(schema)]));

/**
 * Validates an event of {@link DOMAIN_TOPIC} against the JSON Schema of its `type`, whichever it
 * is; a type this version does not know is refused (a subscriber skips it). What a consumer of the
 * topic calls first; {@link isObjectEvent} then tells an object's event from the others.
 */
export function validateDomainTopicEvent(value: unknown): ValidationResult<DomainTopicEvent> {
  const type = (value as { type?: unknown } | null)?.type;
  const validate = typeof type === 'string' ? validators.get(type) : undefined;
  if (!validate) return { ok: false, errors: [`unknown event type ${JSON.stringify(type)}`] };
  if (validate(value)) return { ok: true, value: value as unknown as DomainTopicEvent };
  return { ok: false, errors: (validate.errors ?? []).map((e) => `${e.instancePath || '/'} ${e.message ?? 'is invalid'}`) };
}

/** Whether a valid event of the topic carries an object (a creation, an invoice's balance), not a settings change. */
export function isObjectEvent(event: DomainTopicEvent): event is DomainEvent {
  return Object.hasOwn(DOMAIN_TOPIC_TYPES, event.type);
}

/**
 * Validates an object's event (a creation, an invoice's balance change); any other type of the
 * topic, a settings change included, is refused as not an object's event.
 */
export function validateDomainEvent(value: unknown): ValidationResult<DomainEvent> {
  const result = validateDomainTopicEvent(value);
  if (!result.ok) return result;
  if (!isObjectEvent(result.value)) return { ok: false, errors: [`${result.value.type} is not an object's event`] };
  return { ok: true, value: result.value };
}

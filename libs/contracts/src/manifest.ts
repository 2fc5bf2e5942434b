import { CLIENT_SCHEMA, CREATE_CLIENT_SCHEMA } from './api/clients.schema';
import { DATE, idOf } from './api/common.schema';
import { CREATE_EXPENSE_SCHEMA, EXPENSE_SCHEMA } from './api/expenses.schema';
import { CREATE_INVOICE_SCHEMA, INVOICE_SCHEMA, INVOICE_STATUSES } from './api/invoices.schema';
import { DATE_TIME, flag, range, someOf } from './api/list-filter.schema';
import { CREATE_PAYMENT_SCHEMA, PAYMENT_SCHEMA } from './api/payments.schema';
import { CREATE_PRODUCT_SCHEMA, PRODUCT_SCHEMA } from './api/products.schema';
import { INVOICE_REPRESENTATIONS, type ObjectRepresentation } from './api/representations';

/**
 * What one resource of the public API is, for every part of the platform that needs to know it.
 * Everything else about a resource is derived from this entry (scopes.ts, ids.ts, platform.ts,
 * domain-events.ts, list-filters.ts, the OpenAPI and AsyncAPI documents, the resource services'
 * definitions and configuration): the lint rule `platform/no-resource-list` refuses a second list.
 */
export interface ResourceManifestEntry {
  /** Singular, snake_case: the `object` of its JSON, the service (`<kind>-service`), the DB role stem. */
  kind: string;
  /** Three lowercase letters before the `_` of its ids (docs/api.md section 2); unique. */
  idPrefix: string;
  /** Local default port of its service (the gateway, compose and Kubernetes take it from here). */
  port: number;
  /** JSON Schema of the create body. */
  createSchema: { $id: string } & Record<string, unknown>;
  /** JSON Schema of the object as the API returns it (and as its domain event carries it). */
  objectSchema: { $id: string } & Record<string, unknown>;
  /**
   * List filters (query parameter → JSON Schema of its value; list-filter.schema.ts), ANDed with each
   * other, the organization and the cursor. Every resource has the `created` range; the service
   * implements each, and refuses to start when its filters differ from these.
   */
  filters: Record<string, Record<string, unknown>>;
  /** Kinds of other resources its objects reference (kept in its read model from their events). */
  references: readonly string[];
  /**
   * Representations of one object besides its JSON, by media type: `GET /{id}` with that `Accept`
   * (representations.ts). The service renders each, and refuses to start when its renderers differ
   * from these. Absent: JSON only.
   */
  representations?: Readonly<Record<string, ObjectRepresentation>>;
  /**
   * What the docs' code samples send and show (docs/api.md, the API reference): a create body that
   * validates against `createSchema` (`xxx_...` stands for an id of the caller's own), a list filter
   * worth showing, and the field the SDK's list sample prints.
   */
  sample: { create: Record<string, unknown>; listQuery: Record<string, string>; shown: string };
}

/**
 * The resources of the public API: a sixth resource is one entry here plus its service
 * (`nx g ./tools/nx-plugin:resource-service`, which writes both). Keyed by the plural, which is
 * the URL path segment, the scope suffix (`read:<plural>`) and the service's Postgres schema.
 */
export const RESOURCE_MANIFEST = {
  invoices: {
    kind: 'invoice',
    idPrefix: 'inv',
    port: 3002,
    createSchema: CREATE_INVOICE_SCHEMA,
    objectSchema: INVOICE_SCHEMA,
    filters: {
      ...range('created', DATE_TIME, 'created_at'),
      client_id: idOf('cli'),
      status: someOf(INVOICE_STATUSES, 'status'),
      unpaid: flag('true: only invoices with amount_due > 0 (open or partially paid); false: only those with amount_due = 0 (paid, or overpaid).'),
      ...range('issue_date', DATE),
      ...range('due_date', { ...DATE, description: `${DATE.description} An invoice without a due_date matches no due_date bound.` }),
    },
    references: ['client', 'product'],
    representations: INVOICE_REPRESENTATIONS,
    sample: {
      create: { client_id: 'cli_...', currency: 'EUR', line_items: [{ description: 'Consulting', quantity: 1, unit_price: 50000 }] },
      listQuery: { status: 'open' },
      shown: 'number',
    },
  },
  clients: {
    kind: 'client',
    idPrefix: 'cli',
    port: 3003,
    createSchema: CREATE_CLIENT_SCHEMA,
    objectSchema: CLIENT_SCHEMA,
    filters: { ...range('created', DATE_TIME, 'created_at') },
    references: [],
    sample: { create: { name: 'Acme GmbH', email: 'billing@acme.example', currency: 'EUR' }, listQuery: {}, shown: 'name' },
  },
  payments: {
    kind: 'payment',
    idPrefix: 'pay',
    port: 3004,
    createSchema: CREATE_PAYMENT_SCHEMA,
    objectSchema: PAYMENT_SCHEMA,
    filters: { ...range('created', DATE_TIME, 'created_at'), invoice_id: idOf('inv') },
    references: ['invoice'],
    sample: {
      create: { invoice_id: 'inv_...', amount: 50000, currency: 'EUR', method: 'bank_transfer' },
      listQuery: { invoice_id: 'inv_...' },
      shown: 'amount',
    },
  },
  products: {
    kind: 'product',
    idPrefix: 'prd',
    port: 3005,
    createSchema: CREATE_PRODUCT_SCHEMA,
    objectSchema: PRODUCT_SCHEMA,
    filters: { ...range('created', DATE_TIME, 'created_at') },
    references: [],
    sample: {
      create: { name: 'Consulting hour', sku: 'CONS-1H', unit_price: 12000, currency: 'EUR', tax_rate_bps: 1900 },
      listQuery: {},
      shown: 'name',
    },
  },
  expenses: {
    kind: 'expense',
    idPrefix: 'exp',
    port: 3006,
    createSchema: CREATE_EXPENSE_SCHEMA,
    objectSchema: EXPENSE_SCHEMA,
    filters: { ...range('created', DATE_TIME, 'created_at') },
    references: [],
    sample: {
      create: { description: 'Train ticket', amount: 8900, currency: 'EUR', category: 'travel', incurred_on: '2025-01-15' },
      listQuery: {},
      shown: 'description',
    },
  },
} as const satisfies Record<string, ResourceManifestEntry>;

type Manifest = typeof RESOURCE_MANIFEST;
/** `invoices`, `clients`, ... */
export type Resource = keyof Manifest;
/** `invoice`, `client`, ... */
export type DomainObjectKind = Manifest[Resource]['kind'];
/** The resource whose objects are of kind K. */
export type ResourceOfKind<K extends DomainObjectKind> = { [R in Resource]: Manifest[R]['kind'] extends K ? R : never }[Resource];
/** `invoice-service`, ... */
export type ResourceServiceName = `${DomainObjectKind}-service`;

/** Every resource, in the manifest's order (the order of scopes, docs and tables). */
export const RESOURCES = Object.keys(RESOURCE_MANIFEST) as Resource[];

/** Every kind of object, in the manifest's order. */
export const DOMAIN_OBJECT_KINDS = RESOURCES.map((r) => RESOURCE_MANIFEST[r].kind) as DomainObjectKind[];

const RESOURCE_BY_KIND = new Map<string, Resource>(RESOURCES.map((r) => [RESOURCE_MANIFEST[r].kind, r]));

/** `invoice` → `invoices`. */
export function resourceOfKind<K extends DomainObjectKind>(kind: K): ResourceOfKind<K> {
  const resource = RESOURCE_BY_KIND.get(kind);
  if (!resource) throw new Error(`unknown kind of object: ${kind}`);
  return resource as ResourceOfKind<K>;
}

/** The representations of a resource's objects besides JSON, by media type (none: an empty record). */
export function representationsOf(resource: Resource): Readonly<Record<string, ObjectRepresentation>> {
  return (RESOURCE_MANIFEST[resource] as ResourceManifestEntry).representations ?? {};
}

/** `invoices` → `invoice-service`: the service that owns the resource. */
export function serviceOfResource(resource: Resource): ResourceServiceName {
  return `${RESOURCE_MANIFEST[resource].kind}-service`;
}

/** `client` → `client-service`: the service that owns objects of that kind. */
export function ownerOfKind(kind: DomainObjectKind): ResourceServiceName {
  return `${kind}-service`;
}

/**
 * `client` → `['invoice-service']`: the services whose objects reference objects of that kind, i.e.
 * the only services that may ask its owner for one (the owner's internal route, ADR 0012).
 */
export function referrersOfKind(kind: DomainObjectKind): ResourceServiceName[] {
  return RESOURCES.filter((r) => (RESOURCE_MANIFEST[r].references as readonly string[]).includes(kind)).map(serviceOfResource);
}

/** Derived identity of a resource service: its name, Postgres schema and database role stem. */
export function resourceServiceIdentity(resource: Resource): { name: ResourceServiceName; schema: Resource; role: DomainObjectKind; port: number } {
  const entry = RESOURCE_MANIFEST[resource];
  return { name: serviceOfResource(resource), schema: resource, role: entry.kind, port: entry.port };
}

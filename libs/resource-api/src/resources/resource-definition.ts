import type { CallerIdentity } from '@invoicing/auth-guard';
import type { DomainEvent, DomainEventType, DomainObjectKind, IdPrefix, OrganizationProfile, Resource } from '@invoicing/contracts';
import type { FieldError, OrganizationOwned } from '@invoicing/service-kit';
import type { DataSource, EntityManager } from 'typeorm';
import type { KnownObject } from '../references/known-objects';
import type { RowSequence } from './entity-reader';
import type { Sql } from '../idempotency/idempotency';
import type { OrgScope } from '../tenancy/org-scope';
import type { ListFilter } from './list-filter';

/** Columns every resource entity has: its id, its owner and its creation time. */
export type ResourceEntityBase = OrganizationOwned;

export interface PublicObject extends Record<string, unknown> {
  object: string;
  id: string;
  created_at: string;
}

export interface BuildContext<C> {
  scope: OrgScope;
  caller: CallerIdentity;
  input: C;
  /** The create's transaction: statements answer their rows. */
  tx: Sql;
  /** uuid of the new object. The service sets it, with `organizationId` and `createdAt` (`now`), on
   * the entity `build` returns: a definition never sets the owner of a row. */
  id: string;
  now: Date;
  /** Resolves a reference to another service's object within the caller's organization (or 422). */
  references: { require(kind: DomainObjectKind, publicId: string, field: string): Promise<KnownObject> };
}

/** What a representation's renderer is given besides the object: the query's parameters, as validated. */
export interface RenderContext {
  /** The representation's own query parameters (the manifest's), when given. */
  query: Readonly<Record<string, string>>;
  /** The service's database (the pool), for what the document needs besides the row. */
  db: Pick<DataSource, 'query'>;
  /** False once nobody waits for the answer (the request's deadline passed, the caller went away): do not start the work then. */
  wanted(): boolean;
}

/**
 * Renders one object in a representation other than JSON (a media type of the manifest's entry):
 * the body's bytes. May throw a ProblemException (a 422 when the object cannot be made into it).
 */
export type Renderer<E> = (entity: E, context: RenderContext) => Promise<Buffer>;

/** An organization's profile changed (Settings → Organization), as a consumer gets it. */
export interface OrganizationProfileChange {
  organizationId: string;
  version: number;
  profile: OrganizationProfile;
  changedAt: string;
}

/** Events of one type of a batch, each with its organization's uuid. */
export type EventsReaction = (events: ReadonlyArray<{ event: DomainEvent; organizationId: string }>, tx: EntityManager) => Promise<void>;


/**
 * Everything that differs between two resources: a sixth resource is one of these plus an entity and
 * a migration. The generic service does validation, idempotency, tenancy, paging, the domain event.
 */
export interface ResourceDefinition<E extends ResourceEntityBase = ResourceEntityBase, C = unknown> {
  resource: Resource;
  kind: DomainObjectKind;
  idPrefix: IdPrefix;
  entity: new () => E;
  /** JSON Schema of the create body (from @invoicing/contracts). */
  createSchema: Record<string, unknown>;
  /**
   * Validates what the schema cannot (cross-field rules, references) and builds the row from the
   * input: its own columns only; `id`, `organizationId` and `createdAt` are the service's to set.
   */
  build(context: BuildContext<C>): Promise<E>;
  view(entity: E): PublicObject;
  /**
   * List filters by query parameter (list-filter.ts), exactly the manifest's (the service refuses to
   * start otherwise). `defineResource` adds the `created` range every resource has.
   */
  filters?: Record<string, ListFilter>;
  /**
   * For resources whose rows can be large (an invoice's 500 line items): the integer column (in the
   * entity's table) holding each row's content size in bytes, kept by the table itself (a generated
   * column). A list page then stops early, with has_more, once its rows reach LIST_PAGE_MAX_BYTES,
   * decided in SQL before any row is sent. Without it, a page is bounded by `limit` and the schemas.
   */
  sizeColumn?: string;
  /** Unique constraint name → the 409 it means. */
  conflicts?: Record<string, { detail: string; error: FieldError }>;
  /**
   * A column `build` may leave null for the organization's gapless sequence to fill (an invoice's
   * number): taken in the statement that inserts the row, so the counter row is locked only from
   * there to the commit (ADR 0036).
   */
  sequence?: RowSequence;
  /** Other services' objects this service keeps in its read model (from their domain events). */
  references?: DomainObjectKind[];
  /**
   * Further reactions to domain events of a type: every event of that type of one batch at once, in
   * the order they arrived, in the batch's transaction (ADR 0036). `organizationId` is each event's
   * `organization_id` parsed once by the consumer (the uuid the database stores). Another instance
   * applies other batches at the same moment: rows a reaction updates must be locked in one order
   * (sorted), or two batches can deadlock.
   */
  onEvents?: Partial<Record<DomainEventType, EventsReaction>>;
  /**
   * Organizations' profile changes (Settings → Organization), a batch's at once in its transaction,
   * in the order they arrived: for a service that keeps a copy. Delivered at least once and possibly
   * out of order (the topic is compacted by organization): keep the highest `version`.
   */
  onOrganizationProfiles?(changes: readonly OrganizationProfileChange[], tx: EntityManager): Promise<void>;
  /**
   * Renderers of the representations besides JSON, by media type: exactly the manifest's entry's
   * (the service refuses to start otherwise). `GET /{id}` with that Accept answers the bytes.
   */
  representations?: Readonly<Record<string, Renderer<E>>>;
  /**
   * The file name (without extension) of an object's document in `Content-Disposition`; default its
   * public id. Only characters safe in a header and a file name are kept.
   */
  documentName?(entity: E): string | null;
}

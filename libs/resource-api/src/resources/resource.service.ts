import { Logger } from '@nestjs/common';
import type { CallerIdentity } from '@invoicing/auth-guard';
import { DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, DomainObjectKind, LIST_FILTERS, newId, parsePublicId } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';
import { uuidv7 } from 'uuidv7';
import { DataSource, QueryFailedError } from 'typeorm';
import { OutboxRelay } from '@invoicing/event-bus';
import { IdempotencyStore, IdempotentResult, Sql } from '../idempotency/idempotency';
import { FilterParser, ListQuery, Page, parseListQuery, toPage } from '@invoicing/service-kit';
import { ConcurrencyGate } from '../rate-limit/concurrency-gate';
import { ReferenceResolver } from '../references/known-objects';
import { orgScopeOf, OrgScope } from '../tenancy/org-scope';
import { buildRow } from './build-row';
import { BodyValidator, compileBody } from '@invoicing/service-kit';
import { EntityReader } from './entity-reader';
import { checkListFilters, filterParser, listWhere } from './list-filter';
import { retryingTransaction } from '../idempotency/transaction-retry';
import { JSON_TYPE, ObjectRepresentations, Represented } from '../representations/representations';
import type { PublicObject, ResourceDefinition, ResourceEntityBase } from './resource-definition';

/** How a get that may be a document is asked for (see {@link ResourceService.represent}). */
export interface RepresentOptions {
  /** A HEAD request: the headers only, no render. */
  head?: boolean;
  /** False once nobody waits for the answer: a document whose turn comes then is not rendered. */
  wanted?: () => boolean;
}

/** Numbers of the sequence a create may find taken (chosen by callers) before it gives up. */
const SEQUENCE_ATTEMPTS = 1000;

/** What one list request and one organization's lists may cost (LIST_* variables). */
export interface ListLimits {
  /** Bytes of content per page, for a definition with a `sizeColumn`. */
  pageMaxBytes: number;
  /** List requests of one organization running at once on this instance, and waiting behind them. */
  concurrencyPerOrganization: number;
  queuePerOrganization: number;
}

/**
 * Create, get and list for one resource, scoped to the caller's organization on every query. A create
 * runs under its Idempotency-Key, and the row and its domain event commit in one transaction.
 */
export class ResourceService<E extends ResourceEntityBase, C> {
  private readonly logger = new Logger(ResourceService.name);
  private readonly validate: BodyValidator<C>;
  private readonly idempotency: IdempotencyStore;
  private readonly path: string;
  private readonly filterParsers: Record<string, FilterParser<unknown>>;
  private entityReader: EntityReader<E> | null = null;
  private readonly listGate: ConcurrencyGate;
  private readonly representations: ObjectRepresentations<E>;

  constructor(
    private readonly def: ResourceDefinition<E, C>,
    private readonly db: DataSource,
    schema: string,
    private readonly service: string,
    private readonly references: ReferenceResolver,
    private readonly relay: OutboxRelay,
    private readonly listLimits: ListLimits,
  ) {
    // The published document (LIST_FILTERS) and the service must offer the same filters, each
    // reading the kind of value the document gives it (a date-time, a date, a list...).
    const filters = def.filters ?? {};
    checkListFilters(def.resource, LIST_FILTERS[def.resource], filters);
    this.validate = compileBody<C>(def.createSchema);
    this.idempotency = new IdempotencyStore(db, schema);
    this.path = `/api/v1/${def.resource}`;
    this.filterParsers = Object.fromEntries(Object.entries(filters).map(([name, f]) => [name, filterParser(f)]));
    this.listGate = new ConcurrencyGate(listLimits.concurrencyPerOrganization, listLimits.queuePerOrganization);
    // The manifest's representations and the definition's renderers must be the same (else no start).
    this.representations = new ObjectRepresentations(def as ResourceDefinition<E, unknown>, db);
  }

  /** Reads go straight to the pool (EntityReader); made on first use, once TypeORM has its metadata. */
  private get reader(): EntityReader<E> {
    return (this.entityReader ??= new EntityReader(this.db, this.def.entity));
  }

  async create(caller: CallerIdentity, body: unknown, idempotencyKey: string | undefined): Promise<IdempotentResult> {
    const scope = orgScopeOf(caller);
    // The schema check comes before anything else: a body that cannot be valid starts no
    // transaction and records nothing (the same body gets the same 422 again), and the key's hash
    // never walks an arbitrarily deep document.
    const input = this.validate(body);
    // A create's transaction can deadlock with the domain events' consumer: both write the read
    // model of referenced objects (a reference fetched from its owner is remembered in the create's
    // transaction while the owner's event for it is applied), in orders neither controls. Postgres
    // aborts one of them; the consumer retries its batch, and the create is run again whole (nothing
    // of it stayed), now finding the reference in the read model. Seen in a fresh-clone e2e run: an
    // invoice referencing a client and a product created a moment before answered 500.
    const result = await retryingTransaction(
      () => this.createOnce(scope, caller, input, body, idempotencyKey),
      (attempt, error) => this.logger.warn({ msg: 'create retried after Postgres aborted its transaction', resource: this.def.resource, attempt, error: String(error) }),
    );
    if (!result.replayed) this.relay.kick();
    return result;
  }

  private createOnce(scope: OrgScope, caller: CallerIdentity, input: C, body: unknown, idempotencyKey: string | undefined): Promise<IdempotentResult> {
    return this.idempotency.run(scope, idempotencyKey, `POST ${this.path}`, body, async (tx) => {
      const id = parsePublicId(this.def.idPrefix, newId(this.def.idPrefix))!;
      const references = {
        require: (kind: DomainObjectKind, publicId: string, field: string) =>
          this.references.require(scope, caller, kind, publicId, field, tx),
      };
      const entity = await buildRow(this.def, { scope, caller, input, tx, id, now: new Date(), references });
      // A row that is stored as built is written with its event and response in one statement;
      // one whose columns Postgres fills (generated, numbered) first, to be viewed as stored.
      const early = this.reader.insertStatement(entity, this.def.sequence, 1);
      const view = this.def.view(early ? entity : await this.insert(tx, entity));
      return {
        row: early ? { ...early, conflict: () => this.duplicate() } : undefined,
        response: { status: 201, body: view, location: `${this.path}/${view.id}` },
        event: {
          id: uuidv7(),
          topic: DOMAIN_TOPIC,
          key: view.id,
          payload: {
            specversion: '1.0',
            id: uuidv7(),
            source: `/invoicing/${this.service}`,
            type: DOMAIN_EVENT_TYPES[this.def.kind],
            subject: view.id,
            time: view.created_at,
            datacontenttype: 'application/json',
            data: { organization_id: caller.organizationPublicId, object: view },
          },
        },
      };
    });
  }

  /**
   * The row as stored. A unique value already taken is a 409 (the definition's conflict); a number
   * of the organization's sequence already taken (a caller chose it) is skipped, the next one tried.
   */
  private async insert(tx: Sql, entity: E): Promise<E> {
    for (let attempt = 0; attempt < SEQUENCE_ATTEMPTS; attempt++) {
      let saved: E | null;
      try {
        saved = await this.reader.insert(tx, entity, this.def.sequence);
      } catch (e) {
        throw this.conflict(e) ?? e;
      }
      if (saved) return saved;
      const sequence = this.def.sequence;
      const numbered = sequence !== undefined && (entity as Record<string, unknown>)[sequence.column] == null;
      if (!numbered) throw this.duplicate();
    }
    throw new Error(`${this.def.resource}: no free number in ${SEQUENCE_ATTEMPTS} attempts`);
  }

  /** The definition's conflict when it has one (a resource has one unique value at most), else a plain 409. */
  private duplicate(): ProblemException {
    const known = Object.values(this.def.conflicts ?? {});
    return known.length === 1 ? new ProblemException(409, known[0].detail, [known[0].error]) : new ProblemException(409, 'The object conflicts with an existing one.');
  }

  get(caller: CallerIdentity, publicId: string): Promise<PublicObject> {
    return this.getIn(orgScopeOf(caller), publicId);
  }

  /**
   * The object as the Accept header asks (a resource with representations besides JSON): its JSON,
   * or a document rendered by the definition. 400 for a representation's parameter out of its
   * schema, 406 for an Accept that allows none, 404 as for JSON, 429 past the organization's renders.
   */
  async represent(caller: CallerIdentity, publicId: string, accept: string | undefined, rawQuery: unknown, options: RepresentOptions = {}): Promise<Represented> {
    const { type, query } = this.representations.choose(accept, rawQuery);
    if (type === JSON_TYPE) return { type, object: await this.get(caller, publicId) };
    const found = await this.find(orgScopeOf(caller), publicId);
    if (!found) throw ProblemException.notFound(this.def.kind);
    // A HEAD asks for the headers only: the document is not rendered for them.
    if (options.head) return { type, head: true, filename: this.representations.filenameOf(found, type) };
    return this.representations.render(found, type, query, options.wanted);
  }

  /** The object in that organization (the internal route's, for another service's credential). */
  async getIn(scope: OrgScope, publicId: string): Promise<PublicObject> {
    const found = await this.find(scope, publicId);
    if (!found) throw ProblemException.notFound(this.def.kind);
    return this.def.view(found);
  }

  /** Another organization's id is indistinguishable from an absent one. */
  find(scope: OrgScope, publicId: string): Promise<E | null> {
    const id = parsePublicId(this.def.idPrefix, publicId);
    if (!id) return Promise.resolve(null);
    // Concurrent gets share one statement; each still matches its own organization (EntityReader).
    return this.reader.byIdInOrganization(id, scope.organizationId);
  }

  /**
   * One page, newest first. For a resource whose rows can be large (a definition with a
   * `sizeColumn`: invoices), a page stops at LIST_PAGE_MAX_BYTES (`pageBySize`), and an organization
   * has at most LIST_CONCURRENCY_PER_ORGANIZATION such lists running on this instance and
   * LIST_QUEUE_PER_ORGANIZATION waiting (for its own lists only); past both, 429 with Retry-After: 1.
   * Together, one organization's lists hold a bounded share of the event loop, the pool and memory.
   * Other resources' rows are bounded by their schemas (a page of 100 is at most about 150 KiB): their lists
   * take no turn, which would only serialize one tenant's parallel reads (measured: 0.71x throughput).
   */
  async list(caller: CallerIdentity, rawQuery: unknown): Promise<Page<PublicObject>> {
    // A bad query is a 400 without taking a slot.
    const query = parseListQuery<string, unknown>(rawQuery, this.def.idPrefix, this.filterParsers);
    const organizationId = orgScopeOf(caller).organizationId;
    if (!this.def.sizeColumn) return this.page(organizationId, query);
    const admitted = this.listGate.enter(organizationId);
    if (!admitted) {
      throw new ProblemException(429, 'Too many list requests of this organization at once; retry in 1 second.', undefined, { 'Retry-After': '1' });
    }
    const release = await admitted;
    try {
      return await this.page(organizationId, query);
    } finally {
      release();
    }
  }

  private async page(organizationId: string, query: ListQuery<string, unknown>): Promise<Page<PublicObject>> {
    // The organization, the filters given and the cursor, ANDed: columns and operators from the
    // definition, never from the request; values are parameters (listWhere).
    const { where, values } = listWhere(organizationId, this.def.filters ?? {}, query.filters, query.startingAfter);
    if (this.def.sizeColumn) {
      const { rows, more } = await this.reader.pageBySize(where, values, query.limit, this.def.sizeColumn, this.listLimits.pageMaxBytes);
      const page: Page<PublicObject> = { object: 'list', data: rows.map((row) => this.def.view(row)), has_more: more };
      // Parsing and viewing a large page, then serializing and writing it, are each milliseconds of
      // uninterrupted work: let the requests that arrived meanwhile run in between.
      await new Promise((resolve) => setImmediate(resolve));
      return page;
    }
    values.push(query.limit + 1);
    const rows = await this.reader.many(where, values, `ORDER BY id DESC LIMIT $${values.length}`);
    return toPage(rows, query.limit, (row) => this.def.view(row));
  }

  private conflict(e: unknown): ProblemException | null {
    if (!(e instanceof QueryFailedError)) return null;
    const { code, constraint } = e as QueryFailedError & { code?: string; constraint?: string };
    if (code !== '23505' || !constraint) return null;
    const known = this.def.conflicts?.[constraint];
    return known ? new ProblemException(409, known.detail, [known.error]) : new ProblemException(409, 'The object conflicts with an existing one.');
  }
}

import type { CallerIdentity } from '@invoicing/auth-guard';
import { DOMAIN_EVENT_TYPES, DOMAIN_TOPIC, DomainObjectKind, LIST_FILTERS, newId, parsePublicId, toPublicId } from '@invoicing/contracts';
import { ProblemException } from '@invoicing/service-kit';
import { uuidv7 } from 'uuidv7';
import { DataSource, QueryFailedError } from 'typeorm';
import { enqueueEvent, OutboxRelay } from '../events/outbox';
import { IdempotencyStore, IdempotentResult } from '../idempotency/idempotency';
import { Page, parseListQuery, toPage } from '../pagination/list-query';
import { ReferenceResolver } from '../references/known-objects';
import { orgScopeOf, OrgScope } from '../tenancy/org-scope';
import { BodyValidator, compileBody } from '../validation/json-body';
import type { PublicObject, ResourceDefinition, ResourceEntityBase } from './resource-definition';

/**
 * Create, get and list for one resource, scoped to the caller's organization on every query. A create
 * runs under its Idempotency-Key, and the row and its domain event commit in one transaction.
 */
export class ResourceService<E extends ResourceEntityBase, C> {
  private readonly validate: BodyValidator<C>;
  private readonly idempotency: IdempotencyStore;
  private readonly path: string;

  constructor(
    private readonly def: ResourceDefinition<E, C>,
    private readonly db: DataSource,
    private readonly schema: string,
    private readonly service: string,
    private readonly references: ReferenceResolver,
    private readonly relay: OutboxRelay,
  ) {
    // The published document (LIST_FILTERS) and the service must offer the same filters.
    const documented = Object.keys(LIST_FILTERS[def.resource]).sort().join(',');
    const implemented = Object.keys(def.filters ?? {}).sort().join(',');
    if (documented !== implemented) {
      throw new Error(`${def.resource}: filters [${implemented}] differ from LIST_FILTERS [${documented}]`);
    }
    this.validate = compileBody<C>(def.createSchema);
    this.idempotency = new IdempotencyStore(db, schema);
    this.path = `/api/v1/${def.resource}`;
  }

  async create(caller: CallerIdentity, body: unknown, idempotencyKey: string | undefined): Promise<IdempotentResult> {
    const scope = orgScopeOf(caller);
    const result = await this.idempotency.run(scope, idempotencyKey, `POST ${this.path}`, body, async (tx) => {
      const input = this.validate(body);
      const id = parsePublicId(this.def.idPrefix, newId(this.def.idPrefix))!;
      const references = {
        require: (kind: DomainObjectKind, publicId: string, field: string) =>
          this.references.require(scope, caller, kind, publicId, field, tx),
      };
      const entity = await this.def.build({ scope, caller, input, tx, id, now: new Date(), references });
      try {
        await tx.getRepository(this.def.entity).insert(entity as never);
      } catch (e) {
        throw this.conflict(e) ?? e;
      }
      const saved = await tx.getRepository(this.def.entity).findOneByOrFail({ id } as never);
      const view = this.def.view(saved);
      await enqueueEvent(tx, this.schema, {
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
          data: { organization_id: toPublicId('org', scope.organizationUuid), object: view },
        },
      });
      return { status: 201, body: view, location: `${this.path}/${view.id}` };
    });
    if (!result.replayed) this.relay.kick();
    return result;
  }

  async get(caller: CallerIdentity, publicId: string): Promise<PublicObject> {
    const found = await this.find(orgScopeOf(caller), publicId);
    if (!found) throw ProblemException.notFound(this.def.kind);
    return this.def.view(found);
  }

  /** Another organization's id is indistinguishable from an absent one. */
  find(scope: OrgScope, publicId: string): Promise<E | null> {
    const id = parsePublicId(this.def.idPrefix, publicId);
    if (!id) return Promise.resolve(null);
    return this.db.getRepository(this.def.entity).findOneBy({ id, organizationId: scope.organizationUuid } as never);
  }

  async list(caller: CallerIdentity, rawQuery: unknown): Promise<Page<PublicObject>> {
    const filters = this.def.filters ?? {};
    const parsers = Object.fromEntries(Object.entries(filters).map(([name, f]) => [name, f.parse]));
    const query = parseListQuery<string>(rawQuery, this.def.idPrefix, parsers);
    const qb = this.db
      .getRepository(this.def.entity)
      .createQueryBuilder('r')
      .where('r.organization_id = :org', { org: orgScopeOf(caller).organizationUuid });
    for (const [name, value] of Object.entries(query.filters)) {
      qb.andWhere(`r.${filters[name].column} = :f_${name}`, { [`f_${name}`]: value });
    }
    if (query.startingAfter) qb.andWhere('r.id < :after', { after: query.startingAfter });
    const rows = await qb.orderBy('r.id', 'DESC').limit(query.limit + 1).getMany();
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

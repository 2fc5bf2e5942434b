import { context, propagation, trace } from '@opentelemetry/api';
import { DomainObjectKind, idPrefixOf, ownerOfKind, parsePublicId } from '@invoicing/contracts';
import type { CallerIdentity } from '@invoicing/auth-guard';
import { Logger } from '@nestjs/common';
import { ProblemException } from '@invoicing/service-kit';
import type { DataSource, EntityManager } from 'typeorm';
import type { OrgScope } from '../tenancy/org-scope';
import type { ServiceCredentials } from './service-credential';
import type { Sql } from '../idempotency/idempotency';

/** SQL of the local read model of other services' objects (used by each service's migration). */
export function knownObjectsTableSql(schema: string): string[] {
  return [
    `CREATE TABLE ${schema}.known_objects (
      kind text NOT NULL,
      id uuid NOT NULL,
      organization_id uuid NOT NULL,
      data jsonb NOT NULL,
      PRIMARY KEY (kind, id)
    )`,
  ];
}

export type KnownObject = Record<string, unknown> & { id: string; object: string };

/** Where the read model is read and written: a create's transaction, an event's, or the pool. */
export type Queryable = Pick<EntityManager | DataSource | Sql, 'query'>;

/**
 * References across services (ADR 0012). The read model is fed by the owners' domain events; for an
 * object created a moment ago whose event has not arrived, the owner is asked directly with a
 * service credential naming the caller's organization, so the answer is confined to it (the
 * caller's own token is never forwarded: a tenant's token opens no internal route).
 */
export class ReferenceResolver {
  private readonly logger = new Logger(ReferenceResolver.name);

  constructor(
    private readonly db: DataSource,
    private readonly schema: string,
    private readonly owners: Partial<Record<DomainObjectKind, string>>,
    private readonly credentials: ServiceCredentials,
    private readonly timeoutMs = 2000,
  ) {}

  /** Records an object announced by its owner (idempotent: the latest version wins). */
  async remember(tx: Queryable, kind: DomainObjectKind, organizationId: string, object: KnownObject): Promise<void> {
    const id = parsePublicId(idPrefixOf(kind), object.id);
    if (!id) return;
    await tx.query(
      `INSERT INTO ${this.schema}.known_objects (kind, id, organization_id, data) VALUES ($1, $2, $3, $4)
       ON CONFLICT (kind, id) DO UPDATE SET data = EXCLUDED.data`,
      [kind, id, organizationId, JSON.stringify(object)],
    );
  }

  /**
   * The referenced object, or a 422 naming `field` when it does not exist in the caller's
   * organization (another organization's object is refused exactly like an absent one).
   */
  async require(
    scope: OrgScope,
    caller: CallerIdentity,
    kind: DomainObjectKind,
    publicId: string,
    field: string,
    tx: Queryable = this.db,
  ): Promise<KnownObject> {
    const missing = () =>
      ProblemException.validation([{ field, code: 'not_found', message: `no such ${kind} in this organization` }]);
    const id = parsePublicId(idPrefixOf(kind), publicId);
    if (!id) throw missing();
    // On the caller's transaction: a second pool connection per request could starve the pool.
    const rows = (await tx.query(
      `SELECT data FROM ${this.schema}.known_objects WHERE kind = $1 AND id = $2 AND organization_id = $3`,
      [kind, id, scope.organizationId],
    )) as Array<{ data: KnownObject }>;
    if (rows[0]) return rows[0].data;
    const fetched = await this.askOwner(kind, publicId, caller);
    if (!fetched) throw missing();
    await this.remember(tx, kind, scope.organizationId, fetched);
    return fetched;
  }

  private async askOwner(kind: DomainObjectKind, publicId: string, caller: CallerIdentity): Promise<KnownObject | null> {
    const owner = this.owners[kind];
    if (!owner) return null;
    let response: Response;
    try {
      const credential = this.credentials.credentialFor(ownerOfKind(kind), caller.organizationPublicId);
      const headers: Record<string, string> = { authorization: `Bearer ${credential}`, accept: 'application/json' };
      // A traced request's fetch gets its traceparent from the fetch instrumentation; an unsampled
      // one has no span for it to start, so its "not sampled" traceparent is added here (else the
      // owner would start, and sample, a trace of its own). A no-op with tracing off.
      if (trace.getSpan(context.active()) === undefined) propagation.inject(context.active(), headers);
      response = await fetch(`${owner}/internal/v1/objects/${encodeURIComponent(publicId)}`, {
        headers,
        signal: AbortSignal.timeout(this.timeoutMs),
      });
    } catch (e) {
      this.logger.warn({ msg: 'owner of a referenced object unreachable', kind, error: String(e) });
      throw ProblemException.unavailable(`The ${kind} service is unavailable; retry shortly.`);
    }
    if (response.status === 404) return null;
    if (response.status !== 200) {
      this.logger.warn({ msg: 'owner of a referenced object answered unexpectedly', kind, status: response.status });
      throw ProblemException.unavailable(`The ${kind} service is unavailable; retry shortly.`);
    }
    return (await response.json()) as KnownObject;
  }
}

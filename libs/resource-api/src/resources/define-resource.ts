import { DomainObjectKind, IdPrefix, Resource, RESOURCE_MANIFEST, resourceServiceIdentity } from '@invoicing/contracts';
import type { ResourceServiceDefinition } from '../bootstrap/resource-service';
import { CREATED_FILTERS } from './list-filter';
import type { ResourceDefinition, ResourceEntityBase } from './resource-definition';

/** What a service writes about its resource: the code. What the resource is comes from the manifest. */
export type ResourceImplementation<E extends ResourceEntityBase, C> = Omit<
  ResourceDefinition<E, C>,
  'resource' | 'kind' | 'idPrefix' | 'createSchema' | 'references'
>;

/**
 * A resource's definition: its identity (kind, id prefix, create schema, references) from the
 * platform manifest in @invoicing/contracts, its behaviour from the service. Its list filters are
 * the `created` range every resource table has (`created_at`), then the service's own.
 */
export function defineResource<E extends ResourceEntityBase, C>(resource: Resource, implementation: ResourceImplementation<E, C>): ResourceDefinition<E, C> {
  const entry = RESOURCE_MANIFEST[resource];
  return {
    resource,
    kind: entry.kind,
    idPrefix: entry.idPrefix as IdPrefix,
    createSchema: entry.createSchema,
    references: [...entry.references] as DomainObjectKind[],
    ...implementation,
    filters: { ...CREATED_FILTERS, ...implementation.filters },
  };
}

/** A resource service: its name, Postgres schema and roles derived from the manifest, plus its tables. */
export function defineResourceService(
  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- definitions differ in entity and body types
  resource: ResourceDefinition<any, any>,
  tables: Pick<ResourceServiceDefinition, 'entities' | 'migrations'>,
): ResourceServiceDefinition {
  const { name, schema, role } = resourceServiceIdentity(resource.resource);
  return { name, schema, role, references: resource.references, ...tables, resource };
}

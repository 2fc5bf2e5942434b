import type { BuildContext, ResourceDefinition, ResourceEntityBase } from './resource-definition';

/**
 * The row a create inserts: what the definition builds from the input, then its identity and owner
 * (`id`, `organizationId` from the caller's scope, `createdAt` = `now`), set here once whatever the
 * definition built, so that tenancy does not depend on each resource remembering it.
 */
export async function buildRow<E extends ResourceEntityBase, C>(def: ResourceDefinition<E, C>, context: BuildContext<C>): Promise<E> {
  const entity = await def.build(context);
  return Object.assign(entity, { id: context.id, organizationId: context.scope.organizationId, createdAt: context.now });
}

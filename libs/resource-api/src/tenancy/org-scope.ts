import { parsePublicId } from '@invoicing/contracts';

declare const ORG_SCOPE: unique symbol;

/**
 * The organization every query of a request is confined to. It can only be made from a verified
 * caller, so a repository method that takes an OrgScope cannot be called without one.
 */
export interface OrgScope {
  readonly organizationUuid: string;
  readonly [ORG_SCOPE]: true;
}

export function orgScopeOf(caller: { organizationId: string }): OrgScope {
  const uuid = parsePublicId('org', caller.organizationId);
  if (!uuid) throw new Error('caller has no valid organization id');
  return { organizationUuid: uuid } as OrgScope;
}

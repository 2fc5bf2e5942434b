declare const ORG_SCOPE: unique symbol;

/**
 * The organization every query of a request is confined to. It can only be made from a verified
 * caller, so a repository method that takes an OrgScope cannot be called without one.
 */
export interface OrgScope {
  /** Organization uuid, as the databases store it (the guard parsed the token's `org_id`). */
  readonly organizationId: string;
  readonly [ORG_SCOPE]: true;
}

export function orgScopeOf(caller: { organizationId: string }): OrgScope {
  return { organizationId: caller.organizationId } as OrgScope;
}

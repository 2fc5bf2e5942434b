import { createParamDecorator, ExecutionContext } from '@nestjs/common';
import type { AddressAllowlist } from '@invoicing/contracts';

/**
 * Who is calling: resolved from a verified access token. Every query is scoped by `organizationId`.
 *
 * The organization id has two forms and one name for each, across the code: `organizationId` is the
 * uuid the databases store, `organizationPublicId` the `org_...` string of the API, the token's
 * `org_id` claim and the events' `organization_id`. The strategy parses the claim once per token.
 */
export interface CallerIdentity {
  /** Organization uuid, as the databases store it. */
  organizationId: string;
  /** The same organization in its public form (`org_...`), as the token and the events carry it. */
  organizationPublicId: string;
  /** API key id (`key_...`), the token's `sub`. */
  apiKeyId: string;
  clientId: string;
  /** Session (refresh-token family) id (`ses_...`). */
  sessionId: string;
  scopes: ReadonlySet<string>;
  tokenId: string;
  /**
   * The verified token itself: the strategy's cache of callers checks it is still the same token.
   * Never forwarded (another service is asked with a service credential) and never logged.
   */
  accessToken: string;
  /** The allowlist the token carries (`allowed_ips`), null when it has none (any address). */
  allowlist: AddressAllowlist | null;
}

/** Handler parameter decorator: the verified {@link CallerIdentity} of the request. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): CallerIdentity => {
  // The request is an HTTP context's first argument (switchToHttp() would build three closures).
  const request = context.getArgByIndex<{ user?: CallerIdentity }>(0);
  if (!request.user) throw new Error('@Caller() used on a route without AccessTokenGuard');
  return request.user;
});

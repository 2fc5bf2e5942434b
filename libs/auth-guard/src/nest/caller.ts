import { createParamDecorator, ExecutionContext } from '@nestjs/common';

/** Who is calling: resolved from a verified access token. Every query is scoped by `organizationId`. */
export interface CallerIdentity {
  /** Organization id (`org_...`). */
  organizationId: string;
  /** API key id (`key_...`), the token's `sub`. */
  apiKeyId: string;
  clientId: string;
  /** Session (refresh-token family) id (`ses_...`). */
  sessionId: string;
  scopes: ReadonlySet<string>;
  tokenId: string;
  /**
   * The verified token itself, for one purpose: a resource service that asks another one whether a
   * referenced object exists forwards it, so the owner answers within the caller's organization.
   * Never log it.
   */
  accessToken: string;
}

/** Handler parameter decorator: the verified {@link CallerIdentity} of the request. */
export const Caller = createParamDecorator((_data: unknown, context: ExecutionContext): CallerIdentity => {
  // The request is an HTTP context's first argument (switchToHttp() would build three closures).
  const request = context.getArgByIndex<{ user?: CallerIdentity }>(0);
  if (!request.user) throw new Error('@Caller() used on a route without AccessTokenGuard');
  return request.user;
});

import { Injectable } from '@nestjs/common';
import { toPublicId } from '@invoicing/contracts';
import { createHash } from 'node:crypto';
import { Clock } from '../../common/clock';
import { AccessTokenSigner } from '../../oauth/access-token-signer';
import type { DashboardUser } from '../dashboard-sessions';
import type { WebhookScope } from './webhook-routes';

/** Lifetime of a forwarded call's access token: one call, a timeout and clock skew, never more. */
export const WEBHOOK_TOKEN_LIFETIME_SECONDS = 60;

/** Prefix of `sid` in these tokens: never `ses_`, so no session revocation of a key can name one. */
export const DASHBOARD_SESSION_ID_PREFIX = 'dsh_';

/**
 * The `sid` of a settings-area session: `dsh_` and 32 hex digits of a SHA-256 of its cookie under a
 * label of its own. It names the session (the same for every call it makes) without being the cookie
 * or the cookie's Redis key (`dash:` + the plain SHA-256), so a token's reader learns neither.
 */
export function dashboardSessionId(sessionCookie: string): string {
  return DASHBOARD_SESSION_ID_PREFIX + createHash('sha256').update(`invoicing dashboard session id v1\n${sessionCookie}`).digest('hex').slice(0, 32);
}

/**
 * Access tokens the auth service mints for itself to call the webhook service on behalf of a
 * signed-in settings-area user (ADR 0038). Signed by AccessTokenSigner with the ring's signing key,
 * so they carry what the resource guard (libs/auth-guard) requires of any access token: `typ`
 * `at+jwt`, HS256 with a known `kid`, `iss` and `aud` of this deployment, and the string claims `sub`,
 * `client_id`, `org_id`, `scope`, `sid`, `jti`. What is particular to them:
 * - `org_id`: the user's organization, so the webhook service scopes every query to it;
 * - `scope`: the one scope the call needs, read: or write:webhook_endpoints, never anything else;
 * - `sub` and `client_id`: the user (`usr_...`), never an API key: the revocation view holds revoked
 *   keys and their watermarks and changed allowlists by `key_` id, so nothing a key's life does can
 *   refuse or restrict these tokens, and an RFC 7009 revocation (which wants `sub` to be the
 *   authenticating key's id) never accepts one;
 * - `sid`: the dashboard session (`dsh_...`), not a refresh family (`ses_...`);
 * - no `allowed_ips`: the user's address is the gateway's concern, and the call comes from here;
 * - `exp`: {@link WEBHOOK_TOKEN_LIFETIME_SECONDS} after `iat` (or the configured lifetime if shorter).
 * The browser never sees one: each is made for one forwarded call and dropped with its answer.
 */
@Injectable()
export class WebhookAccessTokens {
  constructor(
    private readonly signer: AccessTokenSigner,
    private readonly clock: Clock,
  ) {}

  mint(user: DashboardUser, sessionCookie: string, scope: WebhookScope): string {
    const now = this.clock.now();
    const userId = toPublicId('usr', user.userId);
    return this.signer.issue(
      {
        sub: userId,
        client_id: userId,
        org_id: toPublicId('org', user.organizationId),
        scope,
        sid: dashboardSessionId(sessionCookie),
        // The signer's cap for a key's expiry, here the token's own end.
        notAfterMs: now + WEBHOOK_TOKEN_LIFETIME_SECONDS * 1000,
      },
      now,
    ).token;
  }
}

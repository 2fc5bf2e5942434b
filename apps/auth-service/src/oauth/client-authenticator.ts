import { Inject, Injectable } from '@nestjs/common';
import { AddressAllowlist, toPublicId } from '@invoicing/contracts';
import { AuditFailureDigest } from '../audit/failure-digest';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { Clock } from '../common/clock';
import { ApiKeyCache } from '../keys/api-key-cache';
import { ApiKeyEntity, isUsable, livePreviousSecret } from '../keys/api-key.entity';
import { hashCredential, isWellFormedClientId, isWellFormedSecretKey, sameHash } from '../keys/credential-format';
import { ClientAuthThrottle } from './client-auth-throttle';
import { AddressNotAllowed, ClientAuthThrottled, InvalidClient } from './oauth-errors';
import type { ClientCredentials } from './oauth-params';

/** Compared against when the client is unknown, so both paths do the same work. */
const DUMMY_HASH = hashCredential('sk_live_unknown-client');

/** An authenticated client: its key, and the hash of the secret it presented (current or previous). */
export interface AuthenticatedClient {
  key: ApiKeyEntity;
  secretHash: Buffer;
}

/**
 * Client authentication for every endpoint that takes it (the client-credentials grant, the
 * refresh grant when credentials are sent, RFC 7009 revocation): one check, one throttle, one
 * identical 401 for an unknown client, a wrong secret, a revoked key, an expired key and a previous
 * secret whose overlap has ended.
 */
@Injectable()
export class ClientAuthenticator {
  constructor(
    private readonly apiKeys: ApiKeyCache,
    private readonly throttle: ClientAuthThrottle,
    private readonly clock: Clock,
    private readonly failures: AuditFailureDigest,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  /** The usable key the credentials belong to; throws 401 `invalid_client` or 429. */
  async authenticate(credentials: ClientCredentials, address: string): Promise<ApiKeyEntity> {
    return (await this.authenticateSecret(credentials, address)).key;
  }

  /** As {@link authenticate}, also saying which secret was presented (for its last use). */
  async authenticateSecret(credentials: ClientCredentials, address: string): Promise<AuthenticatedClient> {
    const throttleId = isWellFormedClientId(credentials.clientId) ? credentials.clientId : null;
    // Malformed credentials are refused before any store lookup (wrong prefix or checksum).
    const key = throttleId && isWellFormedSecretKey(credentials.clientSecret) ? await this.apiKeys.findByClientId(throttleId) : null;
    const now = this.clock.now();
    const presented = hashCredential(credentials.clientSecret);
    // Both comparisons always run (against a dummy when there is no previous secret), so the time
    // taken says nothing about whether the key has one.
    const previous = key ? livePreviousSecret(key, now) : null;
    const matchesCurrent = sameHash(presented, key?.secretHash ?? DUMMY_HASH);
    const matchesPrevious = sameHash(presented, previous ?? DUMMY_HASH) && previous !== null;
    // A correct secret of a usable key is never refused, throttled address or not (ADR 0022): the
    // address may be shared (a NAT, a cloud egress) with whoever spent its budget, and 256 random
    // bits are not guessed online. Only the failures are throttled, so the throttle is read on the
    // failure path alone: a successful exchange makes no Redis call for it (docs/perf.md).
    if (key && (matchesCurrent || matchesPrevious) && isUsable(key, now)) return { key, secretHash: presented };
    const retryAfter = await this.throttle.retryAfter(throttleId, address);
    if (retryAfter !== null) throw new ClientAuthThrottled(retryAfter);
    const alerted = await this.throttle.recordFailure(throttleId, address);
    if (key) {
      // Every failure of a known key is counted for its window's summary; the alert (failures of one
      // key across addresses reached the threshold; nobody is refused for it, ADR 0022) is recorded
      // once per window, so a Client ID alone cannot add a record a minute (ADR 0035).
      const apiKeyId = toPublicId('key', key.id);
      await this.failures.failed(
        { organizationId: key.organizationId, kind: 'api_key', id: apiKeyId },
        address,
        alerted.length === 0
          ? []
          : [
              {
                type: 'api_key.auth_failures_alert',
                organizationId: key.organizationId,
                actor: { kind: 'system', id: null },
                apiKeyId,
                clientAddress: address,
                data: { failures_across_addresses: alerted[0].limit, window_seconds: this.config.AUTH_THROTTLE_WINDOW_SECONDS },
              },
            ],
      );
    }
    throw InvalidClient.of(credentials.usedBasic);
  }
}

/**
 * The token grants' allowlist check (client_credentials and both refresh paths), made before
 * anything is spent: 400 `unauthorized_client` from an address outside a non-empty `allowed_ips`.
 * `address` is the connection's, or what a trusted proxy forwarded (TRUSTED_PROXIES, ADR 0022).
 */
export function assertAllowedAddress(key: Pick<ApiKeyEntity, 'allowedIps'>, address: string): void {
  if (key.allowedIps.length > 0 && !AddressAllowlist.of(key.allowedIps).allows(address)) throw AddressNotAllowed.of();
}

import { Injectable } from '@nestjs/common';
import { ApiKeyCache } from '../keys/api-key-cache';
import type { ApiKeyEntity } from '../keys/api-key.entity';
import { hashCredential, isWellFormedClientId, isWellFormedSecretKey, sameHash } from '../keys/credential-format';
import { ClientAuthThrottle } from './client-auth-throttle';
import { OAuthError } from './oauth-error';
import type { ClientCredentials } from './token-request';

/** Compared against when the client is unknown, so both paths do the same work. */
const DUMMY_HASH = hashCredential('sk_live_unknown-client');

/**
 * Client authentication for every endpoint that takes it (the client-credentials grant, the
 * refresh grant when credentials are sent, RFC 7009 revocation): one check, one throttle, one
 * identical 401 for an unknown client, a wrong secret and a revoked key.
 */
@Injectable()
export class ClientAuthenticator {
  constructor(
    private readonly apiKeys: ApiKeyCache,
    private readonly throttle: ClientAuthThrottle,
  ) {}

  /** The active key the credentials belong to; throws 401 `invalid_client` or 429. */
  async authenticate(credentials: ClientCredentials, address: string): Promise<ApiKeyEntity> {
    const throttleId = isWellFormedClientId(credentials.clientId) ? credentials.clientId : null;
    // Malformed credentials are refused before any store lookup (wrong prefix or checksum). The
    // throttle and the key are read at once; a throttled caller is refused whatever the key says.
    const [, key] = await Promise.all([
      this.throttle.check(throttleId, address),
      throttleId && isWellFormedSecretKey(credentials.clientSecret) ? this.apiKeys.findByClientId(throttleId) : null,
    ]);
    const presented = hashCredential(credentials.clientSecret);
    const matches = sameHash(presented, key?.secretHash ?? DUMMY_HASH);
    if (!key || !matches || key.status !== 'active') {
      await this.throttle.recordFailure(throttleId, address);
      throw OAuthError.invalidClient(credentials.usedBasic);
    }
    return key;
  }
}

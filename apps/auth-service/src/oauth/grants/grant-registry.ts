import { Injectable } from '@nestjs/common';
import { UnsupportedGrantType } from '../oauth-errors';
import { asParams, required } from '../oauth-params';
import type { TokenResponse } from '../token-pair';
import type { Grant } from './grant';
import { ClientCredentialsGrant } from './client-credentials.grant';
import { RefreshTokenGrant } from './refresh-token.grant';

/**
 * The token endpoint's grants by `grant_type`. Adding one is a file in `grants/` and a line here;
 * RFC 8414 metadata lists them (`grant_types_supported`), checked against this registry's in its spec.
 */
@Injectable()
export class GrantRegistry {
  private readonly grants: ReadonlyMap<string, Grant>;

  constructor(clientCredentials: ClientCredentialsGrant, refreshToken: RefreshTokenGrant) {
    this.grants = new Map<string, Grant>([clientCredentials, refreshToken].map((grant) => [grant.grantType, grant]));
  }

  /** The grant types this endpoint answers, in registration order. */
  get grantTypes(): string[] {
    return [...this.grants.keys()];
  }

  /** A token request: its `grant_type` picks the grant, which reads the rest. */
  handle(body: unknown, authorization: string | undefined, address: string): Promise<TokenResponse> {
    const params = asParams(body);
    const grant = this.grants.get(required(params, 'grant_type'));
    if (!grant) throw new UnsupportedGrantType('The grant_type must be client_credentials or refresh_token.');
    return grant.handle(params, authorization, address);
  }
}

import { Inject, Injectable } from '@nestjs/common';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { OAuthError } from './oauth-error';
import { FailureThrottle, ThrottleSubject } from '../sessions/failure-throttle';

/** Failed client authentications on the token endpoint, per client id and per address. */
@Injectable()
export class ClientAuthThrottle {
  constructor(
    private readonly throttle: FailureThrottle,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  private subjects(clientId: string | null, address: string): ThrottleSubject[] {
    const subjects = [{ key: `ip:${address}`, limit: this.config.AUTH_THROTTLE_MAX_FAILURES_PER_ADDRESS }];
    if (clientId) subjects.push({ key: `cl:${clientId}`, limit: this.config.AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT });
    return subjects;
  }

  /** Throws 429 (RFC 6749 form, with Retry-After) when the client or the address is over its limit. */
  async check(clientId: string | null, address: string): Promise<void> {
    const retryAfter = await this.throttle.retryAfter(this.subjects(clientId, address));
    if (retryAfter !== null) {
      throw new OAuthError(429, 'temporarily_unavailable', `Too many failed client authentications; retry in ${retryAfter} seconds.`, {
        'Retry-After': String(retryAfter),
      });
    }
  }

  recordFailure(clientId: string | null, address: string): Promise<void> {
    return this.throttle.recordFailure(this.subjects(clientId, address), this.config.AUTH_THROTTLE_WINDOW_SECONDS);
  }
}

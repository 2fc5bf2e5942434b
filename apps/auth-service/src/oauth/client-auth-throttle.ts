import { Inject, Injectable } from '@nestjs/common';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { throttleAddress } from '../common/throttle-address';
import { FailureThrottle, ThrottlePolicy, ThrottleSubject } from '../sessions/failure-throttle';

/**
 * Failed client authentications on the token endpoints (ADR 0022). What refuses is counted per
 * client at one address and per address, and it refuses only further failures (a correct secret
 * always passes): a stranger who knows a Client ID (it is in every access token) can exhaust only
 * their own budget, never the owner's. Failures per client across all addresses are watched, not
 * enforced: crossing the threshold is an alert. A Secret Key carries 256 bits, so guessing it is
 * not the threat this guards against; noise and lockout are.
 */
@Injectable()
export class ClientAuthThrottle {
  constructor(
    private readonly throttle: FailureThrottle,
    @Inject(AUTH_CONFIG) private readonly config: AuthConfig,
  ) {}

  private policy(clientId: string | null, ip: string): ThrottlePolicy {
    const address = throttleAddress(ip);
    const perAddress = { key: `ip:${address}`, limit: this.config.AUTH_THROTTLE_MAX_FAILURES_PER_ADDRESS };
    const windowSeconds = this.config.AUTH_THROTTLE_WINDOW_SECONDS;
    if (!clientId) return { refuse: [perAddress], windowSeconds };
    return {
      refuse: [perAddress, { key: `cl-ip:${clientId}:${address}`, limit: this.config.AUTH_THROTTLE_MAX_FAILURES_PER_CLIENT_ADDRESS }],
      watch: [{ key: `cl:${clientId}`, limit: this.config.AUTH_THROTTLE_ALERT_FAILURES_PER_CLIENT }],
      windowSeconds,
    };
  }

  /** Seconds until this client at this address, and this address, may fail again; null when neither is over its limit. */
  retryAfter(clientId: string | null, ip: string): Promise<number | null> {
    return this.throttle.retryAfter(this.policy(clientId, ip));
  }

  /** Counts a failure; answers the watched subjects (the client across addresses) it took to their alert. */
  recordFailure(clientId: string | null, ip: string): Promise<ThrottleSubject[]> {
    return this.throttle.recordFailure(this.policy(clientId, ip));
  }
}

import { Inject, Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { AUTH_CONFIG, AuthConfig } from '../config/config';
import { ApiKeyCache } from '../keys/api-key-cache';
import { REDIS } from '../sessions/session-store';
import type { RedisClient } from '../sessions/redis-connection';

/** Every instance says it is there this often, on the channel itself. */
const HEARTBEAT_MS = 1000;
/** Hearing nothing for this long (not even its own heartbeat), an instance stops trusting its cache. */
const SILENCE_MS = 3000;
const HEARTBEAT = '-';

/**
 * Tells every auth-service instance that a key changed in place (a roll, a new allowlist, a new
 * name), so that none keeps serving it from its {@link ApiKeyCache}: a Redis channel, published to
 * after the change commits. Each instance subscribes on a connection of its own and trusts its
 * cache only while it is provably listening: subscribed, and hearing the channel, where every
 * instance (itself included) publishes a heartbeat each second. A subscription can go deaf without
 * a 'close' (a half-open connection, a Redis Cluster client moving it to another node); three
 * silent seconds and the cache is not trusted until the channel is heard again, from an empty
 * cache, so a message missed meanwhile is never served stale.
 */
@Injectable()
export class ApiKeyChanges implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(ApiKeyChanges.name);
  private readonly channel: string;
  private subscriber: RedisClient | null = null;
  private timer: NodeJS.Timeout | null = null;
  private heardAt = 0;
  private listening = false;

  constructor(
    @Inject(REDIS) private readonly redis: RedisClient,
    @Inject(AUTH_CONFIG) config: AuthConfig,
    private readonly cache: ApiKeyCache,
  ) {
    this.channel = `${config.REDIS_KEY_PREFIX}api-key-changed`;
  }

  onApplicationBootstrap(): void {
    const subscriber = this.redis.duplicate();
    this.subscriber = subscriber;
    subscriber.on('message', (channel: string, message: string) => {
      if (channel !== this.channel) return;
      this.heard();
      if (message !== HEARTBEAT) this.cache.forgetId(message);
    });
    // Subscribed again on every (re)connection; trusted once the channel is heard (heard()).
    subscriber.on('ready', () => {
      subscriber.subscribe(this.channel).then(
        () => this.heard(),
        (e: unknown) => this.logger.warn({ msg: 'cannot subscribe to key changes; reading keys from Postgres', error: String(e) }),
      );
    });
    subscriber.on('close', () => this.deaf());
    // Connection errors surface as 'close' (and the main client's own errors); no log line per retry.
    subscriber.on('error', () => undefined);
    this.timer = setInterval(() => {
      if (this.listening && Date.now() - this.heardAt > SILENCE_MS) this.deaf();
      this.redis.publish(this.channel, HEARTBEAT).catch(() => undefined);
    }, HEARTBEAT_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    // Stopping is no outage: trust ends without the warning.
    this.listening = false;
    this.cache.setTrusted(false);
    await this.subscriber?.quit().catch(() => undefined);
  }

  /** The channel is heard: after a silence, trust starts again from an empty cache. */
  private heard(): void {
    this.heardAt = Date.now();
    if (!this.listening) {
      this.listening = true;
      this.cache.setTrusted(true);
    }
  }

  private deaf(): void {
    if (this.listening) this.logger.warn({ msg: 'not hearing key changes; reading keys from Postgres until the channel is heard again' });
    this.listening = false;
    this.cache.setTrusted(false);
  }

  /**
   * Announces a committed change of the key (by uuid); this instance forgets it at once. Never
   * throws: when Redis cannot take the message, the other instances serve the old entry for at most
   * the cache's lifetime (30 s), which the caller is told through the log.
   */
  async announce(key: { id: string; clientId: string }): Promise<void> {
    this.cache.forget(key);
    try {
      await this.redis.publish(this.channel, key.id);
    } catch (e) {
      this.logger.warn({ msg: 'could not announce a key change; other instances may serve the old key for up to 30 s', api_key_id: key.id, error: String(e) });
    }
  }
}

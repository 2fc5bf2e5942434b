import { Controller, Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { EventPattern } from '@nestjs/microservices';
import { ACCESS_TOKEN_TTL_SECONDS, API_KEY_EXPIRING_V1, REVOCATION_EVENT_SCHEMAS, REVOCATIONS_TOPIC, validateAuthTopicEvent } from '@invoicing/contracts';
import { IncomingMessage, jsonValueOf, KafkaEventTransport, ReplaySubscriptionState } from '@invoicing/event-bus';
import { hostname } from 'node:os';
import { RevocationView } from './revocation-view';

/** Where the feed reads from is the transport's (`EventBusModule.forRoot({ brokers })`). */
export interface RevocationFeedOptions {
  /** Service name; the consumer group is `<service>.<hostname>.<pid>`: one per instance. */
  service: string;
  /** Bounds how long a revocation waits in the broker for a fetch; default 100 ms. */
  maxWaitTimeInMs?: number;
  /** How far back a starting instance replays; default: the access-token lifetime plus 5 minutes. */
  replayWindowMs?: number;
  /**
   * How long the view may go without news from the broker before the instance stops vouching for
   * tokens (ADR 0017); default {@link DEFAULT_REVOCATION_MAX_STALENESS_MS}.
   */
  maxStalenessMs?: number;
}

/** ADR 0017: 30 s, well past an idle fetch (100 ms) and a consumer's relaunch, within a broker restart. */
export const DEFAULT_REVOCATION_MAX_STALENESS_MS = 30_000;

/**
 * Keeps a {@link RevocationView} current from `auth.revocations.v1`, through the service's Kafka
 * transport: an `every-instance` subscription (its own consumer group, the replay window at start)
 * whose messages reach {@link RevocationFeedController}. Starting never blocks the app: the
 * transport retries until the broker answers, and `ready` stays false until the replay has caught
 * up, so the instance does not take traffic while it could still accept a revoked token.
 *
 * Fails closed afterwards (ADR 0017): once the view has gone longer than `maxStalenessMs` without
 * news from the broker (no completed fetch, see `KafkaReplayingSubscriber.upToDateAt`) it is
 * {@link stale}: `ready` turns false and the guard answers 503 to tokens it cannot vouch for. The
 * first fetch that completes again ends it; nothing needs a restart.
 */
export class RevocationFeed implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RevocationFeed.name);
  private readonly subscription: ReplaySubscriptionState;
  private pruning: NodeJS.Timeout | null = null;
  private watching: NodeJS.Timeout | null = null;
  private staleSince: number | null = null;
  private overflowed = false;
  private readonly unknownTypes = new Set<string>();
  readonly maxStalenessMs: number;

  constructor(
    private readonly view: RevocationView,
    transport: KafkaEventTransport,
    options: RevocationFeedOptions,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.maxStalenessMs = options.maxStalenessMs ?? DEFAULT_REVOCATION_MAX_STALENESS_MS;
    this.subscription = transport.subscribe({
      topic: REVOCATIONS_TOPIC,
      delivery: 'every-instance',
      clientId: `${options.service}-revocations`,
      groupId: `${options.service}.${hostname()}.${process.pid}`,
      replayWindowMs: options.replayWindowMs ?? (ACCESS_TOKEN_TTL_SECONDS + 300) * 1000,
      maxWaitTimeInMs: options.maxWaitTimeInMs ?? 100,
      now: this.now,
    });
  }

  /** Caught up with the replay at start, not {@link stale} and not past its bounds: the readiness check. */
  get ready(): boolean {
    return this.subscription.caughtUp && !this.stale && !this.view.overflowed;
  }

  /**
   * True when the view, once caught up, has had no news from the broker for longer than
   * `maxStalenessMs`: a revocation could have been published that this instance has not seen.
   * Before the first catch-up it is false (`ready` covers start-up). Checked on every request that
   * presents a valid token: one clock read.
   */
  get stale(): boolean {
    const at = this.subscription.upToDateAt;
    return at !== null && this.now() - at > this.maxStalenessMs;
  }

  /** Milliseconds since the view was last known up to date; null before the first catch-up. */
  get stalenessMs(): number | null {
    const at = this.subscription.upToDateAt;
    return at === null ? null : Math.max(0, this.now() - at);
  }

  onApplicationBootstrap(): void {
    this.pruning = setInterval(() => this.view.prune(), 60_000);
    this.pruning.unref();
    // Only to tell operators when the view goes stale and when it recovers: requests and the
    // readiness check read `stale` themselves, at the time they run.
    this.watching = setInterval(() => this.watch(), 1000);
    this.watching.unref();
  }

  /** The consumer itself is stopped by the transport, when the app closes. */
  onModuleDestroy(): void {
    if (this.pruning) clearInterval(this.pruning);
    if (this.watching) clearInterval(this.watching);
  }

  /** Logs each change between fresh and stale, once; and between within and past the view's bounds. */
  private watch(): void {
    const overflowed = this.view.overflowed;
    if (overflowed !== this.overflowed) {
      this.overflowed = overflowed;
      if (overflowed) this.logger.error({ msg: 'revocation view past its bound on keys: not ready, answering 503 to access tokens until entries expire', size: this.view.size });
      else this.logger.log({ msg: 'revocation view back within its bounds: accepting access tokens again' });
    }
    const stale = this.stale;
    if (stale && this.staleSince === null) {
      this.staleSince = this.now();
      this.logger.warn({
        msg: 'revocation feed stale: no news from Kafka for longer than the bound; not ready, answering 503 to access tokens until it recovers',
        staleness_ms: this.stalenessMs,
        max_staleness_ms: this.maxStalenessMs,
      });
    } else if (!stale && this.staleSince !== null) {
      this.logger.log({
        msg: 'revocation feed recovered: accepting access tokens again',
        refused_for_ms: this.now() - this.staleSince,
      });
      this.staleSince = null;
    }
  }

  /** Applies one message of the topic (from {@link RevocationFeedController}); never throws. */
  handle(message: IncomingMessage): void {
    const value = jsonValueOf(message);
    // Reasons open: a revocation for a reason added after this build is still applied (ADR 0016).
    const result = validateAuthTopicEvent(value, { openReasons: true });
    if (!result.ok) {
      const type = (value as { type?: unknown } | null)?.type;
      if (typeof type === 'string' && !Object.hasOwn(REVOCATION_EVENT_SCHEMAS, type)) {
        // A type this version does not know (a newer auth service's): skipped, said once per type.
        if (!this.unknownTypes.has(type) && this.unknownTypes.size < 100) {
          this.unknownTypes.add(type);
          this.logger.warn({ msg: 'skipping events of a type this service does not know', type });
        }
        return;
      }
      this.logger.error({ msg: 'revocation message rejected', partition: message.partition, offset: message.offset, errors: result.errors });
      return;
    }
    const event = result.value;
    // A notice for the key's owner (its expiry is near): nothing for a token verifier to do.
    if (event.type === API_KEY_EXPIRING_V1) return;
    const watermarks = this.view.size.watermarks;
    this.view.apply(event);
    if (this.view.size.watermarks > watermarks) {
      // Past a bound of the view: the key's earlier tokens are all refused (RevocationView).
      this.logger.warn({ msg: "revocations of a key past the view's bound: every token of the key issued before it is refused", api_key_id: event.data.api_key_id, size: this.view.size });
    }
    // Live revocations are rare: a line each, with how long after the revocation it took effect
    // here (the replay at start is not logged line by line).
    if (!this.ready) return;
    const at = 'revoked_at' in event.data ? event.data.revoked_at : event.data.changed_at;
    this.logger.log({
      msg: 'revocation applied',
      event_id: event.id,
      type: event.type,
      api_key_id: event.data.api_key_id,
      sessions: 'session_ids' in event.data ? event.data.session_ids.length : undefined,
      lag_ms: Date.now() - Date.parse(at),
    });
  }
}

/**
 * The feed's handler: the transport hands it every message of `auth.revocations.v1`, one at a time
 * and in order; {@link RevocationFeed} owns the subscription and the view.
 */
@Controller()
export class RevocationFeedController {
  constructor(private readonly feed: RevocationFeed) {}

  // No parameter decorator: Nest then hands the transport's arguments (the message first) straight
  // to the method and skips its pipes step, a few microseconds a revocation.
  @EventPattern(REVOCATIONS_TOPIC)
  apply(message: IncomingMessage): void {
    this.feed.handle(message);
  }
}

import { Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { ACCESS_TOKEN_TTL_SECONDS, REVOCATIONS_TOPIC, validateRevocationEvent } from '@invoicing/contracts';
import { createKafka, IncomingMessage, KafkaReplayingSubscriber } from '@invoicing/event-bus';
import { hostname } from 'node:os';
import { RevocationView } from './revocation-view';

export interface RevocationFeedOptions {
  brokers: string[];
  /** Service name; the consumer group is `<service>.<hostname>.<pid>`: one per instance. */
  service: string;
  /** Bounds how long a revocation waits in the broker for a fetch; default 100 ms. */
  maxWaitTimeInMs?: number;
  /** How far back a starting instance replays; default: the access-token lifetime plus 5 minutes. */
  replayWindowMs?: number;
}

/**
 * Keeps a {@link RevocationView} current from `auth.revocations.v1`. Starting never blocks the app:
 * it retries until the broker answers, and `ready` stays false until the replay has caught up, so
 * the instance does not take traffic while it could still accept a revoked token.
 */
export class RevocationFeed implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(RevocationFeed.name);
  private subscriber: KafkaReplayingSubscriber | null = null;
  private retry: NodeJS.Timeout | null = null;
  private pruning: NodeJS.Timeout | null = null;
  private stopped = false;
  private rejected = 0;

  constructor(
    private readonly view: RevocationView,
    private readonly options: RevocationFeedOptions,
  ) {}

  get ready(): boolean {
    return this.subscriber?.caughtUp ?? false;
  }

  /** Messages refused because they failed their schema (they are logged, never applied half-way). */
  get rejectedMessages(): number {
    return this.rejected;
  }

  onApplicationBootstrap(): void {
    this.pruning = setInterval(() => this.view.prune(), 60_000);
    this.pruning.unref();
    void this.connect();
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.retry) clearTimeout(this.retry);
    if (this.pruning) clearInterval(this.pruning);
    await this.subscriber?.stop();
  }

  private async connect(): Promise<void> {
    if (this.stopped) return;
    const kafka = createKafka({
      brokers: this.options.brokers,
      clientId: `${this.options.service}-revocations`,
      log: (level, message, extra) => this.logger[level]({ msg: `kafka: ${message}`, ...extra }),
    });
    const subscriber = new KafkaReplayingSubscriber(kafka, {
      topic: REVOCATIONS_TOPIC,
      groupId: `${this.options.service}.${hostname()}.${process.pid}`,
      replayWindowMs: this.options.replayWindowMs ?? (ACCESS_TOKEN_TTL_SECONDS + 300) * 1000,
      maxWaitTimeInMs: this.options.maxWaitTimeInMs ?? 100,
      handle: (m) => this.handle(m),
    });
    try {
      await subscriber.start();
      this.subscriber = subscriber;
      this.logger.log('revocation feed started');
    } catch (e) {
      await subscriber.stop();
      this.logger.warn({ msg: 'revocation feed cannot reach Kafka yet; retrying', error: String(e) });
      this.retry = setTimeout(() => void this.connect(), 2000);
    }
  }

  private handle(message: IncomingMessage): void {
    let decoded: unknown;
    try {
      decoded = JSON.parse(message.value?.toString('utf8') ?? 'null');
    } catch {
      decoded = undefined;
    }
    const result = validateRevocationEvent(decoded);
    if (!result.ok) {
      this.rejected += 1;
      this.logger.error({ msg: 'revocation message rejected', partition: message.partition, offset: message.offset, errors: result.errors });
      return;
    }
    this.view.apply(result.value);
    // Live revocations are rare: a line each, with how long after the revocation it took effect
    // here (the replay at start is not logged line by line).
    if (this.ready) this.logger.log({
      msg: 'revocation applied',
      event_id: result.value.id,
      type: result.value.type,
      api_key_id: result.value.data.api_key_id,
      sessions: result.value.data.session_ids.length,
      lag_ms: Date.now() - Date.parse(result.value.data.revoked_at),
    });
  }
}

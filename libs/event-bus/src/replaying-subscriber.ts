import type { Consumer, Kafka } from 'kafkajs';
import { relaunchAfterFatalCrash } from './kafka-client';

export interface IncomingMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  timestamp: number;
}

export interface ReplayingSubscriberOptions {
  topic: string;
  /**
   * Consumer group of this instance. Every instance needs its own group so that each one sees every
   * message (a shared group would split partitions between instances).
   */
  groupId: string;
  /** Replay every message newer than this many milliseconds when the instance starts. */
  replayWindowMs: number;
  /** Upper bound on how long the broker holds a fetch open when there is no data: bounds delivery latency. */
  maxWaitTimeInMs: number;
  handle(message: IncomingMessage): Promise<void> | void;
  now?: () => number;
}

/**
 * Subscribes one instance to a topic from "now minus the replay window" and reports when it has
 * consumed everything that was on the topic when it started (`caughtUp`). Offsets are committed to
 * the instance's own group, so a consumer restarted by kafkajs after a broker outage resumes where
 * it stopped instead of skipping what was published meanwhile.
 */
export class KafkaReplayingSubscriber {
  private consumer: Consumer | null = null;
  private readonly targets = new Map<number, bigint>();
  private caughtUpAt: number | null = null;
  private lastMessageAt: number | null = null;
  private stopped = true;

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ReplayingSubscriberOptions,
  ) {}

  /** True once every partition has been consumed up to its end offset at start. Stays true. */
  get caughtUp(): boolean {
    return this.caughtUpAt !== null;
  }

  get lastMessageTime(): number | null {
    return this.lastMessageAt;
  }

  /**
   * Connects, positions each partition at the start of the replay window and starts consuming.
   * Resolves once consumption runs; poll {@link caughtUp} for readiness. Throws when the broker is
   * unreachable, so the caller can retry.
   */
  async start(): Promise<void> {
    const { starts, ends } = await this.windowOffsets();
    for (const e of ends) this.targets.set(e.partition, BigInt(e.high));
    for (const s of starts) {
      if (BigInt(s.offset) >= (this.targets.get(s.partition) ?? 0n)) this.targets.delete(s.partition);
    }
    this.checkCaughtUp();
    this.stopped = false;
    await this.launch(starts);
  }

  /** Where the replay window starts in each partition, and where each partition ends now. */
  private async windowOffsets(): Promise<{ starts: Array<{ partition: number; offset: string }>; ends: Array<{ partition: number; high: string }> }> {
    const now = (this.options.now ?? Date.now)();
    const admin = this.kafka.admin();
    await admin.connect();
    try {
      const ends = await admin.fetchTopicOffsets(this.options.topic);
      const starts = await admin.fetchTopicOffsetsByTimestamp(this.options.topic, now - this.options.replayWindowMs);
      return { starts, ends };
    } finally {
      await admin.disconnect();
    }
  }

  private async launch(starts: Array<{ partition: number; offset: string }>): Promise<void> {
    const { topic } = this.options;
    const consumer = this.kafka.consumer({
      groupId: this.options.groupId,
      maxWaitTimeInMs: this.options.maxWaitTimeInMs,
      sessionTimeout: 10000,
      heartbeatInterval: 1000,
      allowAutoTopicCreation: false,
    });
    this.consumer = consumer;
    // A consumer kafkajs gives up on is started again from the start of the replay window, as a
    // new instance would be: whatever was published meanwhile is applied (again, harmlessly:
    // applying a revocation twice changes nothing), so the view cannot silently stop.
    relaunchAfterFatalCrash(
      consumer,
      { isCurrent: (c) => this.consumer === c, isStopped: () => this.stopped },
      async () => {
        await consumer.disconnect().catch(() => undefined);
        await this.launch((await this.windowOffsets()).starts);
      },
    );
    try {
      await consumer.connect();
      await consumer.subscribe({ topics: [topic], fromBeginning: false });
      await consumer.run({
        autoCommit: true,
        autoCommitInterval: 1000,
        eachMessage: async ({ topic: t, partition, message }) => {
          await this.options.handle({
            topic: t,
            partition,
            offset: message.offset,
            key: message.key ? message.key.toString() : null,
            value: message.value,
            timestamp: Number(message.timestamp),
          });
          this.lastMessageAt = Date.now();
          const target = this.targets.get(partition);
          if (target !== undefined && BigInt(message.offset) + 1n >= target) {
            this.targets.delete(partition);
            this.checkCaughtUp();
          }
        },
      });
      await this.seekWhenReady(consumer, starts);
    } catch (e) {
      // Connecting or joining failed: leave nothing half-open behind (start() or a relaunch retries).
      await consumer.disconnect().catch(() => undefined);
      throw e;
    }
  }

  /**
   * `run()` can resolve before kafkajs has set up the consumer group, and `seek()` throws until it
   * has; retry briefly rather than race it.
   */
  private async seekWhenReady(consumer: Consumer, starts: Array<{ partition: number; offset: string }>): Promise<void> {
    const deadline = Date.now() + 15000;
    for (;;) {
      try {
        for (const s of starts) consumer.seek({ topic: this.options.topic, partition: s.partition, offset: s.offset });
        return;
      } catch (e) {
        if (!/not initialized/i.test(String(e)) || Date.now() > deadline) throw e;
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    const consumer = this.consumer;
    this.consumer = null;
    if (consumer) await consumer.disconnect().catch(() => undefined);
  }

  private checkCaughtUp(): void {
    if (this.caughtUpAt === null && this.targets.size === 0) this.caughtUpAt = Date.now();
  }
}

import type { Consumer, Kafka } from 'kafkajs';
import { IncomingMessage, runConsumer, Subscription, subscriptionConsumer } from './kafka-client';

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
 * consumed everything that was on the topic when it started (`caughtUp`), and when it last knew
 * itself up to date with the topic (`upToDateAt`). Offsets are committed to the instance's own
 * group, so a consumer restarted by kafkajs after a broker outage resumes where it stopped instead
 * of skipping what was published meanwhile.
 */
export class KafkaReplayingSubscriber {
  private consumer: Consumer | null = null;
  /**
   * Partitions the current consumer has still to read up to the end offset they had when it was
   * positioned (at start, and again at each relaunch). Empty: the consumer is up to date.
   */
  private readonly targets = new Map<number, bigint>();
  private caughtUpAt: number | null = null;
  private upToDate: number | null = null;
  private stopped = true;
  private readonly subscription: Subscription = { isCurrent: (c) => this.consumer === c, isStopped: () => this.stopped };

  constructor(
    private readonly kafka: Kafka,
    private readonly options: ReplayingSubscriberOptions,
  ) {}

  /** True once every partition has been consumed up to its end offset at start. Stays true. */
  get caughtUp(): boolean {
    return this.caughtUpAt !== null;
  }

  /**
   * The last time (ms since the epoch, by `options.now`) the subscriber heard from the broker while
   * up to date with the topic: a fetch of the current consumer completed (kafkajs' `consumer.fetch`
   * instrumentation event, emitted after every fetch, an empty one included, so an idle healthy
   * consumer refreshes it about every `maxWaitTimeInMs`), a message was delivered, or the consumer
   * finished reading up to the end offsets it was positioned against. Null until {@link caughtUp}.
   * A consumer started again after a fatal crash counts only once it has caught up with the end
   * offsets seen at its relaunch, so a replay after an outage does not pass for freshness.
   * `now - upToDateAt` is how stale the subscriber's view of the topic may be.
   */
  get upToDateAt(): number | null {
    return this.upToDate;
  }

  /**
   * Connects, positions each partition at the start of the replay window and starts consuming.
   * Resolves once consumption runs; poll {@link caughtUp} for readiness. Throws when the broker is
   * unreachable, so the caller can retry.
   */
  async start(): Promise<void> {
    const starts = await this.position();
    this.stopped = false;
    await this.launch(starts);
  }

  /**
   * Where the next consumer starts (the start of the replay window in each partition), and what it
   * must read before it is up to date again (each partition's end offset now).
   */
  private async position(): Promise<Array<{ partition: number; offset: string }>> {
    const { starts, ends } = await this.windowOffsets();
    this.targets.clear();
    for (const e of ends) this.targets.set(e.partition, BigInt(e.high));
    for (const s of starts) {
      if (BigInt(s.offset) >= (this.targets.get(s.partition) ?? 0n)) this.targets.delete(s.partition);
    }
    this.checkCaughtUp();
    return starts;
  }

  /** Where the replay window starts in each partition, and where each partition ends now. */
  private async windowOffsets(): Promise<{ starts: Array<{ partition: number; offset: string }>; ends: Array<{ partition: number; high: string }> }> {
    const now = this.now();
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
    // A consumer kafkajs gives up on is started again from the start of the replay window, as a
    // new instance would be: whatever was published meanwhile is applied (again, harmlessly:
    // applying a revocation twice changes nothing), so the view cannot silently stop. Until it has
    // read up to the end offsets of its relaunch, its fetches do not count as up to date.
    const consumer = subscriptionConsumer(this.kafka, this.options, this.subscription, async () => this.launch(await this.position()));
    this.consumer = consumer;
    // Every completed fetch, empty or not, is the broker answering this consumer. kafkajs keeps
    // the listener across the restarts it does itself; a relaunched consumer registers its own.
    consumer.on(consumer.events.FETCH, () => {
      if (this.consumer === consumer && this.targets.size === 0) this.upToDate = this.now();
    });
    // Each partition is sought to the start of the replay window once the consumer runs. A new
    // group's partitions start where `fromBeginning` says until the seek lands, and kafkajs can
    // apply its own lookup of that position after our seek: with `false` (the end) a partition then
    // skipped its whole replay and the view never caught up (seen on a three-broker cluster, where
    // the lookup is slower; docs/resilience.md, item 11). With `true` (runConsumer) the worst case
    // reads the partition from its beginning: a little more than the window (retention is twice the
    // window), never less.
    await runConsumer(consumer, {
      topic: this.options.topic,
      groupId: this.options.groupId,
      autoCommitInterval: 1000,
      handle: async (message) => {
        try {
          await this.options.handle(message);
        } catch (e) {
          throw handlerFailure(message, e);
        }
      },
      handled: (partition, offset) => {
        if (this.consumer !== consumer) return;
        const target = this.targets.get(partition);
        if (target !== undefined && BigInt(offset) + 1n >= target) this.targets.delete(partition);
        this.checkCaughtUp();
      },
      running: () => this.seekWhenReady(consumer, starts),
    });
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

  /** Called whenever the consumer may have read up to its targets: marks it caught up and up to date. */
  private checkCaughtUp(): void {
    if (this.targets.size > 0) return;
    const now = this.now();
    if (this.caughtUpAt === null) this.caughtUpAt = now;
    this.upToDate = now;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }
}

/**
 * A handler that failed stops the consumer, and the subscription starts again from its replay window
 * (`relaunchAfterFatalCrash`), counting as up to date only once it has handled every message up to
 * the end offsets of that relaunch, the failed one included. Were the failure retriable, kafkajs would
 * fetch the message again and again, and restart the consumer itself, and every one of those fetches
 * would count as fresh: a view stuck behind a message it cannot apply would still vouch for tokens
 * (ADR 0017 wants it to fail closed). `retriable: false` makes kafkajs give up on the consumer at once.
 */
function handlerFailure(message: IncomingMessage, cause: unknown): Error {
  const said = cause instanceof Error ? cause.message : String(cause);
  return Object.assign(new Error(`handler of ${message.topic} failed at partition ${message.partition}, offset ${message.offset}: ${said}`), {
    name: 'KafkaHandlerFailure',
    retriable: false,
    cause,
  });
}

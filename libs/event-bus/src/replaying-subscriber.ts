import type { Admin, Consumer, Kafka } from 'kafkajs';
import { CONSUMER_RELAUNCH_DELAY_MS, IncomingMessage, runConsumer, Subscription, subscriptionConsumer } from './kafka-client';

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
  /**
   * How often the subscriber asks the brokers where each partition ends, to prove its view current
   * (a checkpoint, see {@link KafkaReplayingSubscriber.upToDateAt}); default
   * {@link DEFAULT_CHECKPOINT_INTERVAL_MS}. A healthy idle view is at most about this stale.
   */
  checkpointIntervalMs?: number;
  /**
   * A checkpoint the brokers answered but the consumer has not read up to for this long means the
   * consumer is stuck (kafkajs can stop fetching one broker's partitions after that broker comes
   * back, and keep fetching the others'): it is replaced by a new one from the replay window.
   * Default {@link DEFAULT_STUCK_AFTER_MS}.
   */
  stuckAfterMs?: number;
  /** Told when a stuck consumer is replaced: the partitions it had not read up to, and for how long. */
  onStuck?(stuck: { behind: Array<{ partition: number; position: string; end: string }>; sinceMs: number }): void;
}

/** One checkpoint a second: two ListOffsets requests per partition leader. */
export const DEFAULT_CHECKPOINT_INTERVAL_MS = 1000;
/**
 * Far past a healthy consumer's lag behind an answered checkpoint (a fetch waits at most
 * `maxWaitTimeInMs`, 100 ms), and short enough that a replaced consumer has read a revocation well
 * within the 30 s bound of ADR 0017: in the three-broker trial, consumers that kafkajs restarted
 * after a broker's kill stalled on some partitions for good, and replacing them after 12 s brought
 * the worst refusal to 30.2 s.
 */
export const DEFAULT_STUCK_AFTER_MS = 5_000;
/** A consumer that has not yet read up to the offsets it was positioned against is judged stuck only this long after its launch (a replay, a group join). */
const REPLAY_GRACE_MS = 30_000;
/** How long a replacement waits for the consumer it replaces to leave its group. */
const DISCONNECT_WAIT_MS = 5_000;
/** Checkpoints awaiting the consumer at most: a lagging consumer keeps the oldest ones it has not reached. */
const MAX_PENDING_CHECKPOINTS = 16;

/** Where every partition ended when the brokers were asked, at `askedAt` (before the request left). */
interface Checkpoint {
  askedAt: number;
  answeredAt: number;
  ends: Map<number, bigint>;
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
  /** The next offset the current consumer has to handle, per partition (from its start position on). */
  private readonly positions = new Map<number, bigint>();
  /** Checkpoints asked and answered that the consumer has not read up to yet, oldest first. */
  private pending: Checkpoint[] = [];
  private checkpointTimer: NodeJS.Timeout | null = null;
  private asking = false;
  private lastAskedAt = Number.NEGATIVE_INFINITY;
  /** The admin client the checkpoints ask through; replaced after any failure (its metadata may be stale). */
  private admin: Admin | null = null;
  private launchedAt = 0;
  /** Consumers launched so far: each one after the first gets a group of its own. */
  private launches = 0;
  /** Whether the current consumer has read up to the targets it was positioned against. */
  private reachedTargets = false;
  /** When the targets were asked of the brokers: reaching them proves the view as of then, not of now. */
  private targetsAskedAt = 0;
  /** The replacement of the current consumer under way, if any: one at a time. */
  private replacement: Promise<void> | null = null;
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
   * The latest time T (ms since the epoch, by `options.now`) at which the view is known to hold
   * every message that was on the topic at T: the end offset of every partition, asked of the
   * brokers at T (a checkpoint), has been handled; or the consumer finished reading up to the end
   * offsets it was positioned against at T. Null until {@link caughtUp}. `now - upToDateAt` is how
   * stale the view may be. Completed fetches do not count: kafkajs fetches each broker's partitions
   * on its own, and fetches from the live brokers while another broker's partitions stall would
   * pass for freshness (seen in a three-broker run: an instance vouched for a revoked key for more
   * than 90 s after a broker restart).
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
    const every = this.options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS;
    // A consumer that no longer fetches at all must still be found stuck: the timer asks too.
    this.checkpointTimer = setInterval(() => this.checkpointIfDue(), every);
    this.checkpointTimer.unref?.();
  }

  /** A checkpoint when none was asked for a checkpoint interval (by `options.now`). */
  private checkpointIfDue(): void {
    if (this.now() - this.lastAskedAt >= (this.options.checkpointIntervalMs ?? DEFAULT_CHECKPOINT_INTERVAL_MS)) void this.checkpoint();
  }

  /**
   * Asks the brokers where each partition ends now and records it as a checkpoint, which makes
   * the view up to date as of the asking once the consumer has handled everything before those
   * offsets. One request at a time; a failed one (a broker away, leadership moving) only leaves the
   * view to age, and the next tick asks through a new admin client, with fresh metadata.
   */
  private async checkpoint(): Promise<void> {
    if (this.asking || this.stopped || !this.consumer) return;
    this.asking = true;
    const askedAt = this.now();
    this.lastAskedAt = askedAt;
    try {
      if (!this.admin) {
        const admin = this.kafka.admin();
        await admin.connect();
        this.admin = admin;
      }
      const ends = await this.admin.fetchTopicOffsets(this.options.topic);
      if (this.stopped) return;
      this.pending.push({ askedAt, answeredAt: this.now(), ends: new Map(ends.map((e) => [e.partition, BigInt(e.high)])) });
      if (this.pending.length > MAX_PENDING_CHECKPOINTS) this.pending.splice(1, 1);
      this.settleCheckpoints();
      this.relaunchIfStuck();
    } catch {
      const admin = this.admin;
      this.admin = null;
      await admin?.disconnect().catch(() => undefined);
    } finally {
      this.asking = false;
    }
  }

  /** Every checkpoint the consumer has read up to makes the view up to date as of its asking. */
  private settleCheckpoints(): void {
    let reached = -1;
    for (let i = 0; i < this.pending.length; i++) {
      const { ends } = this.pending[i];
      if ([...ends].every(([partition, end]) => (this.positions.get(partition) ?? -1n) >= end)) reached = i;
    }
    if (reached < 0) return;
    const { askedAt } = this.pending[reached];
    this.pending = this.pending.slice(reached + 1);
    // Before the catch-up at start the view is not ready anyway; a relaunched consumer is judged by
    // its positions, which start again at the replay window.
    if (this.caughtUpAt !== null && askedAt > (this.upToDate ?? 0)) this.upToDate = askedAt;
  }

  /**
   * The oldest checkpoint still unreached was answered more than `stuckAfterMs` ago: the brokers
   * answer, the consumer does not read. Started again from the replay window, like a consumer
   * kafkajs gave up on; not more than once per `stuckAfterMs`, and a consumer still replaying not
   * before {@link REPLAY_GRACE_MS} after its launch.
   */
  private relaunchIfStuck(): void {
    const after = this.options.stuckAfterMs ?? DEFAULT_STUCK_AFTER_MS;
    const oldest = this.pending[0];
    const now = this.now();
    if (!oldest || now - oldest.answeredAt <= after || now - this.launchedAt <= after || !this.consumer) return;
    if (!this.reachedTargets && now - this.launchedAt <= REPLAY_GRACE_MS) return;
    const stuck = this.consumer;
    const behind = [...oldest.ends]
      .filter(([partition, end]) => (this.positions.get(partition) ?? -1n) < end)
      .map(([partition, end]) => ({ partition, position: String(this.positions.get(partition) ?? 'none'), end: String(end) }));
    this.options.onStuck?.({ behind, sinceMs: now - oldest.answeredAt });
    void this.replace(stuck);
  }

  /**
   * Replaces `old`, the current consumer (found stuck, or given up on by kafkajs after a crash), by
   * a new one from the replay window, retrying until one runs or the subscription stops. One
   * replacement at a time, whichever way it was asked for: a stuck consumer can also crash, and two
   * replacements would leave one consumer running that nobody stops. A consumer already replaced
   * is left alone. Never throws.
   */
  private replace(old: Consumer): Promise<void> {
    if (this.replacement) return this.replacement;
    if (this.consumer !== old || this.stopped) return Promise.resolve();
    this.replacement = this.replaceNow(old).finally(() => {
      this.replacement = null;
    });
    return this.replacement;
  }

  private async replaceNow(old: Consumer): Promise<void> {
    this.consumer = null;
    this.pending = [];
    // A stuck consumer's leave request can wait on a broker that does not answer: the new consumer
    // does not wait for it longer than this (the old one is no longer current; it cannot restart).
    await Promise.race([old.disconnect().catch(() => undefined), new Promise((r) => setTimeout(r, DISCONNECT_WAIT_MS).unref?.())]);
    while (!this.stopped) {
      try {
        await this.launch(await this.position());
        if (this.stopped) await this.stop();
        return;
      } catch {
        // runConsumer disconnected the one that failed.
        this.consumer = null;
        await new Promise((r) => setTimeout(r, CONSUMER_RELAUNCH_DELAY_MS));
      }
    }
  }

  /**
   * Where the next consumer starts (the start of the replay window in each partition), and what it
   * must read before it is up to date again (each partition's end offset now).
   */
  private async position(): Promise<Array<{ partition: number; offset: string }>> {
    const askedAt = this.now();
    const { starts, ends } = await this.windowOffsets();
    this.targetsAskedAt = askedAt;
    this.targets.clear();
    this.reachedTargets = false;
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
    // read up to the end offsets of its relaunch, the view ages (no checkpoint is reached).
    // Each consumer after the first joins a group of its own (`<groupId>.<n>`): in the old one, the
    // consumer it replaces may still count as a member until its session times out (a stuck one's
    // leave request can fail), and the partitions would be split between the two; the three-broker
    // trial saw relaunched consumers leave half the partitions unread, relaunch after relaunch. The
    // replay window, not the group's offsets, says where a consumer starts.
    const groupId = this.launches === 0 ? this.options.groupId : `${this.options.groupId}.${this.launches}`;
    this.launches += 1;
    // kafkajs gave up on it after a crash: replaced like a stuck one (subscriptionConsumer has
    // disconnected it), unless it has been replaced meanwhile.
    const consumer: Consumer = subscriptionConsumer(this.kafka, { ...this.options, groupId }, this.subscription, () => this.replace(consumer));
    this.consumer = consumer;
    this.launchedAt = this.now();
    // The new consumer reads from the start of the replay window: checkpoints count its positions.
    this.positions.clear();
    for (const s of starts) this.positions.set(s.partition, BigInt(s.offset));
    // A completed fetch (empty ones included, about every `maxWaitTimeInMs` when idle) prompts the
    // next checkpoint, so that a healthy view is proven about once per checkpoint interval. The
    // fetch itself proves nothing: kafkajs fetches each broker's partitions on their own.
    consumer.on(consumer.events.FETCH, () => {
      if (this.consumer === consumer && this.caughtUpAt !== null) this.checkpointIfDue();
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
      groupId,
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
        const next = BigInt(offset) + 1n;
        if (next > (this.positions.get(partition) ?? -1n)) this.positions.set(partition, next);
        const target = this.targets.get(partition);
        if (target !== undefined && next >= target) this.targets.delete(partition);
        this.checkCaughtUp();
        if (this.pending.length > 0) this.settleCheckpoints();
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
    if (this.checkpointTimer) clearInterval(this.checkpointTimer);
    this.checkpointTimer = null;
    const consumer = this.consumer;
    this.consumer = null;
    const admin = this.admin;
    this.admin = null;
    if (consumer) await consumer.disconnect().catch(() => undefined);
    await admin?.disconnect().catch(() => undefined);
  }

  /**
   * Called whenever the consumer may have read up to its targets: the first time it has since it
   * was positioned, marks it caught up, and up to date as of the moment the targets were asked of
   * the brokers (what was published after that, while the consumer joined and replayed, it may not
   * have read yet). Later messages prove nothing about the other partitions: only checkpoints move
   * `upToDateAt` after that.
   */
  private checkCaughtUp(): void {
    if (this.targets.size > 0 || this.reachedTargets) return;
    this.reachedTargets = true;
    if (this.caughtUpAt === null) this.caughtUpAt = this.now();
    if (this.targetsAskedAt > (this.upToDate ?? 0)) this.upToDate = this.targetsAskedAt;
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

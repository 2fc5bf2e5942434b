import { Consumer, Kafka, KafkaMessage, logLevel, LogEntry } from 'kafkajs';
import { processManyWithTrace, processWithTrace } from './tracing/message-tracing';

export interface KafkaConnection {
  brokers: string[];
  clientId: string;
  /** Receives kafkajs' own log lines (warnings and errors only). */
  log?: (level: 'warn' | 'error', message: string, extra: Record<string, unknown>) => void;
}

const BOUNDED_IDEMPOTENT_RETRIES = 'Limiting retries for the idempotent producer may invalidate EoS guarantees';

/**
 * kafkajs has had no maintainer since 2023, so it stays behind this library (a publisher, two
 * subscribers and the Nest transport and client over them); replacing the client touches only this
 * folder.
 */
export function createKafka(c: KafkaConnection): Kafka {
  return new Kafka({
    clientId: c.clientId,
    brokers: c.brokers,
    connectionTimeout: 1500,
    requestTimeout: 5000,
    // Callers own the retry policy (the outbox relay retries forever); fail fast underneath.
    retry: { retries: 3, initialRetryTime: 100, maxRetryTime: 1000 },
    logLevel: logLevel.WARN,
    logCreator:
      () =>
      ({ level, log }: LogEntry) => {
        const { message, ...extra } = log;
        // Said once per idempotent producer, and not true of ours (event-publisher.ts).
        if (message === BOUNDED_IDEMPOTENT_RETRIES) return;
        c.log?.(level === logLevel.ERROR ? 'error' : 'warn', String(message), extra);
      },
  });
}

/** Pause before a consumer that kafkajs gave up on is started again (and between failed attempts). */
export const CONSUMER_RELAUNCH_DELAY_MS = 1000;

/**
 * kafkajs restarts a crashed consumer only when it deems the error retriable. Some errors of an
 * ordinary broker restart are not ("Failed to find group coordinator" while the restarted broker
 * loads its group metadata): the consumer then stops for good and nothing tells the service, whose
 * revocation view silently goes stale. So when kafkajs will not restart the subscription's current
 * consumer, `relaunch` is called after a pause, and again after each failed attempt, until one
 * succeeds or the subscription is stopped.
 */
export function relaunchAfterFatalCrash(
  consumer: Consumer,
  subscription: { isCurrent(consumer: Consumer): boolean; isStopped(): boolean },
  relaunch: () => Promise<void>,
): void {
  consumer.on(consumer.events.CRASH, (event) => {
    if (event.payload.restart || !subscription.isCurrent(consumer)) return;
    const attempt = (): void => {
      setTimeout(() => {
        if (subscription.isStopped()) return;
        relaunch().catch(() => attempt());
      }, CONSUMER_RELAUNCH_DELAY_MS);
    };
    attempt();
  });
}

/** A message as the subscribers hand it to their handler (kafkajs' own type stays in this folder). */
export interface IncomingMessage {
  topic: string;
  partition: number;
  offset: string;
  key: string | null;
  value: Buffer | null;
  timestamp: number;
}

/**
 * A message of a batch delivery: `process` runs one message's share of the batch's work inside the
 * message's own consumer span, a child of its sender's (as a message delivered alone is handled).
 */
export interface BatchedMessage extends IncomingMessage {
  process<T>(work: () => Promise<T>): Promise<T>;
  /** The message as kafkajs handed it over (its headers carry the sender's trace context). */
  readonly raw: KafkaMessage;
  readonly groupId: string;
}

/**
 * Runs `work` for several messages of one batch at once (a reaction to all of them in one
 * transaction), inside one consumer span linked to each sender's; for one message, its own span.
 */
export function processTogether<T>(messages: readonly BatchedMessage[], work: () => Promise<T>): Promise<T> {
  if (messages.length === 0) return work();
  return processManyWithTrace(messages[0].topic, messages[0].groupId, messages.map((m) => ({ partition: m.partition, message: m.raw })), work);
}

/**
 * Messages of one partition handed over at most this many at a time: one handler call (a database
 * transaction) per slice, its offsets resolved once it succeeded.
 */
export const BATCH_SLICE = 200;

/** Partitions whose slices a batch delivery hands over at the same time (kafkajs' partitionsConsumedConcurrently). */
export const BATCH_PARTITIONS = 8;

export function incomingMessage(topic: string, partition: number, message: KafkaMessage): IncomingMessage {
  return {
    topic,
    partition,
    offset: message.offset,
    key: message.key ? message.key.toString() : null,
    value: message.value,
    timestamp: Number(message.timestamp),
  };
}

/** The message's value parsed as JSON, for the handler's contract check; undefined when it is not JSON. */
export function jsonValueOf(message: IncomingMessage): unknown {
  try {
    return JSON.parse(message.value?.toString('utf8') ?? 'null');
  } catch {
    return undefined;
  }
}

/** Which consumer a subscription runs now, and whether it was stopped. */
export interface Subscription {
  isCurrent(consumer: Consumer): boolean;
  isStopped(): boolean;
}

/**
 * A consumer with the settings both subscribers use (a 10 s group session with 1 s heartbeats, no
 * topic auto-creation), which `relaunch` replaces, after disconnecting it, when kafkajs gives up on
 * it while it is still the subscription's current one ({@link relaunchAfterFatalCrash}).
 */
export function subscriptionConsumer(
  kafka: Kafka,
  options: { groupId: string; maxWaitTimeInMs: number; minBytes?: number },
  subscription: Subscription,
  relaunch: () => Promise<void>,
): Consumer {
  const consumer: Consumer = kafka.consumer({
    groupId: options.groupId,
    maxWaitTimeInMs: options.maxWaitTimeInMs,
    // The broker answers a fetch once it holds this much, or after maxWaitTimeInMs (default: at once).
    minBytes: options.minBytes ?? 1,
    sessionTimeout: 10000,
    heartbeatInterval: 1000,
    allowAutoTopicCreation: false,
    retry: {
      // kafkajs' default for consumers.
      retries: 5,
      // kafkajs restarts a crashed consumer even after it was disconnected (a replaced consumer whose
      // connection closed mid-request: "write after end"). Such a zombie joins its old group again
      // and takes half of the partitions from the consumer that replaced it, whose view then never
      // catches up (seen in the three-broker trial). Only the subscription's current consumer restarts.
      restartOnFailure: async () => subscription.isCurrent(consumer) && !subscription.isStopped(),
    },
  });
  relaunchAfterFatalCrash(consumer, subscription, async () => {
    await consumer.disconnect().catch(() => undefined);
    await relaunch();
  });
  return consumer;
}

/**
 * Connects `consumer`, subscribes it to `topic` and runs it, each message handed to `handle` inside
 * its consumer span (tracing/message-tracing.ts), then calls `running` (the replaying subscriber
 * positions its partitions there). Both subscribers start every consumer of theirs through here, the
 * first one and each relaunched one. When a step fails the consumer is disconnected, so nothing
 * half-open stays behind, and the error is thrown for the caller to retry (the transport's
 * connect-and-retry loop at start, `relaunchAfterFatalCrash` after a crash).
 */
export async function runConsumer(
  consumer: Consumer,
  options: {
    topic: string;
    groupId: string;
    autoCommitInterval?: number;
    handle(message: IncomingMessage): Promise<void> | void;
    /**
     * Instead of `handle`, when set: the messages a fetch brought of one partition, in order, in
     * slices of at most {@link BATCH_SLICE}; a throw leaves the slice's offsets unresolved, so it is
     * delivered again (at least once), and the slices after it wait.
     */
    handleBatch?(messages: BatchedMessage[]): Promise<void>;
    /** After each message was handled (the offset is then resolved by kafkajs). */
    handled?(partition: number, offset: string): void;
    running?(): Promise<void>;
  },
): Promise<void> {
  const { topic, groupId, handle, handled } = options;
  try {
    await consumer.connect();
    // `fromBeginning: true`: for the replaying subscriber see its seek; for a new group of the group
    // subscriber, the whole topic (retention bounds it).
    await consumer.subscribe({ topics: [topic], fromBeginning: true });
    const handleBatch = options.handleBatch;
    await consumer.run(
      handleBatch
        ? {
            autoCommit: true,
            autoCommitInterval: options.autoCommitInterval ?? null,
            // Resolved slice by slice below: a batch cut short (a rebalance) must not count as done.
            eachBatchAutoResolve: false,
            // The partitions of one fetch at once, so that a handler can apply them together.
            partitionsConsumedConcurrently: BATCH_PARTITIONS,
            eachBatch: async ({ batch, resolveOffset, heartbeat, isRunning, isStale }) => {
              for (let from = 0; from < batch.messages.length; from += BATCH_SLICE) {
                if (!isRunning() || isStale()) return;
                const slice = batch.messages.slice(from, from + BATCH_SLICE);
                await handleBatch(
                  slice.map((message) => ({
                    ...incomingMessage(batch.topic, batch.partition, message),
                    process: <T>(work: () => Promise<T>) => processWithTrace(batch.topic, batch.partition, message, groupId, work),
                    raw: message,
                    groupId,
                  })),
                );
                const last = slice[slice.length - 1].offset;
                resolveOffset(last);
                handled?.(batch.partition, last);
                await heartbeat();
              }
            },
          }
        : {
            autoCommit: true,
            autoCommitInterval: options.autoCommitInterval ?? null,
            eachMessage: async ({ topic: t, partition, message }) => {
              await processWithTrace(t, partition, message, groupId, () => handle(incomingMessage(t, partition, message)));
              handled?.(partition, message.offset);
            },
          },
    );
    await options.running?.();
  } catch (e) {
    await consumer.disconnect().catch(() => undefined);
    throw e;
  }
}

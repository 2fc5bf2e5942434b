import { Consumer, Kafka, logLevel, LogEntry } from 'kafkajs';

export interface KafkaConnection {
  brokers: string[];
  clientId: string;
  /** Receives kafkajs' own log lines (warnings and errors only). */
  log?: (level: 'warn' | 'error', message: string, extra: Record<string, unknown>) => void;
}

/**
 * kafkajs has had no maintainer since 2023, so it stays behind this library's two small classes;
 * replacing the client touches only this folder.
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

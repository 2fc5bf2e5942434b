import { Kafka, logLevel, LogEntry } from 'kafkajs';

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

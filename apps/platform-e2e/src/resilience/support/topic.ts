import { Kafka, KafkaMessage, logLevel } from 'kafkajs';
import { sleep } from '../../support/processes';

/**
 * Reads the messages of `topic` stamped `sinceMs` or later, as an outside kafkajs consumer would,
 * naming each message with `pick` (null: not one to count), until `count` distinct names are seen
 * or `waitMs` has passed. Returns each name with the messages that carried it (more than one:
 * a duplicate, which at-least-once delivery allows) and the earliest message timestamp.
 */
export async function readTopicSince(
  brokers: string[],
  topic: string,
  sinceMs: number,
  waitMs: number,
  count: number,
  pick: (message: KafkaMessage) => string | null,
): Promise<Map<string, { messages: number; timestamp: number }>> {
  const k = new Kafka({ clientId: 'resilience-reader', brokers, logLevel: logLevel.NOTHING });
  // From the beginning of the topic (its retention is hours, so it is small here) rather than from
  // offsets looked up by time and sought after `run`: a seek made before the group has its
  // partitions is lost, which on a three-broker cluster (a slower join) silently skipped partitions.
  const consumer = k.consumer({ groupId: `resilience-${topic}-${Date.now()}`, maxWaitTimeInMs: 100 });
  const seen = new Map<string, { messages: number; timestamp: number }>();
  await consumer.connect();
  await consumer.subscribe({ topics: [topic], fromBeginning: true });
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (Number(message.timestamp) < sinceMs) return;
      const name = pick(message);
      if (name === null) return;
      const known = seen.get(name);
      const timestamp = Number(message.timestamp);
      seen.set(name, known ? { messages: known.messages + 1, timestamp: Math.min(known.timestamp, timestamp) } : { messages: 1, timestamp });
    },
  });
  const deadline = Date.now() + waitMs;
  while (seen.size < count && Date.now() < deadline) await sleep(100);
  // A moment more, for duplicates of the last ones.
  await sleep(500);
  await consumer.disconnect();
  return seen;
}

import { Kafka, logLevel } from 'kafkajs';
import { randomUUID } from 'node:crypto';
import { STACK } from './platform';

/**
 * Reads `auth.revocations.v1` the way an outside subscriber would: plain kafkajs, its own consumer
 * group, from a point in time. Collects every message whose key is the given API key id.
 */
export async function readRevocations(apiKeyId: string, sinceMs: number, waitMs = 15000): Promise<unknown[]> {
  const kafka = new Kafka({ clientId: 'e2e-reader', brokers: [STACK.kafkaBrokers], logLevel: logLevel.NOTHING });
  const admin = kafka.admin();
  await admin.connect();
  const starts = await admin.fetchTopicOffsetsByTimestamp('auth.revocations.v1', sinceMs);
  await admin.disconnect();
  const consumer = kafka.consumer({ groupId: `e2e-reader-${randomUUID()}`, maxWaitTimeInMs: 100 });
  const found: unknown[] = [];
  await consumer.connect();
  await consumer.subscribe({ topics: ['auth.revocations.v1'], fromBeginning: false });
  await consumer.run({
    eachMessage: async ({ message }) => {
      if (message.key?.toString() === apiKeyId && message.value) found.push(JSON.parse(message.value.toString()));
    },
  });
  for (const s of starts) consumer.seek({ topic: 'auth.revocations.v1', partition: s.partition, offset: s.offset });
  const deadline = Date.now() + waitMs;
  while (found.length === 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 100));
  await new Promise((r) => setTimeout(r, 300));
  await consumer.disconnect();
  return found;
}

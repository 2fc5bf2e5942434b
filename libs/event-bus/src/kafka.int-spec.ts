import { randomUUID } from 'node:crypto';
import { createKafka } from './kafka-client';
import { KafkaEventPublisher } from './event-publisher';
import type { IncomingMessage } from './kafka-client';
import { KafkaReplayingSubscriber } from './replaying-subscriber';

const kafka = createKafka({ brokers: ['127.0.0.1:9092'], clientId: 'event-bus-int' });
const topic = `test.event-bus.${randomUUID()}`;

beforeAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.createTopics({ topics: [{ topic, numPartitions: 3, replicationFactor: 1 }], waitForLeaders: true });
  await admin.disconnect();
});

afterAll(async () => {
  const admin = kafka.admin();
  await admin.connect();
  await admin.deleteTopics({ topics: [topic] }).catch(() => undefined);
  await admin.disconnect();
});

describe(KafkaReplayingSubscriber.name, () => {
  it('replays the window (not older messages), reports caught up, then receives new messages', async () => {
    const producer = kafka.producer();
    await producer.connect();
    const now = Date.now();
    await producer.send({
      topic,
      messages: [
        { key: 'a', value: 'too-old', timestamp: String(now - 2 * 3600_000) },
        ...Array.from({ length: 30 }, (_, i) => ({ key: `k${i}`, value: `recent-${i}`, timestamp: String(now - 60_000) })),
      ],
    });
    const received: IncomingMessage[] = [];
    const subscriber = new KafkaReplayingSubscriber(kafka, {
      topic,
      groupId: `event-bus-int-${randomUUID()}`,
      replayWindowMs: 3600_000,
      maxWaitTimeInMs: 100,
      // A checkpoint (the end offsets asked of the broker) every 250 ms: the freshness asserted below.
      checkpointIntervalMs: 250,
      handle: (m) => {
        received.push(m);
      },
    });
    expect(subscriber.caughtUp).toBe(false);
    await subscriber.start();
    const deadline = Date.now() + 30000;
    while (!subscriber.caughtUp && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    expect(subscriber.caughtUp).toBe(true);
    const values = received.map((m) => m.value?.toString());
    expect(values).not.toContain('too-old');
    expect(new Set(values)).toEqual(new Set(Array.from({ length: 30 }, (_, i) => `recent-${i}`)));

    await new KafkaEventPublisher(kafka).publish(topic, [{ key: 'live', value: 'live-1' }]);
    const liveDeadline = Date.now() + 10000;
    while (!received.some((m) => m.value?.toString() === 'live-1') && Date.now() < liveDeadline) await new Promise((r) => setTimeout(r, 20));
    expect(received.map((m) => m.value?.toString())).toContain('live-1');

    // Idle, a healthy consumer completes a fetch about every maxWaitTimeInMs, each prompting a
    // checkpoint once per interval: how fresh the view is keeps up with the clock (ADR 0017).
    const before = subscriber.upToDateAt ?? 0;
    await new Promise((r) => setTimeout(r, 1500));
    expect(subscriber.upToDateAt ?? 0).toBeGreaterThan(before + 1000);
    expect(Date.now() - (subscriber.upToDateAt ?? 0)).toBeLessThan(1000);
    await subscriber.stop();
    await producer.disconnect();
  });

  it('stops counting as up to date while its handler cannot apply a message, and applies it after a relaunch (fail closed, ADR 0017)', async () => {
    const subscriber = new KafkaReplayingSubscriber(kafka, {
      topic,
      groupId: `event-bus-int-${randomUUID()}`,
      // Long enough that each relaunch replays the poison message again.
      replayWindowMs: 600_000,
      maxWaitTimeInMs: 100,
      checkpointIntervalMs: 250,
      handle: (m) => {
        if (m.value?.toString() === 'poison' && failing) throw new Error('cannot apply it yet');
        if (m.value?.toString() === 'poison') applied = true;
      },
    });
    let failing = true;
    let applied = false;
    await subscriber.start();
    const until = async (condition: () => boolean, ms: number) => {
      for (const deadline = Date.now() + ms; !condition() && Date.now() < deadline; ) await new Promise((r) => setTimeout(r, 50));
    };
    await until(() => subscriber.caughtUp && Date.now() - (subscriber.upToDateAt ?? 0) < 500, 15000);
    await new KafkaEventPublisher(kafka).publish(topic, [{ key: 'poison', value: 'poison' }]);
    // kafkajs gives up on the consumer at the first failure (not retriable), the relaunch reads up to
    // the poison message again, fails again: it never reaches a checkpoint, the view grows stale.
    await new Promise((r) => setTimeout(r, 4000));
    expect(Date.now() - (subscriber.upToDateAt ?? 0)).toBeGreaterThan(3000);
    failing = false;
    await until(() => applied && Date.now() - (subscriber.upToDateAt ?? 0) < 500, 20000);
    expect(applied).toBe(true);
    expect(Date.now() - (subscriber.upToDateAt ?? 0)).toBeLessThan(500);
    await subscriber.stop();
  });

  it('is caught up at once on an empty window', async () => {
    const subscriber = new KafkaReplayingSubscriber(kafka, {
      topic,
      groupId: `event-bus-int-${randomUUID()}`,
      replayWindowMs: 1,
      maxWaitTimeInMs: 100,
      handle: () => undefined,
    });
    await subscriber.start();
    expect(subscriber.caughtUp).toBe(true);
    expect(subscriber.upToDateAt).not.toBeNull();
    await subscriber.stop();
  });
});

describe(KafkaEventPublisher.name, () => {
  it('fails fast when no broker answers, so the outbox relay can retry later', async () => {
    const unreachable = new KafkaEventPublisher(createKafka({ brokers: ['127.0.0.1:9'], clientId: 'event-bus-int-down' }));
    const started = Date.now();
    await expect(unreachable.publish(topic, [{ key: 'x', value: 'y' }])).rejects.toThrow();
    expect(Date.now() - started).toBeLessThan(15000);
    await unreachable.close();
  });
});

import type { Kafka } from 'kafkajs';
import { KafkaGroupSubscriber } from './group-subscriber';
import { CONSUMER_RELAUNCH_DELAY_MS } from './kafka-client';
import { DEFAULT_CHECKPOINT_INTERVAL_MS, DEFAULT_STUCK_AFTER_MS, KafkaReplayingSubscriber } from './replaying-subscriber';
import { fakeKafka } from './testing/fake-kafka';

beforeEach(() => jest.useFakeTimers());
afterEach(() => jest.useRealTimers());

describe(KafkaReplayingSubscriber.name, () => {
  const subscriber = (kafka: Kafka) =>
    new KafkaReplayingSubscriber(kafka, { topic: 't', groupId: 'g', replayWindowMs: 60000, maxWaitTimeInMs: 100, handle: () => undefined });

  it('starts a consumer again, from the replay window, when kafkajs gives up on it after a crash', async () => {
    const { kafka, consumers, nextFailsToConnect } = fakeKafka();
    const s = subscriber(kafka);
    await s.start();
    expect(consumers).toHaveLength(1);

    // The broker is still coming back: the first relaunch fails to connect, the next one works.
    nextFailsToConnect.value = 1;
    consumers[0].crash(false);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS);
    expect(consumers).toHaveLength(2);
    expect(consumers[1].connected).toBe(false);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS);
    expect(consumers).toHaveLength(3);
    expect(consumers[2].subscribed && consumers[2].running).toBe(true);
    expect(consumers[2].seeks).toEqual([{ topic: 't', partition: 0, offset: '7' }]);
    await s.stop();
  });

  it('leaves a consumer that kafkajs restarts itself alone, and relaunches nothing once stopped', async () => {
    const { kafka, consumers } = fakeKafka();
    const s = subscriber(kafka);
    await s.start();
    consumers[0].crash(true);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS * 3);
    expect(consumers).toHaveLength(1);

    consumers[0].crash(false);
    await s.stop();
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS * 3);
    expect(consumers).toHaveLength(1);
  });
});

describe(`${KafkaReplayingSubscriber.name}: upToDateAt (how fresh its view of the topic is)`, () => {
  const subscriber = (kafka: Kafka) =>
    new KafkaReplayingSubscriber(kafka, { topic: 't', groupId: 'g', replayWindowMs: 60000, maxWaitTimeInMs: 100, handle: () => undefined });

  it('is null until the replay has caught up, then moves with each checkpoint (the end offsets asked of the brokers) the consumer has read up to', async () => {
    const { kafka, consumers, end, unreachable } = fakeKafka();
    const s = subscriber(kafka);
    await s.start();
    consumers[0].fetched();
    await consumers[0].deliver(7, 8);
    expect(s.upToDateAt).toBeNull();

    await consumers[0].deliver(9);
    expect(s.caughtUp).toBe(true);
    const caughtUpAt = Date.now();
    expect(s.upToDateAt).toBe(caughtUpAt);

    // Idle and healthy: each checkpoint finds the partition where the consumer is.
    await jest.advanceTimersByTimeAsync(DEFAULT_CHECKPOINT_INTERVAL_MS);
    expect(s.upToDateAt).toBe(caughtUpAt + DEFAULT_CHECKPOINT_INTERVAL_MS);

    // The brokers are cut off: no checkpoint is answered, and the time stands still.
    unreachable.value = true;
    await jest.advanceTimersByTimeAsync(5 * DEFAULT_CHECKPOINT_INTERVAL_MS);
    expect(s.upToDateAt).toBe(caughtUpAt + DEFAULT_CHECKPOINT_INTERVAL_MS);

    // Back, with two messages the consumer has not read: fetches complete, the view does not move
    // until it has handled both.
    unreachable.value = false;
    end.value = 12;
    await jest.advanceTimersByTimeAsync(DEFAULT_CHECKPOINT_INTERVAL_MS);
    const askedAt = Date.now();
    consumers[0].fetched();
    await consumers[0].deliver(10);
    expect(s.upToDateAt).toBe(caughtUpAt + DEFAULT_CHECKPOINT_INTERVAL_MS);
    await jest.advanceTimersByTimeAsync(100);
    await consumers[0].deliver(11);
    expect(s.upToDateAt).toBe(askedAt);
    await s.stop();
  });

  it('does not count completed fetches while the consumer is behind the end offsets the brokers answered', async () => {
    const { kafka, consumers, end } = fakeKafka();
    const s = subscriber(kafka);
    await s.start();
    await consumers[0].deliver(7, 8, 9);
    const before = s.upToDateAt;
    end.value = 11;
    for (let i = 0; i < 20; i++) {
      await jest.advanceTimersByTimeAsync(100);
      consumers[0].fetched();
    }
    expect(s.upToDateAt).toBe(before);
    await s.stop();
  });

  it('replaces a consumer that stays behind an answered checkpoint for stuckAfterMs, from the replay window', async () => {
    const { kafka, consumers, end } = fakeKafka();
    const stuck: unknown[] = [];
    const s = new KafkaReplayingSubscriber(kafka, {
      topic: 't',
      groupId: 'g',
      replayWindowMs: 60000,
      maxWaitTimeInMs: 100,
      handle: () => undefined,
      onStuck: (what) => stuck.push(what),
    });
    await s.start();
    await consumers[0].deliver(7, 8, 9);
    const before = s.upToDateAt;
    // A revocation at offset 10 that the consumer never reads, while the brokers answer.
    end.value = 11;
    await jest.advanceTimersByTimeAsync(DEFAULT_STUCK_AFTER_MS);
    expect(consumers).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(2 * DEFAULT_CHECKPOINT_INTERVAL_MS);
    expect(consumers).toHaveLength(2);
    expect(consumers[0].connected).toBe(false);
    expect(consumers[1].seeks).toEqual([{ topic: 't', partition: 0, offset: '7' }]);
    expect([consumers[0].groupId, consumers[1].groupId]).toEqual(['g', 'g.1']);
    expect(stuck).toEqual([{ behind: [{ partition: 0, position: '10', end: '11' }], sinceMs: expect.any(Number) }]);
    expect(s.upToDateAt).toBe(before);
    // Were kafkajs to restart the replaced consumer after a crash, it would join the group again and
    // take partitions from its successor: only the current consumer may restart.
    const error = new Error('Connection error: write after end');
    expect(await consumers[0].options.retry?.restartOnFailure?.(error)).toBe(false);
    expect(await consumers[1].options.retry?.restartOnFailure?.(error)).toBe(true);

    // The new consumer reads it: up to date again at its catch-up.
    await consumers[1].deliver(7, 8, 9, 10);
    expect(s.upToDateAt).toBe(Date.now());
    await s.stop();
  });

  it('counts a replacement that reached its targets up to date as of when the targets were asked, not as of its catch-up', async () => {
    const { kafka, consumers, end, unreachable } = fakeKafka();
    let stuckAt = 0;
    const s = new KafkaReplayingSubscriber(kafka, {
      topic: 't',
      groupId: 'g',
      replayWindowMs: 60000,
      maxWaitTimeInMs: 100,
      handle: () => undefined,
      onStuck: () => (stuckAt = Date.now()),
    });
    await s.start();
    await consumers[0].deliver(7, 8, 9);
    end.value = 11;
    await jest.advanceTimersByTimeAsync(DEFAULT_STUCK_AFTER_MS + 2 * DEFAULT_CHECKPOINT_INTERVAL_MS);
    expect(consumers).toHaveLength(2);
    // The new consumer takes 3 s to join and replay: what was published meanwhile it may not have
    // read, so its catch-up proves the view only as of the asking of its targets (no checkpoint is
    // answered meanwhile).
    unreachable.value = true;
    await jest.advanceTimersByTimeAsync(3000);
    await consumers[1].deliver(7, 8, 9, 10);
    expect(s.upToDateAt).toBe(stuckAt);
    await s.stop();
  });

  it('replaces a stuck consumer once, also when kafkajs gave up on it after a crash just before', async () => {
    /** A subscriber whose consumer stays behind a checkpoint from now on. */
    const behind = async () => {
      const { kafka, consumers, end } = fakeKafka();
      const s = subscriber(kafka);
      await s.start();
      await consumers[0].deliver(7, 8, 9);
      end.value = 11;
      return { s, consumers };
    };
    // When it is found stuck, left alone.
    const first = await behind();
    let foundAfterMs = 0;
    for (; first.consumers.length === 1; foundAfterMs += 100) await jest.advanceTimersByTimeAsync(100);
    await first.s.stop();
    // The same, with kafkajs giving up on it half a second before that: the relaunch after the
    // crash comes after the replacement and must not start a third consumer beside the second.
    const second = await behind();
    await jest.advanceTimersByTimeAsync(foundAfterMs - 500);
    second.consumers[0].crash(false);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS * 3);
    expect(second.consumers).toHaveLength(2);
    expect(second.consumers[1].connected).toBe(true);
    await second.s.stop();
  });

  it('gives a consumer still replaying 30 s after its launch before it is judged stuck', async () => {
    const { kafka, consumers } = fakeKafka();
    const s = subscriber(kafka);
    await s.start();
    // It was positioned at 7 with the partition ending at 10, and delivers nothing.
    await jest.advanceTimersByTimeAsync(29_000);
    expect(consumers).toHaveLength(1);
    await jest.advanceTimersByTimeAsync(2_000);
    expect(consumers).toHaveLength(2);
    expect(consumers[1].seeks).toEqual([{ topic: 't', partition: 0, offset: '7' }]);
    await s.stop();
  });

  it('is up to date at once on an empty replay window', async () => {
    const { kafka, end } = fakeKafka();
    end.value = 7;
    const s = subscriber(kafka);
    await s.start();
    expect(s.caughtUp).toBe(true);
    expect(s.upToDateAt).toBe(Date.now());
    await s.stop();
  });

  it('counts a consumer started again after a fatal crash only once it has read up to the end offsets of its relaunch', async () => {
    const { kafka, consumers, end } = fakeKafka();
    const s = subscriber(kafka);
    await s.start();
    await consumers[0].deliver(7, 8, 9);
    const before = s.upToDateAt;

    // Two revocations were published while the broker was away; kafkajs gives up on the consumer.
    end.value = 12;
    consumers[0].crash(false);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS);
    expect(consumers).toHaveLength(2);
    consumers[0].fetched(); // the old consumer no longer counts
    consumers[1].fetched(); // the new one replays from offset 7 and has not reached 12 yet
    await consumers[0].deliver(10, 11);
    await consumers[1].deliver(7, 8, 9, 10);
    expect(s.upToDateAt).toBe(before);

    await consumers[1].deliver(11);
    expect(s.upToDateAt).toBe(Date.now());
    await jest.advanceTimersByTimeAsync(DEFAULT_CHECKPOINT_INTERVAL_MS);
    expect(s.upToDateAt).toBe(Date.now());
    await s.stop();
  });
});

describe(`${KafkaReplayingSubscriber.name}, when its handler fails`, () => {
  it('makes kafkajs give up on the consumer (not retry the message forever), so the relaunch from the replay window stops the view from counting as fresh', async () => {
    const { kafka, consumers } = fakeKafka();
    let failing = true;
    const s = new KafkaReplayingSubscriber(kafka, {
      topic: 't',
      groupId: 'g',
      replayWindowMs: 60000,
      maxWaitTimeInMs: 100,
      handle: (message) => {
        if (failing && message.offset === '8') throw new TypeError('cannot apply');
      },
    });
    await s.start();
    await consumers[0].deliver(7);
    const failure = (await consumers[0].deliverValue(8, '{}').catch((e: unknown) => e)) as Error & { retriable?: boolean; cause?: unknown };
    // kafkajs retries an error unless it says `retriable: false`, and restarts the consumer itself
    // after the retries: every one of those fetches would have counted as fresh.
    expect(failure).toMatchObject({ retriable: false, message: expect.stringContaining('offset 8: cannot apply') });
    expect(failure.cause).toBeInstanceOf(TypeError);
    await s.stop();
    failing = false;
  });
});

describe(KafkaGroupSubscriber.name, () => {
  it('starts a consumer again in the same group when kafkajs gives up on it after a crash', async () => {
    const { kafka, consumers } = fakeKafka();
    const s = new KafkaGroupSubscriber(kafka, { topic: 't', groupId: 'g', maxWaitTimeInMs: 100, handle: async () => undefined });
    await s.start();
    consumers[0].crash(false);
    await jest.advanceTimersByTimeAsync(CONSUMER_RELAUNCH_DELAY_MS);
    expect(consumers).toHaveLength(2);
    expect(consumers[1].running).toBe(true);
    await s.stop();
  });
});

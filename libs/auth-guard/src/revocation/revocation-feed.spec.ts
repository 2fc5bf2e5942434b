import { Logger } from '@nestjs/common';
import { hostname } from 'node:os';
import { newId, REVOCATIONS_TOPIC } from '@invoicing/contracts';
import { KafkaEventTransport } from '@invoicing/event-bus';
import { FakeKafka, fakeKafka, sessionsRevoked, settle } from '../testing/fake-kafka';
import { DEFAULT_REVOCATION_MAX_STALENESS_MS, RevocationFeed, RevocationFeedController } from './revocation-feed';
import { RevocationView } from './revocation-view';

describe(RevocationFeed.name, () => {
  let clock: number;
  let kafka: FakeKafka;
  let transport: KafkaEventTransport;
  let feed: RevocationFeed;
  let view: RevocationView;
  let warn: jest.SpyInstance;
  let log: jest.SpyInstance;

  /** The feed on a transport over the fake broker, served as `connectEventTransport` would serve it (no Nest app). */
  function createFeed(maxStalenessMs?: number): void {
    transport = new KafkaEventTransport({ brokers: ['kafka:9092'], createKafka: () => kafka.kafka });
    view = new RevocationView(() => clock);
    feed = new RevocationFeed(view, transport, { service: 'test-service', maxStalenessMs }, () => clock);
    const controller = new RevocationFeedController(feed);
    transport.addHandler(REVOCATIONS_TOPIC, async (message) => controller.apply(message), true);
    transport.listen(() => undefined);
    feed.onApplicationBootstrap();
  }

  async function startFeed(window: { start: number; end: number }, maxStalenessMs?: number): Promise<void> {
    kafka = fakeKafka(window);
    createFeed(maxStalenessMs);
    await settle();
  }

  /** The feed's once-a-second watch, without waiting for it. */
  const watch = () => (feed as unknown as { watch(): void }).watch();

  beforeEach(() => {
    clock = Date.parse('2026-12-01T10:00:00Z');
    warn = jest.spyOn(Logger.prototype, 'warn').mockImplementation(() => undefined);
    log = jest.spyOn(Logger.prototype, 'log').mockImplementation(() => undefined);
  });

  afterEach(async () => {
    feed.onModuleDestroy();
    await transport.close();
    jest.restoreAllMocks();
  });

  it("subscribes through the transport with a consumer group of the instance's own, from the start of the replay window", async () => {
    await startFeed({ start: 7, end: 9 });
    expect(kafka.consumer.groupId).toBe(`test-service.${hostname()}.${process.pid}`);
    expect(kafka.consumer.seeks).toEqual([{ topic: REVOCATIONS_TOPIC, partition: 0, offset: '7' }]);
  });

  it('is neither ready nor stale until the replay has caught up, however long that takes; a slow replay is fresh only from the next checkpoint', async () => {
    await startFeed({ start: 7, end: 9 });
    clock += 5 * DEFAULT_REVOCATION_MAX_STALENESS_MS;
    kafka.consumer.fetched();
    expect({ ready: feed.ready, stale: feed.stale, stalenessMs: feed.stalenessMs }).toEqual({ ready: false, stale: false, stalenessMs: null });

    const revoked = newId('ses');
    await kafka.consumer.deliver(7, sessionsRevoked(revoked, clock - 60_000));
    await kafka.consumer.deliver(8, sessionsRevoked(newId('ses'), clock - 30_000));
    expect(view.isRevoked({ sub: 'key_x', sid: revoked, iat: 0 })).toBe(true);
    // Caught up with the offsets asked at start, 150 s ago: what came since, it has not been asked
    // about yet. Not ready until a checkpoint proves it current.
    expect({ ready: feed.ready, stale: feed.stale, stalenessMs: feed.stalenessMs }).toEqual({ ready: false, stale: true, stalenessMs: 5 * DEFAULT_REVOCATION_MAX_STALENESS_MS });
    kafka.consumer.fetched();
    await settle();
    expect({ ready: feed.ready, stale: feed.stale, stalenessMs: feed.stalenessMs }).toEqual({ ready: true, stale: false, stalenessMs: 0 });
  });

  it('goes stale after maxStalenessMs without a checkpoint (the end offsets asked of the brokers, all read), and recovers with the next one', async () => {
    await startFeed({ start: 0, end: 0 });
    expect({ ready: feed.ready, stale: feed.stale, stalenessMs: feed.stalenessMs }).toEqual({ ready: true, stale: false, stalenessMs: 0 });

    // Healthy and idle: an empty fetch every 100 ms prompts a checkpoint once a second, which keeps
    // it fresh indefinitely.
    for (let i = 0; i < 600; i++) {
      clock += 100;
      kafka.consumer.fetched();
      await settle();
    }
    expect(feed.stalenessMs).toBeLessThan(1000);
    expect({ ready: feed.ready, stale: feed.stale }).toEqual({ ready: true, stale: false });

    // Kafka is cut off: fetches stop completing. Exactly at the bound it still vouches; past it, not.
    clock += DEFAULT_REVOCATION_MAX_STALENESS_MS - (feed.stalenessMs ?? 0);
    expect({ ready: feed.ready, stale: feed.stale }).toEqual({ ready: true, stale: false });
    clock += 1;
    expect({ ready: feed.ready, stale: feed.stale, stalenessMs: feed.stalenessMs }).toEqual({
      ready: false,
      stale: true,
      stalenessMs: DEFAULT_REVOCATION_MAX_STALENESS_MS + 1,
    });
    watch();
    watch();
    expect(warn).toHaveBeenCalledTimes(1);
    expect(warn.mock.calls[0][0]).toMatchObject({ msg: expect.stringContaining('revocation feed stale'), max_staleness_ms: 30_000 });

    // Still cut off a minute later: still stale, no restart needed or attempted by the feed.
    clock += 60_000;
    expect(feed.stale).toBe(true);

    // Kafka is back: the first checkpoint, prompted by the first completed fetch, ends it.
    kafka.consumer.fetched();
    await settle();
    expect({ ready: feed.ready, stale: feed.stale, stalenessMs: feed.stalenessMs }).toEqual({ ready: true, stale: false, stalenessMs: 0 });
    watch();
    expect(log).toHaveBeenCalledWith(expect.objectContaining({ msg: expect.stringContaining('recovered'), refused_for_ms: 60_000 }));
  });

  it('honours a configured bound; a delivered revocation alone proves nothing about the other partitions', async () => {
    await startFeed({ start: 0, end: 0 }, 5000);
    expect(feed.maxStalenessMs).toBe(5000);
    clock += 4000;
    await kafka.consumer.deliver(0, sessionsRevoked(newId('ses'), clock));
    expect(feed.stalenessMs).toBe(4000);
    kafka.consumer.fetched();
    await settle();
    expect(feed.stalenessMs).toBe(0);
    clock += 5000;
    expect(feed.stale).toBe(false);
    clock += 1;
    expect(feed.stale).toBe(true);
  });

  it('is not ready while Kafka cannot be reached at start', async () => {
    kafka = fakeKafka();
    (kafka.kafka as unknown as { admin: () => unknown }).admin = () => ({
      connect: async () => {
        throw new Error('ECONNREFUSED');
      },
      disconnect: async () => undefined,
    });
    createFeed();
    await settle();
    clock += 10 * DEFAULT_REVOCATION_MAX_STALENESS_MS;
    expect({ ready: feed.ready, stale: feed.stale }).toEqual({ ready: false, stale: false });
  });
});

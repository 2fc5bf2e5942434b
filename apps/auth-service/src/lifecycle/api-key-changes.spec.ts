import { EventEmitter } from 'node:events';
import type { AuthConfig } from '../config/config';
import type { ApiKeyCache } from '../keys/api-key-cache';
import type { RedisClient } from '../sessions/redis-connection';
import { ApiKeyChanges } from './api-key-changes';

/** The subscription connection: what ApiKeyChanges listens to. */
class FakeSubscriber extends EventEmitter {
  subscribe = jest.fn(async () => 1);
  quit = jest.fn(async () => 'OK');
}

function setup() {
  const subscriber = new FakeSubscriber();
  const redis = { duplicate: () => subscriber, publish: jest.fn(async () => 1) };
  const cache = { setTrusted: jest.fn(), forgetId: jest.fn(), forget: jest.fn() };
  const changes = new ApiKeyChanges(redis as unknown as RedisClient, { REDIS_KEY_PREFIX: 'p:' } as AuthConfig, cache as unknown as ApiKeyCache);
  changes.onApplicationBootstrap();
  return { subscriber, redis, cache, changes };
}

const flush = () => new Promise((resolve) => jest.requireActual<typeof import('timers')>('timers').setImmediate(resolve));

describe(ApiKeyChanges.name, () => {
  beforeEach(() => jest.useFakeTimers({ doNotFake: ['setImmediate'] }));
  afterEach(() => jest.useRealTimers());

  it('trusts the cache once subscribed, forgets each key announced, and says it is there every second', async () => {
    const { subscriber, redis, cache, changes } = setup();
    expect(cache.setTrusted).not.toHaveBeenCalled();
    subscriber.emit('ready');
    await flush();
    expect(subscriber.subscribe).toHaveBeenCalledWith('p:api-key-changed');
    expect(cache.setTrusted).toHaveBeenLastCalledWith(true);
    subscriber.emit('message', 'p:api-key-changed', 'key-uuid');
    expect(cache.forgetId).toHaveBeenCalledWith('key-uuid');
    subscriber.emit('message', 'p:api-key-changed', '-');
    expect(cache.forgetId).toHaveBeenCalledTimes(1);
    jest.advanceTimersByTime(1000);
    expect(redis.publish).toHaveBeenCalledWith('p:api-key-changed', '-');
    await changes.onApplicationShutdown();
  });

  it('stops trusting the cache after three silent seconds without any close, and trusts it again (emptied) when the channel is heard', async () => {
    const { subscriber, cache, changes } = setup();
    subscriber.emit('ready');
    await flush();
    cache.setTrusted.mockClear();
    // A deaf subscription: no 'close', no message, not even the instance's own heartbeats.
    jest.advanceTimersByTime(4000);
    expect(cache.setTrusted).toHaveBeenCalledWith(false);
    cache.setTrusted.mockClear();
    subscriber.emit('message', 'p:api-key-changed', '-');
    expect(cache.setTrusted).toHaveBeenCalledTimes(1);
    expect(cache.setTrusted).toHaveBeenCalledWith(true);
    await changes.onApplicationShutdown();
  });

  it("stops trusting the cache when the connection closes", async () => {
    const { subscriber, cache, changes } = setup();
    subscriber.emit('ready');
    await flush();
    subscriber.emit('close');
    expect(cache.setTrusted).toHaveBeenLastCalledWith(false);
    await changes.onApplicationShutdown();
  });
});

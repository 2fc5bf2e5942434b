import { Logger } from '@nestjs/common';
import Redis, { Cluster } from 'ioredis';
import type { RedisTarget } from '../config/redis-url';

/**
 * What the session store, the throttles and the settings sessions talk to: one Redis or a Redis
 * Cluster (ADR 0018). Every command they send names keys that hash to one cluster slot.
 */
export type RedisClient = Redis | Cluster;

/**
 * Fail fast while Redis is down (the API answers 503) instead of queueing requests: no offline
 * queue, one retry, a 2 s connect timeout. Commands issued in one tick (by one request or by many)
 * leave in one write (auto-pipelining): fewer syscalls per token, and the pointer and session
 * writes of an exchange share a round trip (on a cluster, one per node).
 */
const CONNECT_TIMEOUT_MS = 2000;
/**
 * A Redis that accepts connections but answers slowly must not hang the token endpoints: a command
 * unanswered after 900 ms fails ("Command timed out", a dependency failure: 503). Healthy Redis
 * answers in well under a millisecond here. A request makes at most two sequential round trips, so
 * the worst case is two timeouts: 1.8 s, inside the 2 s the endpoints promise while Redis is slow
 * (with 1 s, the resilience tier saw 2000 ms answers when both round trips timed out).
 */
const COMMAND_TIMEOUT_MS = 900;

/**
 * Builds the client for `REDIS_URL`, returned once it is ready (or its first attempt failed): with
 * the offline queue off, every command sent before that is refused ("Stream isn't writeable", for a
 * cluster "Cluster isn't ready"), auto-pipelined ones included, so the first requests after boot
 * would answer 503 although Redis is fine (the integration tier saw exactly that on a loaded
 * machine). If Redis is unreachable at boot, the service starts anyway and answers 503 while the
 * client keeps reconnecting.
 */
export async function createRedisClient(target: RedisTarget, logger = new Logger('redis')): Promise<RedisClient> {
  if (target.kind === 'single') {
    const redis = new Redis(target.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      lazyConnect: false,
      enableAutoPipelining: true,
    });
    await firstConnection(redis, () => logger.warn({ msg: 'redis unreachable at start; retrying in the background' }));
    return redis;
  }
  const cluster = new Cluster(target.seeds, {
    enableOfflineQueue: false,
    enableAutoPipelining: true,
    enableReadyCheck: true,
    scaleReads: 'master',
    slotsRefreshTimeout: CONNECT_TIMEOUT_MS,
    // As the single client's default: back off to one attempt every 2 s (ioredis' cluster default
    // retries every ~100 ms while the cluster is unreachable).
    clusterRetryStrategy: (times) => Math.min(times * 50, CONNECT_TIMEOUT_MS),
    // MOVED/ASK while slots migrate need one or two; more only delay the 503 while a node is down.
    maxRedirections: 6,
    retryDelayOnFailover: 100,
    retryDelayOnClusterDown: 100,
    // After a failover, commands of an auto-pipelined batch can come back MOVED without ioredis
    // following them (503, see isDependencyFailure); the slot map is reloaded every second so that
    // such answers stop within about a second (ADR 0030).
    slotsRefreshInterval: 1000,
    redisOptions: {
      username: target.username,
      password: target.password,
      maxRetriesPerRequest: 1,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
    },
  });
  // One line per outage, not one per reconnection attempt.
  let quietUntil = 0;
  cluster.on('error', (error: Error) => {
    if (Date.now() < quietUntil) return;
    quietUntil = Date.now() + 10_000;
    logger.warn({ msg: 'redis cluster unavailable', error: error.message });
  });
  cluster.on('ready', () => (quietUntil = 0));
  await firstConnection(cluster, () => logger.warn({ msg: 'redis cluster unreachable at start; retrying in the background' }));
  // Its outage errors (no node answers, CLUSTERDOWN...) are dependency failures to service-kit: 503.
  return cluster;
}

/** Resolves when the client is ready, or (calling `unreachable`) when its first attempt failed. */
function firstConnection(client: RedisClient, unreachable: () => void): Promise<void> {
  if (client.status === 'ready') return Promise.resolve();
  return new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      client.off('ready', done);
      client.off('close', failed);
      resolve();
    };
    const failed = () => {
      unreachable();
      done();
    };
    const timer = setTimeout(failed, 3 * CONNECT_TIMEOUT_MS);
    client.once('ready', done);
    client.once('close', failed);
  });
}

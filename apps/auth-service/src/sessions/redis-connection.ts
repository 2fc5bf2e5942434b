import { Logger } from '@nestjs/common';
import Redis, { Cluster } from 'ioredis';

/**
 * What the session store, the throttles and the settings sessions talk to: one Redis or a Redis
 * Cluster (ADR 0018). Every command they send names keys that hash to one cluster slot.
 */
export type RedisClient = Redis | Cluster;

/** The two forms `REDIS_URL` takes. */
export type RedisTarget =
  | { kind: 'single'; url: string }
  | { kind: 'cluster'; seeds: Array<{ host: string; port: number }>; username?: string; password?: string };

const CLUSTER_SCHEME = 'redis-cluster://';

/** The form of `REDIS_URL`, for error messages (which never repeat the value: it may hold a password). */
export const REDIS_URL_FORMS =
  'redis://[user:password@]host:port[/db], rediss://... (TLS) or redis-cluster://[user:password@]host:port[,host:port...]';

/**
 * Parses `REDIS_URL`: `redis://` / `rediss://` for one Redis (handed to ioredis as it is), or
 * `redis-cluster://[user:password@]host:port[,host:port...]` for a Redis Cluster: seed nodes,
 * comma-separated (any master or replica; the client learns the rest of the cluster from them),
 * optional credentials (percent-encoded), no database (a cluster only has database 0), no options.
 * Throws an Error whose message says what is wrong without quoting the value.
 */
export function parseRedisUrl(value: string): RedisTarget {
  if (value.toLowerCase().startsWith(CLUSTER_SCHEME)) return parseClusterUrl(value.slice(CLUSTER_SCHEME.length));
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new Error(`is not a URL; expected ${REDIS_URL_FORMS}`);
  }
  if (url.protocol !== 'redis:' && url.protocol !== 'rediss:') {
    throw new Error(`has scheme ${url.protocol.slice(0, 20)}//; expected ${REDIS_URL_FORMS}`);
  }
  if (!url.hostname) throw new Error(`names no host; expected ${REDIS_URL_FORMS}`);
  if (url.pathname !== '' && url.pathname !== '/' && !/^\/\d{1,2}$/.test(url.pathname)) {
    throw new Error('has a path that is not a database number (redis://host:port/0)');
  }
  return { kind: 'single', url: value };
}

function parseClusterUrl(rest: string): RedisTarget {
  const at = rest.lastIndexOf('@');
  const userinfo = at >= 0 ? rest.slice(0, at) : null;
  let hosts = at >= 0 ? rest.slice(at + 1) : rest;
  if (hosts.endsWith('/0')) hosts = hosts.slice(0, -2);
  else if (hosts.endsWith('/')) hosts = hosts.slice(0, -1);
  if (/[/?#]/.test(hosts)) {
    throw new Error('redis-cluster:// takes seed nodes only: no database (a cluster has only database 0), path or options');
  }
  if (hosts === '') throw new Error(`redis-cluster:// names no seed node; expected ${REDIS_URL_FORMS}`);
  const seeds = hosts.split(',').map((seed, i) => {
    const m = /^(?:\[([0-9A-Fa-f:.]+)\]|([A-Za-z0-9._-]+)):(\d{1,5})$/.exec(seed.trim());
    const port = m ? Number(m[3]) : 0;
    if (!m || port < 1 || port > 65535) throw new Error(`redis-cluster:// seed node ${i + 1} is not host:port (port 1-65535)`);
    return { host: m[1] ?? m[2], port };
  });
  const target: RedisTarget = { kind: 'cluster', seeds };
  if (userinfo !== null) {
    const colon = userinfo.indexOf(':');
    try {
      const username = decodeURIComponent(colon >= 0 ? userinfo.slice(0, colon) : userinfo);
      const password = colon >= 0 ? decodeURIComponent(userinfo.slice(colon + 1)) : '';
      if (username) target.username = username;
      if (password) target.password = password;
    } catch {
      throw new Error('redis-cluster:// credentials are not validly percent-encoded');
    }
  }
  return target;
}

/** Null when `value` is a valid `REDIS_URL`, else what is wrong with it (the config schema reports it). */
export function redisUrlProblem(value: string): string | null {
  try {
    parseRedisUrl(value);
    return null;
  } catch (e) {
    return (e as Error).message;
  }
}

/**
 * Fail fast while Redis is down (the API answers 503) instead of queueing requests: no offline
 * queue, one retry, a 2 s connect timeout. Commands issued in one tick (by one request or by many)
 * leave in one write (auto-pipelining): fewer syscalls per token, and the pointer and session
 * writes of an exchange share a round trip (on a cluster, one per node).
 */
const CONNECT_TIMEOUT_MS = 2000;
/**
 * A Redis that accepts connections but answers slowly must not hang the token endpoints: a command
 * unanswered after 1 s fails ("Command timed out", a dependency failure: 503). Healthy Redis answers
 * in well under a millisecond here; a request makes at most two sequential round trips.
 */
const COMMAND_TIMEOUT_MS = 1000;

/**
 * Builds the client for `REDIS_URL`. A cluster client is returned once it has loaded the slot map
 * and is ready (or its first attempt failed): with the offline queue off, every command sent before
 * that is refused ("Cluster isn't ready"), auto-pipelined ones included, so the first requests after
 * boot would fail although the cluster is fine. If the cluster is unreachable at boot, the service
 * starts anyway and answers 503 while the client keeps reconnecting, exactly as with one Redis.
 */
export async function createRedisClient(target: RedisTarget, logger = new Logger('redis')): Promise<RedisClient> {
  if (target.kind === 'single') {
    return new Redis(target.url, {
      enableOfflineQueue: false,
      maxRetriesPerRequest: 1,
      connectTimeout: CONNECT_TIMEOUT_MS,
      commandTimeout: COMMAND_TIMEOUT_MS,
      lazyConnect: false,
      enableAutoPipelining: true,
    });
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
  await new Promise<void>((resolve) => {
    const done = () => {
      clearTimeout(timer);
      cluster.off('ready', done);
      cluster.off('close', failed);
      resolve();
    };
    const failed = () => {
      logger.warn({ msg: 'redis cluster unreachable at start; retrying in the background' });
      done();
    };
    const timer = setTimeout(failed, 3 * CONNECT_TIMEOUT_MS);
    cluster.once('ready', done);
    cluster.once('close', failed);
  });
  // Its outage errors (no node answers, CLUSTERDOWN...) are dependency failures to service-kit: 503.
  return cluster;
}

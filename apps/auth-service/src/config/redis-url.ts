/** REDIS_URL: one Redis or a Redis Cluster (ADR 0018), checked when the configuration is loaded. */

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

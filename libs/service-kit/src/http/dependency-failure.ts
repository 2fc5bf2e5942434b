import { PlatformError, RETRY_SHORTLY } from './platform-error';

// 57014: a statement cancelled by the pool's statement_timeout (Postgres too slow, or a lock held
// elsewhere): an outage to the caller, who may retry, not a bug of the request.
const NETWORK_CODES = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EPIPE', 'ENOTFOUND', 'EHOSTUNREACH', 'EAI_AGAIN', '57P01', '57P03', '53300', '57014']);
const MESSAGES = [
  /Connection terminated/i,
  /timeout exceeded when trying to connect/i,
  /enableOfflineQueue/i,
  /Connection is closed/i,
  // ioredis, for commands in flight (a pipeline) when a node's connection drops (a node killed).
  /Command aborted due to connection close/i,
  /Reached the max retries per request/i,
  /Client has encountered a connection error/i,
  /connect ECONNREFUSED/i,
  // ioredis commandTimeout: Redis reachable but too slow to answer in time.
  /Command timed out/i,
  // A Redis Cluster that cannot be reached or cannot serve now (no node answers, no slot map,
  // CLUSTERDOWN or TRYAGAIN past the client's retries).
  /None of startup nodes is available/,
  /Failed to refresh slots cache/,
  /Too many Cluster redirections/,
  /CLUSTERDOWN/,
  // A redirection that reached the caller: ioredis follows MOVED and ASK itself, except in a
  // pipeline (auto-pipelining included) whose other commands were not redirected. The slot moved
  // (a failover): the client's map catches up within slotsRefreshInterval; a retry succeeds.
  /^(?:MOVED|ASK) \d+ /,
  /TRYAGAIN/,
  /Cluster is (?:ended|disconnected|disconnecting)/,
  /Cluster isn't ready/,
];

/**
 * True when an error means "a dependency (Postgres, Redis, Kafka) is unreachable", which the API
 * answers with 503 and Retry-After, as opposed to a bug, which is a 500.
 */
export function isDependencyFailure(e: unknown): boolean {
  if (!e || typeof e !== 'object') return false;
  if (e instanceof DependencyUnavailableError) return true;
  const { code, message, name } = e as { code?: unknown; message?: unknown; name?: unknown };
  if (typeof code === 'string' && NETWORK_CODES.has(code)) return true;
  if (name === 'MaxRetriesPerRequestError' || name === 'KafkaJSConnectionError') return true;
  return typeof message === 'string' && MESSAGES.some((m) => m.test(message));
}

/**
 * Thrown by code that reached its dependency but could not get the guarantee it needs from it (a
 * write Redis could not confirm on a replica in time): an outage to the caller, answered 503 like
 * an unreachable dependency. The message names what was missing, never a value, and goes to the log
 * only: the caller reads the edge's outage answer, the same as for a dependency it cannot reach
 * (`sendError`). Unlike other answers it keeps its stack, logged with the outage.
 */
export class DependencyUnavailableError extends PlatformError {
  constructor(message: string) {
    super(503, 'dependency_unavailable', 'A dependency is unavailable; retry shortly.', {
      oauthError: 'temporarily_unavailable',
      headers: RETRY_SHORTLY,
      message,
    });
    Error.captureStackTrace(this, DependencyUnavailableError);
  }
}

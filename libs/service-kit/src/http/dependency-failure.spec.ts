import { DependencyUnavailableError, isDependencyFailure } from './dependency-failure';

describe(isDependencyFailure.name, () => {
  it('recognises unreachable Postgres, Redis and Kafka', () => {
    expect(isDependencyFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDependencyFailure(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(true);
    expect(isDependencyFailure(Object.assign(new Error('x'), { name: 'KafkaJSConnectionError' }))).toBe(true);
  });

  it('recognises a Postgres too slow to answer within the statement timeout (57014)', () => {
    expect(isDependencyFailure(Object.assign(new Error('canceling statement due to statement timeout'), { code: '57014' }))).toBe(true);
  });

  it('recognises a slow Redis and an unavailable Redis Cluster', () => {
    for (const message of [
      'Command timed out',
      'None of startup nodes is available',
      'Failed to refresh slots cache.',
      'Too many Cluster redirections. Last error: ReplyError: CLUSTERDOWN The cluster is down',
      'CLUSTERDOWN The cluster is down',
      'Command aborted due to connection close',
      'MOVED 3761 127.0.0.1:7001',
      'TRYAGAIN Multiple keys request during rehashing of slot',
      'Cluster is ended.',
    ]) {
      expect({ message, outage: isDependencyFailure(new Error(message)) }).toEqual({ message, outage: true });
    }
    expect(isDependencyFailure(new Error('ERR Error running script: attempt to index a nil value'))).toBe(false);
  });

  it('counts a guarantee the dependency could not give as an outage', () => {
    expect(isDependencyFailure(new DependencyUnavailableError('Redis: 0 of 1 replicas acknowledged the write within 200 ms'))).toBe(true);
  });

  it('does not mistake a bug for an outage', () => {
    expect(isDependencyFailure(new TypeError('cannot read properties of undefined'))).toBe(false);
    expect(isDependencyFailure(null)).toBe(false);
  });
});

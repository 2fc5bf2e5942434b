import { ConfigError } from '@invoicing/service-kit';
import { loadAuthConfig } from '../config/config';
import { parseRedisUrl, redisUrlProblem } from './redis-url';

describe(parseRedisUrl.name, () => {
  it('keeps redis:// and rediss:// URLs for one Redis as they are', () => {
    for (const url of ['redis://127.0.0.1:6379/0', 'redis://:s3cret@redis:6379', 'rediss://user:pw@redis.example.com:6380/2', 'redis://redis']) {
      expect(parseRedisUrl(url)).toEqual({ kind: 'single', url });
    }
  });

  it('reads redis-cluster:// seed nodes, with optional percent-encoded credentials', () => {
    expect(parseRedisUrl('redis-cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003')).toEqual({
      kind: 'cluster',
      seeds: [
        { host: '127.0.0.1', port: 7001 },
        { host: '127.0.0.1', port: 7002 },
        { host: '127.0.0.1', port: 7003 },
      ],
    });
    expect(parseRedisUrl('redis-cluster://auth:p%40ss%3Aw0rd@redis-0.redis:6379, redis-1.redis:6379/')).toEqual({
      kind: 'cluster',
      seeds: [
        { host: 'redis-0.redis', port: 6379 },
        { host: 'redis-1.redis', port: 6379 },
      ],
      username: 'auth',
      password: 'p@ss:w0rd',
    });
    expect(parseRedisUrl('REDIS-CLUSTER://:pw@[::1]:7001/0')).toEqual({ kind: 'cluster', seeds: [{ host: '::1', port: 7001 }], password: 'pw' });
  });

  it('says what is wrong with a bad value', () => {
    const cases: Array<[string, RegExp]> = [
      ['not a url', /is not a URL; expected redis:\/\/.*redis-cluster:\/\//],
      ['http://127.0.0.1:6379', /has scheme http:\/\/; expected/],
      ['redis+cluster://127.0.0.1:7001', /has scheme redis\+cluster:\/\/; expected/],
      ['redis://127.0.0.1:6379/sessions', /path that is not a database number/],
      ['redis-cluster://', /names no seed node/],
      ['redis-cluster://127.0.0.1', /seed node 1 is not host:port/],
      ['redis-cluster://127.0.0.1:7001,,127.0.0.1:7003', /seed node 2 is not host:port/],
      ['redis-cluster://127.0.0.1:7001,127.0.0.1:70000', /seed node 2 is not host:port \(port 1-65535\)/],
      ['redis-cluster://127.0.0.1:7001/1', /no database \(a cluster has only database 0\)/],
      ['redis-cluster://127.0.0.1:7001?tls=true', /no database .*options/],
      ['redis-cluster://u:%E0%A4%A@127.0.0.1:7001', /not validly percent-encoded/],
    ];
    for (const [value, message] of cases) expect({ value, problem: redisUrlProblem(value) }).toEqual({ value, problem: expect.stringMatching(message) });
    expect(redisUrlProblem('redis-cluster://127.0.0.1:7001')).toBeNull();
  });

  it('stops the service at start with a config error naming REDIS_URL, never printing the password', () => {
    let error: unknown;
    try {
      loadAuthConfig({ REDIS_URL: 'redis-cluster://auth:hunter2@127.0.0.1:7001,127.0.0.1' });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as ConfigError).message).toContain('REDIS_URL: redis-cluster:// seed node 2 is not host:port');
    expect((error as ConfigError).message).not.toContain('hunter2');
    expect(loadAuthConfig({ REDIS_URL: 'redis-cluster://127.0.0.1:7001,127.0.0.1:7002' }).REDIS_URL).toBe(
      'redis-cluster://127.0.0.1:7001,127.0.0.1:7002',
    );
  });
});

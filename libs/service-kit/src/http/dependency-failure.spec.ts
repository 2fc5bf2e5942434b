import { isDependencyFailure } from './dependency-failure';

describe(isDependencyFailure.name, () => {
  it('recognises unreachable Postgres, Redis and Kafka', () => {
    expect(isDependencyFailure(Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), { code: 'ECONNREFUSED' }))).toBe(true);
    expect(isDependencyFailure(new Error("Stream isn't writeable and enableOfflineQueue options is false"))).toBe(true);
    expect(isDependencyFailure(Object.assign(new Error('x'), { name: 'KafkaJSConnectionError' }))).toBe(true);
  });

  it('does not mistake a bug for an outage', () => {
    expect(isDependencyFailure(new TypeError('cannot read properties of undefined'))).toBe(false);
    expect(isDependencyFailure(null)).toBe(false);
  });
});

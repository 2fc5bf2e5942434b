import { PlatformError } from '@invoicing/service-kit';
import { ListParams } from './list-params';

const KEY = `key_${'0'.repeat(31)}1`;

/** The 400's `errors[]`, or null when the query passes. */
function refusal(run: () => void): Array<{ field: string; code: string }> | null {
  try {
    run();
    return null;
  } catch (e) {
    if (!(e instanceof PlatformError)) throw e;
    expect(e.status).toBe(400);
    return (e.errors ?? []).map(({ field, code }) => ({ field, code }));
  }
}

describe('ListParams (the settings lists: keys, audit log)', () => {
  it('reads limit, an id and the filters, with defaults when absent', () => {
    const params = new ListParams({ limit: '5', starting_after: KEY, status: 'revoked,expired,revoked' }, ['limit', 'starting_after', 'status']);
    expect(params.limit(100)).toBe(5);
    expect(params.id('starting_after', 'key', 'an API key id')).toBe(KEY);
    expect(params.someOf('status', ['active', 'revoked', 'expired'] as const)).toEqual(['revoked', 'expired']);
    expect(() => params.check()).not.toThrow();
    const none = new ListParams({}, ['limit', 'status', 'type']);
    expect([none.limit(20), none.someOf('status', ['active']), none.oneOf('type', ['a'])]).toEqual([20, undefined, undefined]);
  });

  it('refuses a parameter given twice rather than dropping it, naming it with every other fault at once', () => {
    // What the query parser hands over for ?type=a&type=b&limit=0&colour=red.
    const params = new ListParams({ type: ['api_key.created', 'api_key.rolled'], limit: '0', colour: 'red', api_key_id: 'nope' }, ['limit', 'type', 'api_key_id']);
    expect(
      refusal(() => {
        params.limit(20);
        params.oneOf('type', ['api_key.created', 'api_key.rolled']);
        params.id('api_key_id', 'key', 'an API key id');
        params.check();
      }),
    ).toEqual([
      { field: 'colour', code: 'unknown_parameter' },
      { field: 'limit', code: 'out_of_range' },
      { field: 'type', code: 'repeated' },
      { field: 'api_key_id', code: 'invalid_format' },
    ]);
  });

  it('refuses limits outside 1..100 and values outside the allowed ones', () => {
    for (const limit of ['0', '101', '1.5', '-1', '', '1e2', '0100']) {
      const errors = refusal(() => {
        const p = new ListParams({ limit }, ['limit']);
        p.limit(20);
        p.check();
      });
      expect({ limit, errors }).toEqual({ limit, errors: [{ field: 'limit', code: 'out_of_range' }] });
    }
    const check = (query: Record<string, unknown>) =>
      refusal(() => {
        const p = new ListParams(query, ['status']);
        p.someOf('status', ['active', 'revoked', 'expired'] as const);
        p.check();
      });
    expect(check({ status: 'live' })).toEqual([{ field: 'status', code: 'invalid_value' }]);
    expect(check({ status: '' })).toEqual([{ field: 'status', code: 'invalid_value' }]);
    expect(check({ status: 'active,' })).toEqual([{ field: 'status', code: 'invalid_value' }]);
    expect(check({ status: ['active', 'revoked'] })).toEqual([{ field: 'status', code: 'repeated' }]);
    expect(check({ status: 'active,revoked' })).toBeNull();
  });
});

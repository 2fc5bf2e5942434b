import { ConfigError } from '@invoicing/service-kit';
import { loadResourceConfig, resourceEnvSpec, ResourceServiceIdentity } from './resource-config';

const EXPENSES: ResourceServiceIdentity = { name: 'expense-service', schema: 'expenses', role: 'expense' };

function problemsOf(env: NodeJS.ProcessEnv): string {
  try {
    loadResourceConfig(EXPENSES, env);
  } catch (e) {
    expect(e).toBeInstanceOf(ConfigError);
    return (e as ConfigError).message;
  }
  throw new Error('expected a ConfigError');
}

describe('REVOCATION_MAX_STALENESS_MS (ADR 0017)', () => {
  it('defaults to 30 s and is listed by env-spec', () => {
    expect(loadResourceConfig(EXPENSES, {}).REVOCATION_MAX_STALENESS_MS).toBe(30_000);
    expect(resourceEnvSpec(EXPENSES)).toContainEqual({ name: 'REVOCATION_MAX_STALENESS_MS', required: false, secret: false });
  });

  it('accepts whole milliseconds from 5 s to the access-token lifetime', () => {
    expect(loadResourceConfig(EXPENSES, { REVOCATION_MAX_STALENESS_MS: '5000' }).REVOCATION_MAX_STALENESS_MS).toBe(5000);
    expect(loadResourceConfig(EXPENSES, { REVOCATION_MAX_STALENESS_MS: '3600000' }).REVOCATION_MAX_STALENESS_MS).toBe(3_600_000);
  });

  it('stops the service on a value that is not a whole number of milliseconds in range, naming the variable', () => {
    for (const value of ['0', '-1', '4999', '3600001', '30s', '1500.5', '']) {
      expect({ value, message: problemsOf({ REVOCATION_MAX_STALENESS_MS: value }) }).toEqual({
        value,
        message: expect.stringContaining('REVOCATION_MAX_STALENESS_MS:'),
      });
    }
  });

  it('must leave room for several fetch waits', () => {
    expect(problemsOf({ REVOCATION_FETCH_MAX_WAIT_MS: '2000', REVOCATION_MAX_STALENESS_MS: '9999' })).toContain(
      'REVOCATION_MAX_STALENESS_MS: must be at least 5 x REVOCATION_FETCH_MAX_WAIT_MS (10000)',
    );
    expect(loadResourceConfig(EXPENSES, { REVOCATION_FETCH_MAX_WAIT_MS: '5000' }).REVOCATION_MAX_STALENESS_MS).toBe(30_000);
  });
});

describe('list limits', () => {
  it('default to pages of 512 KiB and one list per organization at a time with 16 waiting, listed by env-spec', () => {
    const config = loadResourceConfig(EXPENSES, {});
    expect([config.LIST_PAGE_MAX_BYTES, config.LIST_CONCURRENCY_PER_ORGANIZATION, config.LIST_QUEUE_PER_ORGANIZATION]).toEqual([512 * 1024, 1, 16]);
    for (const name of ['LIST_PAGE_MAX_BYTES', 'LIST_CONCURRENCY_PER_ORGANIZATION', 'LIST_QUEUE_PER_ORGANIZATION']) {
      expect(resourceEnvSpec(EXPENSES)).toContainEqual({ name, required: false, secret: false });
    }
  });

  it('stops the service on a page budget or concurrency below one, naming the variable', () => {
    expect(problemsOf({ LIST_PAGE_MAX_BYTES: '0' })).toContain('LIST_PAGE_MAX_BYTES:');
    expect(problemsOf({ LIST_CONCURRENCY_PER_ORGANIZATION: '0' })).toContain('LIST_CONCURRENCY_PER_ORGANIZATION:');
    expect(problemsOf({ LIST_QUEUE_PER_ORGANIZATION: '-1' })).toContain('LIST_QUEUE_PER_ORGANIZATION:');
    expect(loadResourceConfig(EXPENSES, { LIST_QUEUE_PER_ORGANIZATION: '0' }).LIST_QUEUE_PER_ORGANIZATION).toBe(0);
  });
});

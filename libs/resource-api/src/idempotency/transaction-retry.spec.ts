import { isRetriableTransactionError, retryingTransaction, TRANSACTION_ATTEMPTS } from './transaction-retry';

const deadlock = () => Object.assign(new Error('deadlock detected'), { code: '40P01' });

describe(retryingTransaction.name, () => {
  it('runs a transaction Postgres aborted for a deadlock or a serialization failure again, and answers what the next attempt answers', async () => {
    const failures = [deadlock(), Object.assign(new Error('could not serialize access'), { code: '40001' })];
    const retried: number[] = [];
    let calls = 0;
    const result = await retryingTransaction(
      async () => {
        calls += 1;
        const failure = failures.shift();
        if (failure) throw failure;
        return 'created';
      },
      (attempt) => retried.push(attempt),
    );
    expect({ result, calls, retried }).toEqual({ result: 'created', calls: 3, retried: [1, 2] });
  });

  it(`gives up after ${TRANSACTION_ATTEMPTS} attempts with the last failure`, async () => {
    let calls = 0;
    const failure = retryingTransaction(async () => {
      calls += 1;
      throw deadlock();
    });
    await expect(failure).rejects.toMatchObject({ code: '40P01' });
    expect(calls).toBe(TRANSACTION_ATTEMPTS);
  });

  it('throws any other failure at once: a unique violation, a 4xx answer, an error without a code', async () => {
    for (const error of [Object.assign(new Error('duplicate key'), { code: '23505' }), new Error('plain'), null]) {
      let calls = 0;
      await expect(
        retryingTransaction(async () => {
          calls += 1;
          throw error;
        }),
      ).rejects.toBe(error);
      expect(calls).toBe(1);
    }
    expect(isRetriableTransactionError(undefined)).toBe(false);
  });
});

/**
 * Postgres' answers to a transaction it aborted so that another could go on: a deadlock (40P01) or
 * a serialization failure (40001). Nothing of the aborted transaction stays, so it can be run again.
 */
const RETRIABLE_CODES = new Set(['40P01', '40001']);

/** Attempts of a transaction Postgres aborted for a deadlock or a serialization failure. */
export const TRANSACTION_ATTEMPTS = 3;

export function isRetriableTransactionError(e: unknown): boolean {
  return RETRIABLE_CODES.has((e as { code?: unknown } | null)?.code as string);
}

/**
 * Runs `transaction` again when Postgres aborted it for a deadlock or a serialization failure, up to
 * {@link TRANSACTION_ATTEMPTS} times in all; any other failure, or the last attempt's, is thrown.
 * `retried` is told of each retry (for a log line).
 */
export async function retryingTransaction<T>(transaction: () => Promise<T>, retried?: (attempt: number, error: unknown) => void): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await transaction();
    } catch (e) {
      if (attempt >= TRANSACTION_ATTEMPTS || !isRetriableTransactionError(e)) throw e;
      retried?.(attempt, e);
    }
  }
}

/** A token pair as the SDK keeps it between calls (and, with a shared store, between processes). */
export interface StoredTokens {
  accessToken: string;
  /** Epoch ms: the local clock when the token response arrived, plus `expires_in`. */
  accessTokenExpiresAt: number;
  /**
   * Epoch ms when the token response arrived. Optional for stores written by other code; without
   * it the SDK cannot know the token's lifetime and refreshes `refreshAheadSeconds` before expiry.
   */
  accessTokenIssuedAt?: number;
  /** Null once presented: a refresh token is spent before the request that presents it is sent. */
  refreshToken: string | null;
  /** Granted scopes, space-separated. */
  scope: string;
  /**
   * The Client ID of the API key the tokens belong to; the SDK writes it and ignores a stored pair
   * whose `clientId` differs from its own (two keys sharing one store never use each other's
   * session). A pair without it (written by other code) is taken as the reader's own.
   */
  clientId?: string;
}

/**
 * Where the SDK keeps its tokens. The default keeps them in memory, one session per `Invoicing`
 * instance. Supply a store to share one session among instances or processes (fewer sessions,
 * fewer exchanges); a store shared by several processes MUST implement `lock`, or two processes
 * may present the same refresh token, which revokes every session of the API key.
 *
 * `get` must return what the last `set` wrote (read-your-writes): a store that answers with an
 * older pair can hand out a refresh token that was already spent.
 *
 * Errors thrown by `get`, `set` and `lock` reach the caller as they are (not wrapped in an
 * `InvoicingError`, and with whatever they carry): keep token values out of their messages.
 */
export interface TokenStore {
  get(): Promise<StoredTokens | null> | StoredTokens | null;
  set(tokens: StoredTokens | null): Promise<void> | void;
  /**
   * Runs `fn` under a lock exclusive across every process sharing the store (a Redis lock, a
   * database advisory lock, a file lock), and answers what `fn` answers: `return fn()` (or
   * `await fn()`), holding the lock until it settles. Renewal runs inside it and re-reads the
   * store first, since another process may have renewed already. Should `lock` settle before
   * `fn`'s promise does (a lease that expired), the SDK still waits for `fn` before its next
   * renewal; a `lock` that resolves without calling `fn` fails the renewal with an `InvoicingError`.
   */
  lock?<T>(fn: () => Promise<T>): Promise<T>;
}

/** The default store: this instance's memory. */
export class MemoryTokenStore implements TokenStore {
  #tokens: StoredTokens | null = null;

  get(): StoredTokens | null {
    return this.#tokens;
  }

  set(tokens: StoredTokens | null): void {
    this.#tokens = tokens;
  }
}

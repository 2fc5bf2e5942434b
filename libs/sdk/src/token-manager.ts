import type { components } from './generated/openapi';
import { InvoicingError } from './errors';
import type { CallRetryTraits } from './retry';
import type { StoredTokens, TokenStore } from './token-store';
import type { AccessTokenSource, Transport } from './transport';

type TokenResponse = components['schemas']['TokenResponse'];

export const TOKEN_PATH = '/api/v1/auth/token';
export const REFRESH_PATH = '/api/v1/auth/refresh';

/** A second session is harmless, so the exchange is repeated after a lost answer. */
const EXCHANGE_RETRY: CallRetryTraits = { retries: true, safeToRepeat: true, idempotencyKey: false };
/** A refresh token is presented once, whatever happens to the answer. */
const REFRESH_RETRY: CallRetryTraits = { retries: false, safeToRepeat: false, idempotencyKey: false };

/** Refresh when less than this share of a token's lifetime is left, if that is sooner than `refreshAheadMs`. */
const REFRESH_AHEAD_SHARE = 0.1;

/**
 * What a token may consist of: visible ASCII, as RFC 6750's b64token and RFC 6749's VSCHAR are. A
 * token with anything else could not be sent in an `Authorization` header, and the runtime's error
 * about it would quote the header value, token included.
 */
const TOKEN_SHAPE = /^[\x21-\x7e]+$/;

export interface TokenManagerConfig {
  transport: Transport;
  store: TokenStore;
  clientId: string;
  clientSecret: string;
  /** Space-separated subset of the key's scopes; absent: all of them. */
  scope?: string;
  now: () => number;
  refreshAheadMs: number;
}

/**
 * Keeps one session (a refresh-token family) alive for all calls of an `Invoicing` instance.
 *
 * The server revokes every session of the API key when a refresh token is presented twice, so
 * the rules here are about making that impossible rather than unlikely:
 * - one renewal at a time (in this process by a shared promise, across processes by the store's
 *   `lock`), and every caller waiting for a token waits for that one; a renewal counts as running
 *   until its work has settled, whatever the store's `lock` answers meanwhile;
 * - a refresh token is removed from memory and from the store before the request presenting it
 *   is sent, and that request is never repeated: whatever goes wrong with it (refusal, lost
 *   answer, timeout, or the same refresh token given back), the next token comes from a fresh
 *   client-credentials exchange instead;
 * - tokens in the store that another API key stored are not used (`clientId`).
 */
export class TokenManager implements AccessTokenSource {
  readonly #config: TokenManagerConfig;
  #current: StoredTokens | null = null;
  #renewal: Promise<StoredTokens> | null = null;
  /**
   * The last access token a server refused, and the error of the renewal that tried to replace it
   * (undefined while it runs or when it succeeded). Every call refused with that token gets that
   * error: one failed exchange per refused token, not one per call that was in flight with it.
   */
  #refusal: { token: string; failure?: { error: unknown } } | null = null;

  constructor(config: TokenManagerConfig) {
    // Private fields: the secret and the tokens stay out of console.log, util.inspect and JSON.
    this.#config = config;
  }

  /** A usable access token, renewing first when the current one is (nearly) expired. */
  async accessToken(): Promise<string> {
    const current = this.#current;
    if (current && !this.isDue(current)) return current.accessToken;
    return (await this.renew(null)).accessToken;
  }

  /**
   * A resource service refused `token` (401). When it is still the current token, it is dropped
   * and replaced by a fresh exchange, not a refresh: a refused token usually means its session was
   * revoked, and then its refresh token is dead too. When the token was already replaced, the
   * replacement is used as is. When the exchange for this refusal failed, its error is thrown to
   * every call refused with the same token, without another exchange.
   */
  async rejected(token: string): Promise<void> {
    const running = this.#renewal;
    if (running) {
      const renewed = await running.catch(() => null);
      if (renewed && renewed.accessToken !== token) return;
    }
    const current = this.#current;
    if (current && current.accessToken !== token) return;
    // The renewal for this very refusal failed already: that failure is the answer to every call
    // refused with this token, however late its 401 arrived.
    const refusal = this.#refusal;
    if (refusal?.token === token && refusal.failure) throw refusal.failure.error;
    await this.renew(token);
  }

  /** Whether `tokens` should be renewed before use. */
  private isDue(tokens: StoredTokens): boolean {
    const { now, refreshAheadMs } = this.#config;
    const lifetime =
      tokens.accessTokenIssuedAt === undefined ? Infinity : tokens.accessTokenExpiresAt - tokens.accessTokenIssuedAt;
    const ahead = Math.min(refreshAheadMs, lifetime * REFRESH_AHEAD_SHARE);
    return now() >= tokens.accessTokenExpiresAt - ahead;
  }

  /**
   * Single flight: the first caller starts the renewal, everyone arriving while it runs gets its
   * result or its error. `refused` is the access token a server refused, if that is the reason.
   */
  private renew(refused: string | null): Promise<StoredTokens> {
    if (!this.#renewal) {
      const { store } = this.#config;
      const refusal = refused === null ? null : { token: refused, failure: undefined as { error: unknown } | undefined };
      if (refusal) this.#refusal = refusal;
      this.#renewal = inProcessTurn(store, () => underLock(store, () => this.renewNow(refused)))
        .catch((error: unknown) => {
          // Recorded before anyone waiting on this renewal hears of its failure.
          if (refusal) refusal.failure = { error };
          throw error;
        })
        .finally(() => {
          this.#renewal = null;
        });
    }
    return this.#renewal;
  }

  private async renewNow(refused: string | null): Promise<StoredTokens> {
    const { store } = this.#config;
    // Re-read: with a shared store another process (or instance) may have renewed already, and
    // its tokens are as good as ours would be.
    const stored = this.usable(await store.get());
    if (stored && stored.accessToken !== refused && !this.isDue(stored)) {
      this.#current = stored;
      return stored;
    }

    if (refused === null && stored?.refreshToken) {
      const refreshToken = stored.refreshToken;
      // Spent before it is sent: if the process dies mid-request, or the answer is lost, nobody
      // will ever find this token again to present it a second time.
      const spent: StoredTokens = { ...stored, refreshToken: null };
      this.#current = spent;
      await store.set(spent);
      const refreshed = await this.refresh(refreshToken).catch(() => null);
      // An answer carrying back the token just presented is no new token: kept, it would be
      // presented a second time at the next renewal.
      if (refreshed && refreshed.refreshToken !== refreshToken) return this.keep(refreshed);
      // Whatever the failure (invalid_grant, a lost answer, 429, 503, the same token back), the
      // token may be spent on the server: a new session is the only safe way on.
    } else if (refused !== null) {
      this.#current = null;
      await store.set(null);
    }
    return this.keep(await this.exchange());
  }

  /**
   * `stored` when this instance may use it; null for a pair another API key stored (two keys
   * sharing one store: its refresh token would renew the other key's session) or one whose tokens
   * could not be sent. A pair without `clientId` (written by other code) is taken as this key's.
   */
  private usable(stored: StoredTokens | null): StoredTokens | null {
    if (!stored) return null;
    if (stored.clientId !== undefined && stored.clientId !== this.#config.clientId) return null;
    if (typeof stored.accessToken !== 'string' || !TOKEN_SHAPE.test(stored.accessToken)) return null;
    if (stored.refreshToken !== null && (typeof stored.refreshToken !== 'string' || !TOKEN_SHAPE.test(stored.refreshToken))) return null;
    if (typeof stored.accessTokenExpiresAt !== 'number' || Number.isNaN(stored.accessTokenExpiresAt)) return null;
    return stored;
  }

  private async keep(tokens: StoredTokens): Promise<StoredTokens> {
    // Memory first: if the store fails, this process still holds the only copy of the new
    // refresh token, and the store holds no spent one.
    this.#current = tokens;
    await this.#config.store.set(tokens);
    return tokens;
  }

  private exchange(): Promise<StoredTokens> {
    const { clientId, clientSecret, scope } = this.#config;
    const body: Record<string, string> = { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret };
    if (scope !== undefined) body['scope'] = scope;
    return this.tokenCall(TOKEN_PATH, body, EXCHANGE_RETRY);
  }

  private refresh(refreshToken: string): Promise<StoredTokens> {
    return this.tokenCall(REFRESH_PATH, { refresh_token: refreshToken }, REFRESH_RETRY);
  }

  /** A token endpoint's call: RFC 6749 errors, no raw cause on failures (credentials ride along). */
  private async tokenCall(path: string, body: Record<string, string>, retry: CallRetryTraits): Promise<StoredTokens> {
    const response = await this.#config.transport.call<unknown>({ method: 'POST', path, body, errors: 'oauth', retry, credentials: true });
    return this.toStored(response, path);
  }

  private toStored(response: unknown, path: string): StoredTokens {
    if (!isTokenResponse(response)) {
      throw new InvoicingError(`POST ${path} answered 200 without a usable token pair`);
    }
    // The local clock at receipt: the server's clock may differ, the token's lifetime does not.
    const receivedAt = this.#config.now();
    return {
      accessToken: response.access_token,
      accessTokenExpiresAt: receivedAt + response.expires_in * 1000,
      accessTokenIssuedAt: receivedAt,
      refreshToken: response.refresh_token,
      scope: response.scope,
      clientId: this.#config.clientId,
    };
  }
}

/** The last renewal queued on each store object, across all instances of this module's clients. */
const turns = new WeakMap<TokenStore, Promise<unknown>>();

/**
 * Runs `fn` after every renewal already queued on `store` in this process. Several `Invoicing`
 * instances given one store object then renew one after the other, and each re-reads what the
 * previous one stored, even when the store has no `lock` (which only processes sharing it need).
 * `fn` must settle only once its work has: the next turn starts then.
 */
function inProcessTurn<T>(store: TokenStore, fn: () => Promise<T>): Promise<T> {
  const previous = turns.get(store) ?? Promise.resolve();
  const turn = previous.then(fn);
  turns.set(
    store,
    turn.catch(() => undefined),
  );
  return turn;
}

/**
 * Runs `work` under the store's `lock`, if it has one, and settles only once both the lock and the
 * work have: with the work's result or error. The lock's own promise is not trusted to cover the
 * work. A lease that expires mid-renewal rejects it early; a lock that forgets `return fn()`
 * resolves it at once; either way, releasing the in-process queue then would let the next renewal
 * read the refresh token this one is presenting. An error of the lock itself (it could not be
 * taken, so the work never ran) is thrown as it is.
 */
async function underLock<T>(store: TokenStore, work: () => Promise<T>): Promise<T> {
  if (!store.lock) return work();
  let running: Promise<T> | undefined;
  let closed = false;
  const locked = store.lock(() => {
    if (closed) {
      // Called after the lock settled: too late to be waited for, so the renewal may not run.
      const late = Promise.reject(new InvoicingError('TokenStore.lock called its function after it had settled'));
      late.catch(() => undefined);
      return late as Promise<T>;
    }
    if (running === undefined) {
      running = work();
      // Awaited below, once the lock has settled; until then a lock that does not await it must
      // not make its failure an unhandled rejection.
      running.catch(() => undefined);
    }
    // Called twice: still one renewal.
    return running;
  });
  const lockOutcome = await settled(locked);
  closed = true;
  if (running === undefined) {
    if (!lockOutcome.ok) throw lockOutcome.error;
    throw new InvoicingError('TokenStore.lock resolved without calling the function it was given: no token was renewed');
  }
  return running;
}

async function settled<T>(promise: Promise<T>): Promise<{ ok: true; value: T } | { ok: false; error: unknown }> {
  try {
    return { ok: true, value: await promise };
  } catch (error) {
    return { ok: false, error };
  }
}

function isTokenResponse(value: unknown): value is TokenResponse {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v['access_token'] === 'string' &&
    TOKEN_SHAPE.test(v['access_token']) &&
    typeof v['expires_in'] === 'number' &&
    Number.isFinite(v['expires_in']) &&
    v['expires_in'] > 0 &&
    typeof v['refresh_token'] === 'string' &&
    TOKEN_SHAPE.test(v['refresh_token']) &&
    typeof v['scope'] === 'string'
  );
}

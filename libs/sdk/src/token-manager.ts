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
 *   `lock`), and every caller waiting for a token waits for that one;
 * - a refresh token is removed from memory and from the store before the request presenting it
 *   is sent, and that request is never repeated: whatever goes wrong with it (refusal, lost
 *   answer, timeout), the next token comes from a fresh client-credentials exchange instead.
 */
export class TokenManager implements AccessTokenSource {
  readonly #config: TokenManagerConfig;
  #current: StoredTokens | null = null;
  #renewal: Promise<StoredTokens> | null = null;

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
   * replacement is used as is.
   */
  async rejected(token: string): Promise<void> {
    const running = this.#renewal;
    if (running) {
      const renewed = await running.catch(() => null);
      if (renewed && renewed.accessToken !== token) return;
    }
    const current = this.#current;
    if (current && current.accessToken !== token) return;
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
      const work = () => this.renewNow(refused);
      this.#renewal = inProcessTurn(store, () => (store.lock ? store.lock(work) : work())).finally(() => {
        this.#renewal = null;
      });
    }
    return this.#renewal;
  }

  private async renewNow(refused: string | null): Promise<StoredTokens> {
    const { store } = this.#config;
    // Re-read: with a shared store another process (or instance) may have renewed already, and
    // its tokens are as good as ours would be.
    const stored = await store.get();
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
      if (refreshed) return this.keep(refreshed);
      // Whatever the failure (invalid_grant, a lost answer, 429, 503), the token may be spent on
      // the server: a new session is the only safe way on.
    } else if (refused !== null) {
      this.#current = null;
      await store.set(null);
    }
    return this.keep(await this.exchange());
  }

  private async keep(tokens: StoredTokens): Promise<StoredTokens> {
    // Memory first: if the store fails, this process still holds the only copy of the new
    // refresh token, and the store holds no spent one.
    this.#current = tokens;
    await this.#config.store.set(tokens);
    return tokens;
  }

  private async exchange(): Promise<StoredTokens> {
    const { transport, clientId, clientSecret, scope } = this.#config;
    const body: Record<string, string> = { grant_type: 'client_credentials', client_id: clientId, client_secret: clientSecret };
    if (scope !== undefined) body['scope'] = scope;
    const response = await transport.call<unknown>({ method: 'POST', path: TOKEN_PATH, body, errors: 'oauth', retry: EXCHANGE_RETRY });
    return this.toStored(response, TOKEN_PATH);
  }

  private async refresh(refreshToken: string): Promise<StoredTokens> {
    const response = await this.#config.transport.call<unknown>({
      method: 'POST',
      path: REFRESH_PATH,
      body: { refresh_token: refreshToken },
      errors: 'oauth',
      retry: REFRESH_RETRY,
    });
    return this.toStored(response, REFRESH_PATH);
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
    };
  }
}

/** The last renewal queued on each store object, across all instances of this module's clients. */
const turns = new WeakMap<TokenStore, Promise<unknown>>();

/**
 * Runs `fn` after every renewal already queued on `store` in this process. Several `Invoicing`
 * instances given one store object then renew one after the other, and each re-reads what the
 * previous one stored, even when the store has no `lock` (which only processes sharing it need).
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

function isTokenResponse(value: unknown): value is TokenResponse {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  return (
    typeof v['access_token'] === 'string' &&
    v['access_token'] !== '' &&
    typeof v['expires_in'] === 'number' &&
    Number.isFinite(v['expires_in']) &&
    v['expires_in'] > 0 &&
    typeof v['refresh_token'] === 'string' &&
    v['refresh_token'] !== '' &&
    typeof v['scope'] === 'string'
  );
}

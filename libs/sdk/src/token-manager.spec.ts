import { inspect } from 'node:util';
import { InvoicingApiError, InvoicingConnectionError, InvoicingError, InvoicingOAuthError } from './errors';
import { FakeApi, FakeClock, invalidToken, json, networkError, oauthError, problem, REFRESH, TOKEN } from './testing/fake-api';
import { CLIENT_ID, CLIENT_SECRET, testClient } from './testing/test-client';
import type { StoredTokens, TokenStore } from './token-store';
import { MemoryTokenStore } from './token-store';

const INVOICES = '/api/v1/invoices';
const HOUR = 3600_000;

/** A list route that answers with the access token it was called with, so tests see which one was used. */
function listRoute(server: FakeApi): FakeApi {
  return server.authenticated('GET', INVOICES, (request) =>
    json(200, { object: 'list', data: [], has_more: false, token: request.headers['authorization'] }),
  );
}

function bearerOf(server: FakeApi, index: number): string | undefined {
  return server.calls('GET', INVOICES)[index]?.headers['authorization'];
}

/** A store that records what it was given, in order. */
class RecordingStore extends MemoryTokenStore {
  readonly writes: Array<StoredTokens | null> = [];
  override set(tokens: StoredTokens | null): void {
    this.writes.push(tokens);
    super.set(tokens);
  }
}

describe('TokenManager', () => {
  describe('first use', () => {
    it('exchanges the client credentials once for 200 concurrent first calls', async () => {
      const { api, server } = testClient();
      listRoute(server);

      await Promise.all(Array.from({ length: 200 }, () => api.invoices.listPage()));

      expect(server.calls('POST', TOKEN)).toHaveLength(1);
      expect(server.calls('GET', INVOICES)).toHaveLength(200);
      expect(new Set(server.calls('GET', INVOICES).map((r) => r.headers['authorization']))).toEqual(new Set(['Bearer at_1']));
    });

    it('sends grant_type, client_id and client_secret as JSON, and scope only when asked', async () => {
      const first = testClient();
      listRoute(first.server);
      await first.api.invoices.listPage();
      const [exchange] = first.server.calls('POST', TOKEN);
      expect(exchange.body).toEqual({ grant_type: 'client_credentials', client_id: CLIENT_ID, client_secret: CLIENT_SECRET });
      expect(exchange.headers['content-type']).toBe('application/json');
      expect(exchange.headers['authorization']).toBeUndefined();

      const scoped = testClient({ scope: 'read:invoices read:clients' });
      listRoute(scoped.server);
      await scoped.api.invoices.listPage();
      expect(scoped.server.calls('POST', TOKEN)[0].body).toMatchObject({ scope: 'read:invoices read:clients' });
    });

    it('keeps using the token until it is due', async () => {
      const { api, server, clock } = testClient();
      listRoute(server);
      await api.invoices.listPage();
      clock.advance(HOUR - 60_001);
      await api.invoices.listPage();

      expect(server.calls('POST', TOKEN)).toHaveLength(1);
      expect(server.calls('POST', REFRESH)).toHaveLength(0);
    });

    it('uses a fresh token already in the store without any exchange (tokens kept across restarts)', async () => {
      const clock = new FakeClock();
      const store = new MemoryTokenStore();
      store.set({ accessToken: 'at_saved', accessTokenExpiresAt: clock.now() + HOUR, refreshToken: 'rt_live_saved', scope: 's' });
      const { api, server } = testClient({ tokenStore: store }, new FakeApi(), clock);
      server.on('GET', INVOICES, () => json(200, { object: 'list', data: [], has_more: false }));

      await api.invoices.listPage();

      expect(server.calls('POST', TOKEN)).toHaveLength(0);
      expect(bearerOf(server, 0)).toBe('Bearer at_saved');
    });

    it('gives every waiter the error of a failed exchange, does not retry invalid_client, and tries again on the next call', async () => {
      const { api, server } = testClient({ clientSecret: 'sk_live_wrong' });
      listRoute(server);

      const results = await Promise.allSettled(Array.from({ length: 5 }, () => api.invoices.listPage()));

      expect(server.calls('POST', TOKEN)).toHaveLength(1);
      for (const result of results) {
        expect(result.status).toBe('rejected');
        const error = (result as PromiseRejectedResult).reason;
        expect(error).toBeInstanceOf(InvoicingOAuthError);
        expect(error).toMatchObject({ status: 401, error: 'invalid_client' });
      }
      await expect(api.invoices.listPage()).rejects.toBeInstanceOf(InvoicingOAuthError);
      expect(server.calls('POST', TOKEN)).toHaveLength(2);
      expect(server.calls('GET', INVOICES)).toHaveLength(0);
    });

    it('retries the exchange after 429 with Retry-After, after 503, and after a network error', async () => {
      const { api, server, clock } = testClient();
      listRoute(server);
      server.once(
        'POST',
        TOKEN,
        () => oauthError(429, 'invalid_request', { 'retry-after': '2' }),
        () => oauthError(503, 'temporarily_unavailable', { 'retry-after': '1' }),
        () => networkError(),
      );

      await api.invoices.listPage();

      expect(server.calls('POST', TOKEN)).toHaveLength(4);
      expect(clock.sleeps.slice(0, 2)).toEqual([2000, 1000]);
      expect(clock.sleeps).toHaveLength(3);
      expect(bearerOf(server, 0)).toBe('Bearer at_1');
    });

    it('rejects a 200 without a usable token pair', async () => {
      const { api, server } = testClient();
      server.once('POST', TOKEN, () => json(200, { access_token: 'at_x', token_type: 'Bearer' }));
      await expect(api.invoices.listPage()).rejects.toThrow('without a usable token pair');
    });
  });

  describe('refresh ahead of expiry', () => {
    it('refreshes once less than refreshAheadSeconds is left, not before', async () => {
      const { api, server, clock } = testClient();
      listRoute(server);
      await api.invoices.listPage();

      clock.advance(HOUR - 60_000 - 1);
      await api.invoices.listPage();
      expect(server.calls('POST', REFRESH)).toHaveLength(0);

      clock.advance(1);
      await api.invoices.listPage();
      expect(server.presentedRefreshTokens()).toEqual(['rt_live_1']);
      expect(bearerOf(server, 2)).toBe('Bearer at_2');
      expect(server.calls('POST', TOKEN)).toHaveLength(1);
    });

    it('refreshes at 10 % of the lifetime left when that is sooner, and honours refreshAheadSeconds', async () => {
      const server = new FakeApi();
      server.expiresIn = 100; // a key that expires within the hour gets a short token
      const { api, clock } = testClient({}, server);
      listRoute(server);
      await api.invoices.listPage();
      clock.advance(89_999);
      await api.invoices.listPage();
      expect(server.calls('POST', REFRESH)).toHaveLength(0);
      clock.advance(1);
      await api.invoices.listPage();
      expect(server.calls('POST', REFRESH)).toHaveLength(1);

      const early = testClient({ refreshAheadSeconds: 120 });
      listRoute(early.server);
      await early.api.invoices.listPage();
      early.clock.advance(HOUR - 120_000 - 1);
      await early.api.invoices.listPage();
      expect(early.server.calls('POST', REFRESH)).toHaveLength(0);
      early.clock.advance(1);
      await early.api.invoices.listPage();
      expect(early.server.calls('POST', REFRESH)).toHaveLength(1);
    });

    it('computes expiry from the local clock when the answer arrives', async () => {
      const { api, server, clock } = testClient();
      listRoute(server);
      server.once('POST', TOKEN, (request) => {
        clock.advance(5_000); // a slow answer
        return server.exchange(request);
      });
      await api.invoices.listPage();
      clock.advance(HOUR - 60_000 - 1);
      await api.invoices.listPage();
      expect(server.calls('POST', REFRESH)).toHaveLength(0);
      clock.advance(1);
      await api.invoices.listPage();
      expect(server.calls('POST', REFRESH)).toHaveLength(1);
    });

    it('refreshes once for 200 concurrent calls at refresh time', async () => {
      const { api, server, clock } = testClient();
      listRoute(server);
      await api.invoices.listPage();
      clock.advance(HOUR - 30_000);

      await Promise.all(Array.from({ length: 200 }, () => api.invoices.listPage()));

      expect(server.calls('POST', REFRESH)).toHaveLength(1);
      expect(server.calls('POST', TOKEN)).toHaveLength(1);
      const bearers = server.calls('GET', INVOICES).slice(1).map((r) => r.headers['authorization']);
      expect(new Set(bearers)).toEqual(new Set(['Bearer at_2']));
    });

    it('drops the refresh token from memory and the store before the request that presents it', async () => {
      const store = new RecordingStore();
      const { api, server, clock } = testClient({ tokenStore: store });
      listRoute(server);
      let storedWhileRefreshing: StoredTokens | null | undefined;
      server.once('POST', REFRESH, (request) => {
        storedWhileRefreshing = store.get();
        return server.refresh(request);
      });
      await api.invoices.listPage();
      clock.advance(HOUR);

      await api.invoices.listPage();

      expect(storedWhileRefreshing).toMatchObject({ accessToken: 'at_1', refreshToken: null });
      expect(store.writes.map((w) => w?.refreshToken)).toEqual(['rt_live_1', null, 'rt_live_2']);
      expect(store.get()).toMatchObject({ accessToken: 'at_2', refreshToken: 'rt_live_2', scope: 'read:invoices write:invoices' });
    });

    it('does not send the refresh when the store cannot record it as spent', async () => {
      const store = new MemoryTokenStore();
      const { api, server, clock } = testClient({ tokenStore: store });
      listRoute(server);
      await api.invoices.listPage();
      clock.advance(HOUR);
      const failure = new Error('store down');
      jest.spyOn(store, 'set').mockImplementationOnce(() => {
        throw failure;
      });

      await expect(api.invoices.listPage()).rejects.toBe(failure);
      expect(server.calls('POST', REFRESH)).toHaveLength(0);
    });

    it.each([
      ['invalid_grant', () => oauthError(400, 'invalid_grant')],
      ['a lost answer', () => networkError()],
      ['503 with Retry-After', () => oauthError(503, 'temporarily_unavailable', { 'retry-after': '1' })],
      ['429 with Retry-After', () => oauthError(429, 'invalid_request', { 'retry-after': '1' })],
      ['a 500', () => json(500, { error: 'server_error' })],
      ['a 200 that is not a token pair', () => json(200, { nope: true })],
    ])('after a refresh answered with %s: no second refresh, a client-credentials exchange instead', async (_name, answer) => {
      const { api, server, clock } = testClient();
      listRoute(server);
      await api.invoices.listPage();
      clock.advance(HOUR);
      server.once('POST', REFRESH, answer);

      await api.invoices.listPage();

      expect(server.presentedRefreshTokens()).toEqual(['rt_live_1']);
      expect(server.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
        `POST ${TOKEN}`,
        `GET ${INVOICES}`,
        `POST ${REFRESH}`,
        `POST ${TOKEN}`,
        `GET ${INVOICES}`,
      ]);
      expect(bearerOf(server, 1)).toBe('Bearer at_2');
      expect(clock.sleeps).toEqual([]);
    });

    it('does not repeat a refresh that timed out; it exchanges instead', async () => {
      const { api, server, clock } = testClient({ timeoutMs: 5 });
      listRoute(server);
      await api.invoices.listPage();
      clock.advance(HOUR);
      server.once('POST', REFRESH, server.hang());

      await api.invoices.listPage();

      expect(server.calls('POST', REFRESH)).toHaveLength(1);
      expect(server.calls('POST', TOKEN)).toHaveLength(2);
    });

    it('when the refresh and the exchange after it both fail, every waiter gets the error; the spent token is never tried again', async () => {
      const { api, server, clock } = testClient();
      listRoute(server);
      await api.invoices.listPage();
      clock.advance(HOUR);
      server.once('POST', REFRESH, () => networkError());
      server.once('POST', TOKEN, () => oauthError(401, 'invalid_client'));

      const results = await Promise.allSettled([api.invoices.listPage(), api.invoices.listPage()]);
      expect(results.map((r) => r.status)).toEqual(['rejected', 'rejected']);

      await api.invoices.listPage();
      expect(server.presentedRefreshTokens()).toEqual(['rt_live_1']);
      expect(server.calls('POST', TOKEN)).toHaveLength(3);
    });

    it('never presents a refresh token twice across many renewals, with lost answers and refusals among them', async () => {
      const { api, server, clock } = testClient();
      listRoute(server);
      // A fixed pattern rather than randomness: every failure kind, in several orders.
      const faults = ['ok', 'lost', 'ok', 'ok', 'invalid_grant', 'lost', 'lost', 'ok', '503', 'reset', 'ok', 'lost', 'ok'];
      const expectedPosts = [TOKEN];
      for (let round = 0; round < 60; round++) {
        const fault = faults[round % faults.length];
        if (round > 0) expectedPosts.push(...(fault === 'ok' ? [REFRESH] : [REFRESH, TOKEN]));
        if (fault === 'lost') server.once('POST', REFRESH, server.lostAnswer());
        if (fault === 'invalid_grant') server.once('POST', REFRESH, () => oauthError(400, 'invalid_grant'));
        if (fault === '503') server.once('POST', REFRESH, () => oauthError(503, 'temporarily_unavailable'));
        if (fault === 'reset') server.once('POST', REFRESH, () => networkError());
        await Promise.all([api.invoices.listPage(), api.invoices.listPage(), api.invoices.listPage()]);
        clock.advance(HOUR - 59_000);
      }

      const presented = server.presentedRefreshTokens();
      expect(presented).toHaveLength(59);
      expect(new Set(presented).size).toBe(59);
      expect(server.reuseDetected).toBe(false);
      // Each failed refresh, and only a failed one, is followed by a client-credentials exchange.
      expect(server.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual(expectedPosts);
    });

    it('after a lost refresh answer, the next token request is a client-credentials exchange', async () => {
      const { api, server, clock } = testClient();
      listRoute(server);
      await api.invoices.listPage();
      clock.advance(HOUR);
      server.once('POST', REFRESH, server.lostAnswer());

      await api.invoices.listPage();
      clock.advance(HOUR);
      await api.invoices.listPage();

      expect(server.requests.filter((r) => r.method === 'POST').map((r) => [r.path, (r.body as Record<string, string>)['refresh_token']])).toEqual([
        [TOKEN, undefined],
        [REFRESH, 'rt_live_1'],
        [TOKEN, undefined],
        [REFRESH, 'rt_live_3'],
      ]);
      expect(server.reuseDetected).toBe(false);
    });

    it('treats a refresh answer carrying back the refresh token it was given as a failure: never stored, an exchange instead', async () => {
      const store = new RecordingStore();
      const { api, server, clock } = testClient({ tokenStore: store });
      listRoute(server);
      await api.invoices.listPage();
      clock.advance(HOUR);
      server.once('POST', REFRESH, (request) => {
        void server.refresh(request); // the server spends it...
        // ...and a broken proxy or server answers with the presented token as the "new" one.
        return json(200, { access_token: 'at_echo', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_live_1', scope: 's' });
      });

      await api.invoices.listPage();
      clock.advance(HOUR);
      await api.invoices.listPage();

      expect(store.writes.filter((w) => w?.refreshToken === 'rt_live_1')).toHaveLength(1); // the first exchange's, only
      expect(server.requests.filter((r) => r.method === 'POST').map((r) => r.path)).toEqual([TOKEN, REFRESH, TOKEN, REFRESH]);
      expect(server.presentedRefreshTokens()).toEqual(['rt_live_1', 'rt_live_3']);
      expect(bearerOf(server, 1)).toBe('Bearer at_3');
      expect(server.reuseDetected).toBe(false);
    });
  });

  describe('a refused access token (401)', () => {
    it('exchanges afresh (not a refresh) once and retries the call once', async () => {
      const { api, server } = testClient();
      listRoute(server);
      await api.invoices.listPage();
      server.revokedAccessTokens.add('at_1');

      await api.invoices.listPage();

      expect(server.calls('POST', TOKEN)).toHaveLength(2);
      expect(server.calls('POST', REFRESH)).toHaveLength(0);
      expect(server.calls('GET', INVOICES).map((r) => r.headers['authorization'])).toEqual(['Bearer at_1', 'Bearer at_1', 'Bearer at_2']);
    });

    it('throws a second 401 without another exchange', async () => {
      const { api, server } = testClient();
      server.on('GET', INVOICES, () => invalidToken());

      const error = await api.invoices.listPage().catch((e: unknown) => e);

      expect(error).toBeInstanceOf(InvoicingApiError);
      expect(error).toMatchObject({ status: 401 });
      expect(server.calls('GET', INVOICES)).toHaveLength(2);
      expect(server.calls('POST', TOKEN)).toHaveLength(2);
    });

    it('exchanges once for 200 concurrent calls refused with the same token', async () => {
      const { api, server } = testClient();
      listRoute(server);
      await api.invoices.listPage();
      server.revokedAccessTokens.add('at_1');

      await Promise.all(Array.from({ length: 200 }, () => api.invoices.listPage()));

      expect(server.calls('POST', TOKEN)).toHaveLength(2);
      expect(server.calls('GET', INVOICES).filter((r) => r.headers['authorization'] === 'Bearer at_2')).toHaveLength(200);
    });

    it('does not exchange again when the refused token was already replaced; it retries with the current one', async () => {
      const { api, server } = testClient();
      listRoute(server);
      await api.invoices.listPage();
      server.revokedAccessTokens.add('at_1');
      // The slow call is sent with at_1, and answered 401 only after the fast one renewed.
      let answerSlowCall: () => void = () => undefined;
      const slowAnswered = new Promise<void>((resolve) => (answerSlowCall = resolve));
      server.once('GET', INVOICES, async () => {
        await slowAnswered;
        return invalidToken();
      });

      const slow = api.invoices.listPage();
      await new Promise((resolve) => setImmediate(resolve));
      await api.invoices.listPage();
      answerSlowCall();
      await slow;

      expect(server.calls('POST', TOKEN)).toHaveLength(2);
      expect(server.calls('GET', INVOICES).map((r) => r.headers['authorization'])).toEqual([
        'Bearer at_1',
        'Bearer at_1',
        'Bearer at_1',
        'Bearer at_2',
        'Bearer at_2',
      ]);
    });

    it('throws when the exchange after a 401 fails, without repeating the call or the exchange beyond its own retries', async () => {
      const { api, server } = testClient({ maxRetries: 1 });
      listRoute(server);
      await api.invoices.listPage();
      server.revokedAccessTokens.add('at_1');
      server.on('POST', TOKEN, () => networkError());

      await expect(api.invoices.listPage()).rejects.toBeInstanceOf(InvoicingConnectionError);
      expect(server.calls('POST', TOKEN)).toHaveLength(1 + 2);
      expect(server.calls('GET', INVOICES)).toHaveLength(2);
    });

    it('throws 403 at once, without an exchange or a retry', async () => {
      const { api, server } = testClient();
      server.on('GET', INVOICES, () =>
        problem(403, { detail: 'The token lacks read:invoices.' }, { 'www-authenticate': 'Bearer error="insufficient_scope", scope="read:invoices"' }),
      );

      await expect(api.invoices.listPage()).rejects.toMatchObject({ status: 403, detail: 'The token lacks read:invoices.' });
      expect(server.calls('GET', INVOICES)).toHaveLength(1);
      expect(server.calls('POST', TOKEN)).toHaveLength(1);
    });

    it('drops the refused pair from the store before exchanging, keeping its refresh token unpresented', async () => {
      const store = new RecordingStore();
      const { api, server } = testClient({ tokenStore: store });
      listRoute(server);
      await api.invoices.listPage();
      server.revokedAccessTokens.add('at_1');

      await api.invoices.listPage();

      expect(store.writes.map((w) => w?.accessToken ?? null)).toEqual(['at_1', null, 'at_2']);
      expect(server.presentedRefreshTokens()).toEqual([]);
    });

    it('after the exchange for a refused token failed, later 401s with that token get that failure, not another exchange', async () => {
      const { api, server } = testClient();
      listRoute(server);
      await api.invoices.listPage();
      server.revokedAccessTokens.add('at_1');
      server.once('POST', TOKEN, () => oauthError(400, 'invalid_request'));
      // A call sent with at_1 whose 401 only arrives after the storm's exchange has failed.
      let answerLateCall: () => void = () => undefined;
      const lateAnswered = new Promise<void>((resolve) => (answerLateCall = resolve));
      server.once('GET', INVOICES, async () => {
        await lateAnswered;
        return invalidToken();
      });
      const late = api.invoices.listPage().catch((e: unknown) => e);

      const storm = await Promise.allSettled(Array.from({ length: 20 }, () => api.invoices.listPage()));
      answerLateCall();
      const lateError = await late;

      expect(storm.map((r) => r.status)).toEqual(Array(20).fill('rejected'));
      for (const r of storm) expect((r as PromiseRejectedResult).reason).toMatchObject({ status: 400, error: 'invalid_request' });
      expect(lateError).toBeInstanceOf(InvoicingOAuthError);
      expect(lateError).toMatchObject({ status: 400, error: 'invalid_request' });
      expect(server.calls('POST', TOKEN)).toHaveLength(2);

      // A new call is not an answer to the old refusal: it gets a token of its own.
      await expect(api.invoices.listPage()).resolves.toMatchObject({ token: 'Bearer at_2' });
      expect(server.calls('POST', TOKEN)).toHaveLength(3);
    });
  });

  describe('a TokenStore', () => {
    function lockingStore(onLock: (store: MemoryTokenStore) => void): TokenStore & { log: string[] } {
      const inner = new MemoryTokenStore();
      const log: string[] = [];
      return {
        log,
        get: () => {
          log.push('get');
          return inner.get();
        },
        set: (tokens) => {
          log.push(`set ${tokens?.accessToken ?? null}`);
          inner.set(tokens);
        },
        lock: async <T>(fn: () => Promise<T>): Promise<T> => {
          log.push('lock');
          onLock(inner); // another process renews while we wait for the lock
          try {
            return await fn();
          } finally {
            log.push('unlock');
          }
        },
      };
    }

    it('with lock: renews inside it and re-reads the store first, adopting what another process stored', async () => {
      const clock = new FakeClock();
      const store = lockingStore((inner) =>
        inner.set({ accessToken: 'at_other', accessTokenExpiresAt: clock.now() + HOUR, refreshToken: 'rt_live_other', scope: 's' }),
      );
      const { api, server } = testClient({ tokenStore: store }, new FakeApi(), clock);
      server.on('GET', INVOICES, () => json(200, { object: 'list', data: [], has_more: false }));

      await api.invoices.listPage();

      expect(server.calls('POST', TOKEN)).toHaveLength(0);
      expect(server.calls('POST', REFRESH)).toHaveLength(0);
      expect(bearerOf(server, 0)).toBe('Bearer at_other');
      expect(store.log).toEqual(['lock', 'get', 'unlock']);
    });

    it('with lock: refreshes with the refresh token in the store, not a stale one held in memory', async () => {
      const clock = new FakeClock();
      let otherProcessRenews = false;
      const server = new FakeApi();
      const store = lockingStore((inner) => {
        if (!otherProcessRenews) return;
        // The other process refreshed rt_live_1 into rt_live_2, and that token is due by now too.
        inner.set({ accessToken: 'at_2', accessTokenExpiresAt: clock.now() + 1000, refreshToken: 'rt_live_2', scope: 's' });
      });
      const { api } = testClient({ tokenStore: store }, server, clock);
      listRoute(server);
      await api.invoices.listPage();
      server.spendElsewhere('rt_live_1');
      otherProcessRenews = true;
      clock.advance(HOUR);

      await api.invoices.listPage();

      expect(server.presentedRefreshTokens()).toEqual(['rt_live_2']);
      expect(server.reuseDetected).toBe(false);
      expect(store.log).toEqual(['lock', 'get', 'set at_1', 'unlock', 'lock', 'get', 'set at_2', 'set at_3', 'unlock']);
      expect(bearerOf(server, 1)).toBe('Bearer at_3');
    });

    it('shared by two instances of this process without lock: one exchange and one refresh between them', async () => {
      const clock = new FakeClock();
      const server = new FakeApi();
      listRoute(server);
      const store = new MemoryTokenStore();
      const a = testClient({ tokenStore: store }, server, clock).api;
      const b = testClient({ tokenStore: store }, server, clock).api;

      await Promise.all([a.invoices.listPage(), b.invoices.listPage()]);
      expect(server.calls('POST', TOKEN)).toHaveLength(1);

      clock.advance(HOUR);
      await Promise.all([a.invoices.listPage(), b.invoices.listPage(), a.invoices.listPage(), b.invoices.listPage()]);
      expect(server.presentedRefreshTokens()).toEqual(['rt_live_1']);
      expect(server.calls('POST', TOKEN)).toHaveLength(1);
      expect(server.reuseDetected).toBe(false);
    });

    describe('whose lock settles before the renewal it was given has', () => {
      /**
       * Two instances sharing a store whose `get` answers after a real timer (a network store) and
       * whose `lock` behaves until `misbehave` is armed, then renewing together.
       */
      async function renewTogether(misbehave: <T>(fn: () => Promise<T>) => Promise<T>) {
        const clock = new FakeClock();
        const server = new FakeApi();
        listRoute(server);
        const inner = new MemoryTokenStore();
        let armed = false;
        const store: TokenStore = {
          get: async () => {
            const tokens = inner.get();
            await new Promise((resolve) => setTimeout(resolve, 5));
            return tokens;
          },
          set: (tokens) => inner.set(tokens),
          lock: <T>(fn: () => Promise<T>) => (armed ? misbehave(fn) : fn()),
        };
        const a = testClient({ tokenStore: store }, server, clock).api;
        const b = testClient({ tokenStore: store }, server, clock).api;
        await a.invoices.listPage();
        armed = true;
        clock.advance(HOUR);
        const results = await Promise.allSettled([a.invoices.listPage(), b.invoices.listPage(), a.invoices.listPage()]);
        await new Promise((resolve) => setTimeout(resolve, 50)); // whatever still runs behind the callers' backs
        return { server, results };
      }

      it.each([
        [
          'rejected (a lease that expired mid-renewal)',
          async <T>(fn: () => Promise<T>): Promise<T> => {
            void fn();
            throw new Error('lease expired');
          },
        ],
        [
          'resolved at once (a lock that forgot `return fn()`)',
          async <T>(fn: () => Promise<T>): Promise<T> => {
            void fn();
            return undefined as T;
          },
        ],
      ])('%s: the next renewal waits for the running one; callers get its tokens', async (_name, misbehave) => {
        const { server, results } = await renewTogether(misbehave);

        expect(server.presentedRefreshTokens()).toEqual(['rt_live_1']);
        expect(server.reuseDetected).toBe(false);
        expect(server.calls('POST', TOKEN)).toHaveLength(1);
        expect(results.map((r) => r.status)).toEqual(['fulfilled', 'fulfilled', 'fulfilled']);
        expect(server.calls('GET', INVOICES).slice(1).map((r) => r.headers['authorization'])).toEqual(['Bearer at_2', 'Bearer at_2', 'Bearer at_2']);
      });

      it('never called the renewal: an InvoicingError, and nothing sent', async () => {
        const store: TokenStore = { get: () => null, set: () => undefined, lock: async <T>() => undefined as T };
        const { api, server } = testClient({ tokenStore: store });
        listRoute(server);

        const error = await api.invoices.listPage().catch((e: unknown) => e);

        expect(error).toBeInstanceOf(InvoicingError);
        expect((error as Error).message).toMatch(/lock/);
        expect(server.requests).toHaveLength(0);
      });

      it('called the renewal only after settling: it does not run then', async () => {
        let late: Promise<unknown> | undefined;
        const store: TokenStore = {
          get: () => null,
          set: () => undefined,
          lock: async <T>(fn: () => Promise<T>) => {
            setTimeout(() => (late = fn().catch((e: unknown) => e)), 0);
            return undefined as T;
          },
        };
        const { api, server } = testClient({ tokenStore: store });
        listRoute(server);

        await expect(api.invoices.listPage()).rejects.toBeInstanceOf(InvoicingError);
        await new Promise((resolve) => setTimeout(resolve, 10));

        await expect(late).resolves.toBeInstanceOf(InvoicingError);
        expect(server.requests).toHaveLength(0);
      });
    });

    it('with a lock that calls its function twice: one renewal', async () => {
      const inner = new MemoryTokenStore();
      const store: TokenStore = {
        get: () => inner.get(),
        set: (tokens) => inner.set(tokens),
        lock: async <T>(fn: () => Promise<T>) => {
          void fn();
          return fn();
        },
      };
      const { api, server } = testClient({ tokenStore: store });
      listRoute(server);

      await api.invoices.listPage();

      expect(server.calls('POST', TOKEN)).toHaveLength(1);
    });

    it('ignores tokens another API key stored (two keys sharing one store): never refreshes or sends them', async () => {
      const clock = new FakeClock();
      const server = new FakeApi();
      listRoute(server);
      const store = new MemoryTokenStore();
      const mine = testClient({ tokenStore: store }, server, clock).api;
      const other = testClient({ tokenStore: store, clientId: 'ak_live_other' }, server, clock).api;

      await mine.invoices.listPage(); // stores at_1 / rt_live_1, the key ak_live_client's
      await other.invoices.listPage();
      expect(store.get()).toMatchObject({ accessToken: 'at_2', refreshToken: 'rt_live_2', clientId: 'ak_live_other' });
      clock.advance(HOUR);
      await mine.invoices.listPage();

      expect(server.calls('GET', INVOICES).map((r) => r.headers['authorization'])).toEqual(['Bearer at_1', 'Bearer at_2', 'Bearer at_3']);
      expect(server.presentedRefreshTokens()).toEqual([]);
      expect(server.calls('POST', TOKEN).map((r) => (r.body as { client_id: string }).client_id)).toEqual([
        'ak_live_client',
        'ak_live_other',
        'ak_live_client',
      ]);
    });

    it('ignores a stored pair whose tokens could not be sent in a header', async () => {
      const clock = new FakeClock();
      const store = new MemoryTokenStore();
      store.set({ accessToken: 'at_saved\r\nx-injected: 1', accessTokenExpiresAt: clock.now() + HOUR, refreshToken: 'rt_live_saved', scope: 's' });
      const { api, server } = testClient({ tokenStore: store }, new FakeApi(), clock);
      listRoute(server);

      await api.invoices.listPage();

      expect(server.presentedRefreshTokens()).toEqual([]);
      expect(bearerOf(server, 0)).toBe('Bearer at_1');
    });

    it('accepts an asynchronous store', async () => {
      const inner = new MemoryTokenStore();
      const store: TokenStore = { get: async () => inner.get(), set: async (t) => inner.set(t) };
      const { api, server } = testClient({ tokenStore: store });
      listRoute(server);
      await api.invoices.listPage();
      expect(inner.get()).toMatchObject({ accessToken: 'at_1', refreshToken: 'rt_live_1' });
    });
  });

  describe('errors of the token endpoints', () => {
    it.each([
      ['a fetch failure describing the request', () => Promise.reject(new TypeError(`could not send {"client_secret":"${CLIENT_SECRET}"}`))],
      [
        'a 200 whose body is not JSON',
        () => Promise.resolve(new Response('{"access_token":"at_SECRET","refresh_token":"rt_live_SECRET" <!-- proxy -->', { status: 200 })),
      ],
    ])('carry no raw cause, which may quote the secret or a token (%s)', async (_name, answer) => {
      const server = new FakeApi();
      const { api } = testClient({ maxRetries: 0, fetch: (url, init) => (url.endsWith(TOKEN) ? answer() : server.fetch(url, init)) }, server);

      const error = (await api.invoices.listPage().catch((e: unknown) => e)) as InvoicingConnectionError;

      expect(error).toBeInstanceOf(InvoicingConnectionError);
      expect(error.message).toMatch(/^POST \/api\/v1\/auth\/token got no usable answer/);
      expect(error.cause).toBeUndefined();
      const shown = inspect(error, { showHidden: true, depth: 10 });
      expect(shown).not.toContain(CLIENT_SECRET);
      expect(shown).not.toContain('SECRET');
    });

    it.each([
      ['an access token', { access_token: 'at_1\r\nx-injected: 1' }],
      ['an access token', { access_token: 'at 1' }],
      ['a refresh token', { refresh_token: 'rt_live_1\n' }],
      ['a refresh token', { refresh_token: 'rt_live_é' }],
    ])('refuses %s a header could not carry (%j)', async (_name, change) => {
      const { api, server } = testClient();
      listRoute(server);
      server.once('POST', TOKEN, () => json(200, { access_token: 'at_1', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_live_1', scope: 's', ...change }));

      await expect(api.invoices.listPage()).rejects.toThrow('without a usable token pair');
      expect(server.calls('GET', INVOICES)).toHaveLength(0);
    });
  });

  it('surfaces a network failure of the exchange as InvoicingConnectionError once retries are spent', async () => {
    const { api, server } = testClient({ maxRetries: 1 });
    server.on('POST', TOKEN, () => networkError());
    await expect(api.invoices.listPage()).rejects.toBeInstanceOf(InvoicingConnectionError);
    expect(server.calls('POST', TOKEN)).toHaveLength(2);
  });
});

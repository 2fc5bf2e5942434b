import type { ApiKeyCache } from '../../keys/api-key-cache';
import type { ApiKeyEntity } from '../../keys/api-key.entity';
import type { LastUsedRecorder } from '../../keys/last-used-recorder';
import type { Clock } from '../../common/clock';
import type { SessionStore } from '../../sessions/session-store';
import type { ClientAuthenticator } from '../client-authenticator';
import { InvalidClient } from '../oauth-errors';
import type { TokenPairFactory } from '../token-pair';
import { ClientCredentialsGrant, parseClientCredentialsRequest } from './client-credentials.grant';
import { basicAuth as basic, thrownOAuthError as thrown } from '../../testing/oauth-errors';

const KEY = '01933c3e-8a7b-7cc0-9f00-00000000000a';
const ORG = '01933c3e-8a7b-7cc0-9f00-0000000000f0';
const NOW = 1_763_700_000_000;



describe(parseClientCredentialsRequest.name, () => {
  it('reads credentials from the body', () => {
    expect(parseClientCredentialsRequest({ grant_type: 'client_credentials', client_id: 'ak', client_secret: 'sk' }, undefined)).toEqual({
      clientId: 'ak',
      clientSecret: 'sk',
      scope: null,
      usedBasic: false,
    });
  });

  it('reads credentials from HTTP Basic (form-urlencoded inside, RFC 6749 2.3.1)', () => {
    expect(parseClientCredentialsRequest({ scope: 'read:invoices' }, basic('ak', 's+k'))).toEqual({
      clientId: 'ak',
      clientSecret: 's+k',
      scope: 'read:invoices',
      usedBasic: true,
    });
  });

  it('refuses two authentication methods at once, and another scheme than Basic', () => {
    expect(thrown(() => parseClientCredentialsRequest({ client_secret: 'sk' }, basic('ak', 'sk'))).oauthError).toBe('invalid_request');
    expect(thrown(() => parseClientCredentialsRequest({}, 'Bearer x')).detail).toBe('The Authorization header must use the Basic scheme.');
  });

  it('names a missing secret, and refuses repeated and non-string parameters', () => {
    expect(thrown(() => parseClientCredentialsRequest({ client_id: 'ak' }, undefined)).detail).toBe('The client_secret parameter is required.');
    expect(thrown(() => parseClientCredentialsRequest({ client_id: ['a', 'b'], client_secret: 's' }, undefined)).detail).toBe(
      'The client_id parameter must be a single string.',
    );
    expect(thrown(() => parseClientCredentialsRequest({ client_id: 1, client_secret: 's' }, undefined)).oauthError).toBe('invalid_request');
  });
});

describe(ClientCredentialsGrant.name, () => {
  function setup(created = true) {
    const key = { id: KEY, organizationId: ORG, clientId: 'ak_live_a', scopes: ['read:invoices', 'read:clients'], allowedIps: [], expiresAt: null, secretGeneration: 2 } as unknown as ApiKeyEntity;
    const sessions = { create: jest.fn().mockResolvedValue(created) };
    const cache = { forget: jest.fn() };
    const grant = new ClientCredentialsGrant(
      { authenticateSecret: jest.fn().mockResolvedValue({ key, secretHash: Buffer.alloc(32) }) } as unknown as ClientAuthenticator,
      sessions as unknown as SessionStore,
      {
        mintRefreshToken: (now: number) => ({ token: 'rt_live_x', hash: 'h'.repeat(64), expiresAt: now + 10 }),
        response: (subject: { scope: string; sid: string }) => ({ scope: subject.scope, sid: subject.sid }),
      } as unknown as TokenPairFactory,
      { now: () => NOW } as Clock,
      { touch: jest.fn() } as unknown as LastUsedRecorder,
      cache as unknown as ApiKeyCache,
    );
    return { grant, sessions, cache };
  }

  it('starts a session with the new refresh token, which the store records (and points at) before it is handed out', async () => {
    const { grant, sessions } = setup();
    const r = (await grant.handle({ client_id: 'ak_live_a', client_secret: 's', scope: 'read:clients' }, undefined, '10.0.0.1')) as unknown as { scope: string; sid: string };
    expect(r.scope).toBe('read:clients');
    expect(sessions.create).toHaveBeenCalledWith({
      apiKeyUuid: KEY,
      sessionId: r.sid,
      refreshHash: 'h'.repeat(64),
      refreshExpiresAt: NOW + 10,
      scope: 'read:clients',
      organizationId: ORG,
      clientId: 'ak_live_a',
      now: NOW,
      secretGeneration: 2,
    });
  });

  it('refuses a scope the key does not carry before any session is written', async () => {
    const { grant, sessions } = setup();
    const e = await grant.issue({ clientId: 'ak_live_a', clientSecret: 's', usedBasic: false, scope: 'write:invoices' }, '10.0.0.1').catch((x: unknown) => x);
    expect(e).toMatchObject({ status: 400, oauthError: 'invalid_scope', detail: 'The key does not carry: write:invoices.' });
    expect(sessions.create).not.toHaveBeenCalled();
  });

  it('answers a key the session script found revoked like a wrong secret, and forgets the cached row', async () => {
    const { grant, cache } = setup(false);
    const e = await grant.issue({ clientId: 'ak_live_a', clientSecret: 's', usedBasic: true, scope: null }, '10.0.0.1').catch((x: unknown) => x);
    expect(e).toBe(InvalidClient.of(true));
    expect(cache.forget).toHaveBeenCalledTimes(1);
  });
});

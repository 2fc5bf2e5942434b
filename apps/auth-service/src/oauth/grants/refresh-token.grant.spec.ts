import { OAuthError } from '../oauth-errors';
import { newRefreshToken } from '../../keys/credential-format';
import type { ApiKeyCache } from '../../keys/api-key-cache';
import type { ApiKeyEntity } from '../../keys/api-key.entity';
import type { LastUsedRecorder } from '../../keys/last-used-recorder';
import type { Clock } from '../../common/clock';
import type { RevocationOutbox } from '../../revocation/revocation-outbox.service';
import type { SessionStore } from '../../sessions/session-store';
import type { ClientAuthenticator } from '../client-authenticator';
import type { TokenPairFactory } from '../token-pair';
import { parseRefreshEndpointRequest, parseRefreshTokenRequest, RefreshTokenGrant } from './refresh-token.grant';
import { basicAuth as basic, thrownOAuthError as thrown } from '../../testing/oauth-errors';

const KEY_A = '01933c3e-8a7b-7cc0-9f00-00000000000a';
const KEY_B = '01933c3e-8a7b-7cc0-9f00-00000000000b';
const SID = 'ses_01933c3e8a7b7cc09f00000000000001';
const FROM = '10.0.0.1';
const NOW = 1_763_700_000_000;



async function rejected(promise: Promise<unknown>): Promise<OAuthError> {
  const e = await promise.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OAuthError);
  return e as OAuthError;
}

/** Fakes at the edges: the rotation script is a spy, so a test can see whether a token was spent. */
function setup() {
  const rotate = jest.fn().mockResolvedValue({ kind: 'rotated', scope: 'read:invoices read:clients', organizationId: KEY_A, clientId: 'ak_live_a' });
  const sessions = {
    findPointer: jest.fn().mockResolvedValue({ apiKeyUuid: KEY_A, sessionId: SID }),
    sessionScope: jest.fn().mockResolvedValue('read:invoices read:clients'),
    rotate,
  };
  const tokens = {
    mintRefreshToken: jest.fn((now: number) => ({ token: 'rt_live_next', hash: 'h'.repeat(64), expiresAt: now + 1 })),
    response: jest.fn((subject: { scope: string }) => ({ access_token: 'at', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_live_next', scope: subject.scope })),
  };
  const active = (id: string) => ({ id, status: 'active', expiresAt: null, allowedIps: [] as string[] }) as ApiKeyEntity;
  const apiKeys = { findById: jest.fn(async (id: string): Promise<ApiKeyEntity> => active(id)) };
  const clients = {
    authenticateSecret: jest.fn(async (c: { clientId: string }) => ({ key: active(c.clientId === 'ak_live_b' ? KEY_B : KEY_A), secretHash: Buffer.alloc(32) })),
  };
  const outbox = { enqueue: jest.fn().mockResolvedValue(true) };
  const grant = new RefreshTokenGrant(
    sessions as unknown as SessionStore,
    tokens as unknown as TokenPairFactory,
    outbox as unknown as RevocationOutbox,
    { now: () => NOW } as Clock,
    apiKeys as unknown as ApiKeyCache,
    { touch: jest.fn() } as unknown as LastUsedRecorder,
    clients as unknown as ClientAuthenticator,
  );
  return { grant, sessions, rotate, clients, apiKeys, active, outbox };
}

describe(parseRefreshTokenRequest.name, () => {
  it('reads the grant without client authentication', () => {
    expect(parseRefreshTokenRequest({ grant_type: 'refresh_token', refresh_token: 'rt' }, undefined)).toEqual({ refreshToken: 'rt', scope: null, client: null });
  });

  it('reads the grant with HTTP Basic or with the credentials in the body, and a scope', () => {
    expect(parseRefreshTokenRequest({ refresh_token: 'rt', scope: 'read:invoices' }, basic('ak', 'sk'))).toEqual({
      refreshToken: 'rt',
      scope: 'read:invoices',
      client: { clientId: 'ak', clientSecret: 'sk', usedBasic: true },
    });
    expect(parseRefreshTokenRequest({ refresh_token: 'rt', client_id: 'ak', client_secret: 'sk' }, undefined)).toMatchObject({
      client: { clientId: 'ak', clientSecret: 'sk', usedBasic: false },
    });
  });

  it('turns a client_id without a secret into credentials that fail authentication, not into no authentication', () => {
    expect(parseRefreshTokenRequest({ refresh_token: 'rt', client_id: 'ak' }, undefined)).toMatchObject({ client: { clientId: 'ak', clientSecret: '' } });
    expect(thrown(() => parseRefreshTokenRequest({ refresh_token: 'rt', client_secret: 'sk' }, undefined)).oauthError).toBe('invalid_request');
  });

  it('requires refresh_token first, and refuses two authentication methods at once', () => {
    const missing = thrown(() => parseRefreshTokenRequest({ client_secret: 'x' }, basic('ak', 'sk')));
    expect({ error: missing.oauthError, description: missing.detail }).toEqual({ error: 'invalid_request', description: 'The refresh_token parameter is required.' });
    expect(thrown(() => parseRefreshTokenRequest({ refresh_token: 'rt', client_secret: 'x' }, basic('ak', 'sk'))).detail).toBe(
      'Use either HTTP Basic or client_secret in the body, not both.',
    );
  });
});

describe(parseRefreshEndpointRequest.name, () => {
  it('requires refresh_token and accepts the standard grant_type, and only that one', () => {
    expect(parseRefreshEndpointRequest({ refresh_token: 'rt' })).toBe('rt');
    expect(parseRefreshEndpointRequest({ refresh_token: 'rt', grant_type: 'refresh_token' })).toBe('rt');
    expect(thrown(() => parseRefreshEndpointRequest({})).oauthError).toBe('invalid_request');
    expect(thrown(() => parseRefreshEndpointRequest(undefined)).oauthError).toBe('invalid_request');
    const other = thrown(() => parseRefreshEndpointRequest({ refresh_token: 'rt', grant_type: 'password' }));
    expect({ status: other.status, error: other.oauthError }).toEqual({ status: 400, error: 'unsupported_grant_type' });
  });
});

describe(RefreshTokenGrant.name, () => {
  const token = newRefreshToken();

  it('rotates through one path for the grant without client authentication', async () => {
    const { grant, rotate, clients } = setup();
    const r = await grant.issue({ refreshToken: token, scope: null, client: null }, '127.0.0.1');
    expect(r.scope).toBe('read:invoices read:clients');
    expect(rotate).toHaveBeenCalledTimes(1);
    expect(clients.authenticateSecret).not.toHaveBeenCalled();
  });

  it('hands the store the next token to record with the rotation (the store writes its pointer)', async () => {
    const { grant, rotate } = setup();
    await grant.handleRefreshEndpoint({ refresh_token: token }, FROM);
    expect(rotate).toHaveBeenCalledWith(
      expect.objectContaining({ pointer: { apiKeyUuid: KEY_A, sessionId: SID }, newHash: 'h'.repeat(64), newExpiresAt: NOW + 1, now: NOW, actor: { kind: 'api_key', id: null, address: FROM } }),
    );
  });

  it('authenticates the client when credentials are sent, then rotates its own token', async () => {
    const { grant, rotate, clients } = setup();
    await grant.handle({ refresh_token: token }, basic('ak_live_a', 's'), FROM);
    expect(clients.authenticateSecret).toHaveBeenCalledWith({ clientId: 'ak_live_a', clientSecret: 's', usedBasic: true }, FROM);
    expect(rotate).toHaveBeenCalledTimes(1);
  });

  it("should not spend key A's token presented with key B's credentials: invalid_grant before the rotation", async () => {
    const { grant, rotate } = setup();
    const e = await rejected(grant.issue({ refreshToken: token, scope: null, client: { clientId: 'ak_live_b', clientSecret: 's', usedBasic: false } }, FROM));
    expect({ status: e.status, error: e.oauthError }).toEqual({ status: 400, error: 'invalid_grant' });
    expect(rotate).not.toHaveBeenCalled();
  });

  it('refuses a scope the session was not granted before the rotation, and narrows to a granted subset', async () => {
    const { grant, rotate } = setup();
    const e = await rejected(grant.refresh(token, FROM, { scope: 'write:invoices' }));
    expect(e.oauthError).toBe('invalid_scope');
    expect(rotate).not.toHaveBeenCalled();
    expect((await grant.refresh(token, FROM, { scope: 'read:clients' })).scope).toBe('read:clients');
    expect((await rejected(grant.refresh(token, FROM, { scope: 'read:clients  read:invoices' }))).oauthError).toBe('invalid_scope');
  });

  it('refuses a malformed refresh token without any lookup', async () => {
    const { grant, rotate, sessions } = setup();
    expect((await rejected(grant.refresh('rt_live_nope', FROM))).oauthError).toBe('invalid_grant');
    expect(sessions.findPointer).not.toHaveBeenCalled();
    expect(rotate).not.toHaveBeenCalled();
  });

  it("refuses a refresh from outside the key's allowlist before the rotation (unauthorized_client, nothing spent)", async () => {
    const { grant, rotate, apiKeys, active } = setup();
    apiKeys.findById.mockResolvedValue({ ...active(KEY_A), allowedIps: ['203.0.113.0/24'] } as ApiKeyEntity);
    const e = await rejected(grant.refresh(token, FROM));
    expect({ status: e.status, error: e.oauthError }).toEqual({ status: 400, error: 'unauthorized_client' });
    expect(rotate).not.toHaveBeenCalled();
    await grant.refresh(token, '203.0.113.9');
    expect(rotate).toHaveBeenCalledTimes(1);
  });

  it('refuses a refresh of an expired key from the instant of its expiry, before the sweep has marked it', async () => {
    const { grant, rotate, apiKeys, active } = setup();
    apiKeys.findById.mockResolvedValue({ ...active(KEY_A), expiresAt: new Date(NOW) } as ApiKeyEntity);
    expect((await rejected(grant.refresh(token, FROM))).oauthError).toBe('invalid_grant');
    expect(rotate).not.toHaveBeenCalled();
  });

  it('on a reuse, hands the revocation to the outbox and answers invalid_grant saying so', async () => {
    const { grant, rotate, outbox } = setup();
    const pending = { apiKeyUuid: KEY_A, raw: '{}', event: {}, actor: null };
    rotate.mockResolvedValue({ kind: 'reuse', pending });
    const e = await rejected(grant.refresh(token, FROM));
    expect({ status: e.status, error: e.oauthError, description: e.detail }).toEqual({
      status: 400,
      error: 'invalid_grant',
      description: 'The refresh token was already used; every session of this API key is revoked.',
    });
    expect(outbox.enqueue).toHaveBeenCalledWith(pending);
    rotate.mockResolvedValue({ kind: 'expired' });
    expect((await rejected(grant.refresh(token, FROM))).detail).toBe('The refresh token expired.');
  });
});

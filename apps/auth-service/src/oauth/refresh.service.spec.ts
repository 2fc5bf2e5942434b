import { newRefreshToken } from '../keys/credential-format';
import type { ApiKeyCache } from '../keys/api-key-cache';
import type { ApiKeyEntity } from '../keys/api-key.entity';
import type { LastUsedRecorder } from '../keys/last-used-recorder';
import type { Clock } from '../common/clock';
import type { TokenPairFactory } from './token-pair';
import type { RevocationOutbox } from '../revocation/revocation-outbox.service';
import type { SessionStore } from '../sessions/session-store';
import type { ClientAuthenticator } from './client-authenticator';
import { OAuthError } from './oauth-error';
import { RefreshService } from './refresh.service';

const KEY_A = '01933c3e-8a7b-7cc0-9f00-00000000000a';
const KEY_B = '01933c3e-8a7b-7cc0-9f00-00000000000b';
const SID = 'ses_01933c3e8a7b7cc09f00000000000001';
const FROM = { address: '10.0.0.1' };

/** Fakes at the edges: the rotation script is a spy, so a test can see whether a token was spent. */
function setup() {
  const rotate = jest.fn().mockResolvedValue({ kind: 'rotated', scope: 'read:invoices read:clients', organizationId: KEY_A, clientId: 'ak_live_a' });
  const sessions = {
    findPointer: jest.fn().mockResolvedValue({ apiKeyUuid: KEY_A, sessionId: SID }),
    sessionScope: jest.fn().mockResolvedValue('read:invoices read:clients'),
    rotate,
  };
  const tokens = {
    mintRefreshToken: jest.fn(async (_k: string, _s: string, now: number, record: (m: unknown) => Promise<unknown>) => {
      const minted = { token: 'rt_live_next', hash: 'h', expiresAt: now + 1 };
      return [minted, await record(minted)];
    }),
    response: jest.fn((subject: { scope: string }) => ({ access_token: 'at', token_type: 'Bearer', expires_in: 3600, refresh_token: 'rt_live_next', scope: subject.scope })),
  };
  const active = (id: string) => ({ id, status: 'active', expiresAt: null, allowedIps: [] as string[] }) as ApiKeyEntity;
  const apiKeys = { findById: jest.fn(async (id: string): Promise<ApiKeyEntity> => active(id)) };
  const clients = {
    authenticateSecret: jest.fn(async (c: { clientId: string }) => ({ key: active(c.clientId === 'ak_live_b' ? KEY_B : KEY_A), secretHash: Buffer.alloc(32) })),
  };
  const service = new RefreshService(
    sessions as unknown as SessionStore,
    tokens as unknown as TokenPairFactory,
    { enqueue: jest.fn() } as unknown as RevocationOutbox,
    { now: () => 1_763_700_000_000 } as Clock,
    apiKeys as unknown as ApiKeyCache,
    { touch: jest.fn() } as unknown as LastUsedRecorder,
    clients as unknown as ClientAuthenticator,
  );
  return { service, rotate, clients, apiKeys, active };
}

async function oauthError(promise: Promise<unknown>): Promise<OAuthError> {
  const e = await promise.then(
    () => null,
    (err: unknown) => err,
  );
  expect(e).toBeInstanceOf(OAuthError);
  return e as OAuthError;
}

describe(RefreshService.name, () => {
  const token = newRefreshToken();

  it('rotates through one path for the grant without client authentication', async () => {
    const { service, rotate, clients } = setup();
    const r = await service.refreshGrant({ refreshToken: token, scope: null, client: null }, '127.0.0.1');
    expect(r.scope).toBe('read:invoices read:clients');
    expect(rotate).toHaveBeenCalledTimes(1);
    expect(clients.authenticateSecret).not.toHaveBeenCalled();
  });

  it('authenticates the client when credentials are sent, then rotates its own token', async () => {
    const { service, rotate, clients } = setup();
    await service.refreshGrant({ refreshToken: token, scope: null, client: { clientId: 'ak_live_a', clientSecret: 's', usedBasic: true } }, '10.0.0.1');
    expect(clients.authenticateSecret).toHaveBeenCalledWith({ clientId: 'ak_live_a', clientSecret: 's', usedBasic: true }, '10.0.0.1');
    expect(rotate).toHaveBeenCalledTimes(1);
  });

  it("should not spend key A's token presented with key B's credentials: invalid_grant before the rotation", async () => {
    const { service, rotate } = setup();
    const e = await oauthError(
      service.refreshGrant({ refreshToken: token, scope: null, client: { clientId: 'ak_live_b', clientSecret: 's', usedBasic: false } }, '10.0.0.1'),
    );
    expect({ status: e.status, error: e.error }).toEqual({ status: 400, error: 'invalid_grant' });
    expect(rotate).not.toHaveBeenCalled();
  });

  it('refuses a scope the session was not granted before the rotation, and narrows to a granted subset', async () => {
    const { service, rotate } = setup();
    const e = await oauthError(service.refresh(token, FROM, { scope: 'write:invoices' }));
    expect(e.error).toBe('invalid_scope');
    expect(rotate).not.toHaveBeenCalled();
    expect((await service.refresh(token, FROM, { scope: 'read:clients' })).scope).toBe('read:clients');
    expect((await oauthError(service.refresh(token, FROM, { scope: 'read:clients  read:invoices' }))).error).toBe('invalid_scope');
  });

  it('refuses a malformed refresh token without any lookup', async () => {
    const { service, rotate } = setup();
    expect((await oauthError(service.refresh('rt_live_nope', FROM))).error).toBe('invalid_grant');
    expect(rotate).not.toHaveBeenCalled();
  });

  it('refuses a refresh from outside the key\'s allowlist before the rotation (unauthorized_client, nothing spent)', async () => {
    const { service, rotate, apiKeys, active } = setup();
    apiKeys.findById.mockResolvedValue({ ...active(KEY_A), allowedIps: ['203.0.113.0/24'] } as ApiKeyEntity);
    const e = await oauthError(service.refresh(token, FROM));
    expect({ status: e.status, error: e.error }).toEqual({ status: 400, error: 'unauthorized_client' });
    expect(rotate).not.toHaveBeenCalled();
    await service.refresh(token, { address: '203.0.113.9' });
    expect(rotate).toHaveBeenCalledTimes(1);
  });

  it('refuses a refresh of an expired key from the instant of its expiry, before the sweep has marked it', async () => {
    const { service, rotate, apiKeys, active } = setup();
    apiKeys.findById.mockResolvedValue({ ...active(KEY_A), expiresAt: new Date(1_763_700_000_000) } as ApiKeyEntity);
    expect((await oauthError(service.refresh(token, FROM))).error).toBe('invalid_grant');
    expect(rotate).not.toHaveBeenCalled();
  });
});

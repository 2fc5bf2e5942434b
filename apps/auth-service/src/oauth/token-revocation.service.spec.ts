import { DEV_JWT_KEYS, parseKeyRing } from '@invoicing/auth-guard';
import { toPublicId } from '@invoicing/contracts';
import type { ApiKeyEntity } from '../keys/api-key.entity';
import type { Clock } from '../common/clock';
import type { AuthConfig } from '../config/config';
import { newRefreshToken } from '../keys/credential-format';
import type { PendingRevocationRecord, SessionStore } from '../sessions/session-store';
import { AccessTokenSigner } from './access-token-signer';
import type { ClientAuthenticator } from './client-authenticator';
import type { RevocationOutbox } from '../revocation/revocation-outbox.service';
import { parseRevocationRequest, TokenRevocationService } from './token-revocation.service';
import { basicAuth as basic, thrownOAuthError as thrown } from '../testing/oauth-errors';

const KEY_A = '01933c3e-8a7b-7cc0-9f00-00000000000a';
const KEY_B = '01933c3e-8a7b-7cc0-9f00-00000000000b';
const ORG = '01933c3e-8a7b-7cc0-9f00-0000000000f0';
const SID = 'ses_01933c3e8a7b7cc09f00000000000001';

const config = {
  keyRing: parseKeyRing(DEV_JWT_KEYS),
  JWT_ISSUER: 'http://localhost:8080',
  JWT_AUDIENCE: 'invoicing-api',
  ACCESS_TOKEN_LIFETIME_SECONDS: 3600,
} as AuthConfig;

function setup() {
  const pending = { apiKeyUuid: KEY_A, raw: '{}', event: { event_id: 'e', reason: 'session_revoked', session_ids: [SID], revoked_at: '1', org: ORG, cid: 'ak_live_a' } } as PendingRevocationRecord;
  const sessions = {
    findPointer: jest.fn().mockResolvedValue({ apiKeyUuid: KEY_A, sessionId: SID }),
    revokeSession: jest.fn().mockResolvedValue(pending),
  };
  const outbox = { enqueue: jest.fn().mockResolvedValue(true) };
  const key = { id: KEY_A, organizationId: ORG, clientId: 'ak_live_a', status: 'active' } as ApiKeyEntity;
  const clients = { authenticate: jest.fn().mockResolvedValue(key) };
  const service = new TokenRevocationService(
    clients as unknown as ClientAuthenticator,
    sessions as unknown as SessionStore,
    outbox as unknown as RevocationOutbox,
    { now: () => 1_763_700_000_000 } as Clock,
    config,
  );
  return { service, sessions, outbox };
}

const client = { clientId: 'ak_live_a', clientSecret: 's', usedBasic: true };
const signer = new AccessTokenSigner(config);
const accessToken = (keyUuid: string, issuedAt = Date.now()) =>
  signer.issue({ sub: toPublicId('key', keyUuid), client_id: 'ak_live_a', org_id: toPublicId('org', ORG), scope: 'read:invoices', sid: SID }, issuedAt).token;

describe(TokenRevocationService.name, () => {
  it('ends the session of its own refresh token, and announces it', async () => {
    const { service, sessions, outbox } = setup();
    expect(await service.revoke({ token: newRefreshToken(), tokenTypeHint: null, client }, '127.0.0.1')).toBe('revoked');
    expect(sessions.revokeSession).toHaveBeenCalledWith(expect.objectContaining({ apiKeyUuid: KEY_A, sessionId: SID, evenIfGone: false }));
    expect(outbox.enqueue).toHaveBeenCalledTimes(1);
  });

  it("should not touch another key's refresh token", async () => {
    const { service, sessions, outbox } = setup();
    sessions.findPointer.mockResolvedValue({ apiKeyUuid: KEY_B, sessionId: SID });
    expect(await service.revoke({ token: newRefreshToken(), tokenTypeHint: 'refresh_token', client }, '127.0.0.1')).toBe('nothing_to_revoke');
    expect(sessions.revokeSession).not.toHaveBeenCalled();
    expect(outbox.enqueue).not.toHaveBeenCalled();
  });

  it('ends the session named by a verified access token of its own key, even if the session is gone', async () => {
    const { service, sessions } = setup();
    expect(await service.revoke({ token: accessToken(KEY_A), tokenTypeHint: 'refresh_token', client }, '127.0.0.1')).toBe('revoked');
    expect(sessions.revokeSession).toHaveBeenCalledWith(expect.objectContaining({ sessionId: SID, evenIfGone: true }));
    expect(sessions.findPointer).not.toHaveBeenCalled();
  });

  it('does nothing for a foreign, expired, wrongly signed or malformed access token', async () => {
    const { service, sessions } = setup();
    const [h, p] = accessToken(KEY_A).split('.');
    for (const token of [accessToken(KEY_B), accessToken(KEY_A, Date.now() - 2 * 3600 * 1000), `${h}.${p}.AAAA`, 'garbage', '']) {
      expect(await service.revoke({ token, tokenTypeHint: 'access_token', client }, '127.0.0.1')).toBe('nothing_to_revoke');
    }
    expect(sessions.revokeSession).not.toHaveBeenCalled();
  });

  it('reports nothing to revoke when the script changed nothing (already revoked)', async () => {
    const { service, sessions, outbox } = setup();
    sessions.revokeSession.mockResolvedValue(null);
    expect(await service.revoke({ token: newRefreshToken(), tokenTypeHint: null, client }, '127.0.0.1')).toBe('nothing_to_revoke');
    expect(outbox.enqueue).not.toHaveBeenCalled();
  });
});



describe(parseRevocationRequest.name, () => {
  it('reads token, a known hint and the client credentials from Basic or the body', () => {
    expect(parseRevocationRequest({ token: 't', token_type_hint: 'access_token' }, basic('ak', 'sk'))).toEqual({
      token: 't',
      tokenTypeHint: 'access_token',
      client: { clientId: 'ak', clientSecret: 'sk', usedBasic: true },
    });
    expect(parseRevocationRequest({ token: 't', client_id: 'ak', client_secret: 'sk' }, undefined)).toMatchObject({
      tokenTypeHint: null,
      client: { clientId: 'ak', usedBasic: false },
    });
  });

  it('ignores an unknown hint (RFC 7009 section 2.1)', () => {
    expect(parseRevocationRequest({ token: 't', token_type_hint: 'id_token' }, basic('ak', 'sk')).tokenTypeHint).toBeNull();
  });

  it('answers 401 invalid_client with a Basic challenge when the client does not authenticate', () => {
    const e = thrown(() => parseRevocationRequest({ token: 't' }, undefined));
    expect({ status: e.status, error: e.oauthError }).toEqual({ status: 401, error: 'invalid_client' });
    expect(e.headers['WWW-Authenticate']).toMatch(/^Basic /);
  });

  it('answers invalid_request without a token', () => {
    expect(thrown(() => parseRevocationRequest({}, basic('ak', 'sk'))).oauthError).toBe('invalid_request');
  });
});

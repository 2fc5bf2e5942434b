import { DEV_JWT_KEYS, parseKeyRing } from '@invoicing/auth-guard';
import { loadAuthConfig, type AuthConfig } from '../config/config';
import { AccessTokenSigner } from './access-token-signer';

const subject = { sub: 'key_x', client_id: 'ak_live_x', org_id: 'org_x', scope: 'read:invoices', sid: 'ses_x' };
const NOW = 1_763_700_000_000;
const claims = (token: string) => JSON.parse(Buffer.from(token.split('.')[1], 'base64url').toString()) as { iat: number; exp: number };
const signer = (lifetime: number) =>
  new AccessTokenSigner({ keyRing: parseKeyRing(DEV_JWT_KEYS), JWT_ISSUER: 'http://localhost:8080', JWT_AUDIENCE: 'invoicing-api', ACCESS_TOKEN_LIFETIME_SECONDS: lifetime } as AuthConfig);

describe(AccessTokenSigner.name, () => {
  it('issues tokens for the configured lifetime, and says so in expires_in', () => {
    for (const lifetime of [3600, 5]) {
      const { token, expiresIn } = signer(lifetime).issue(subject, NOW);
      const { iat, exp } = claims(token);
      expect({ lifetime: exp - iat, expiresIn }).toEqual({ lifetime, expiresIn: lifetime });
    }
  });

  it('never lets a token outlive its key', () => {
    const { token, expiresIn } = signer(3600).issue({ ...subject, notAfterMs: NOW + 90_000 }, NOW);
    expect(claims(token).exp - claims(token).iat).toBe(90);
    expect(expiresIn).toBe(90);
  });

  it('defaults to the documented lifetime (docs/api.md, section 5) and refuses a longer one (revocations are kept for 3600 s)', () => {
    const base = { NODE_ENV: 'test', JWT_KEYS: DEV_JWT_KEYS };
    expect(loadAuthConfig(base).ACCESS_TOKEN_LIFETIME_SECONDS).toBe(3600);
    expect(loadAuthConfig({ ...base, ACCESS_TOKEN_LIFETIME_SECONDS: '5' }).ACCESS_TOKEN_LIFETIME_SECONDS).toBe(5);
    expect(() => loadAuthConfig({ ...base, ACCESS_TOKEN_LIFETIME_SECONDS: '3601' })).toThrow(/ACCESS_TOKEN_LIFETIME_SECONDS/);
  });
});

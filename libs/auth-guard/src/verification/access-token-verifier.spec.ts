import { createSigner } from 'fast-jwt';
import { createHmac } from 'node:crypto';
import { AccessTokenVerifier, InvalidTokenError, isTokenRefusal } from './access-token-verifier';
import { parseKeyRing } from './key-ring';

const ring = parseKeyRing(
  `k1=${Buffer.alloc(32, 1).toString('base64url')},k2=${Buffer.alloc(32, 2).toString('base64url')}`,
);
const verifier = new AccessTokenVerifier({ keys: ring.keys, issuer: 'https://issuer', audience: 'invoicing-api' });

function claims(overrides: Record<string, unknown> = {}) {
  const iat = Math.floor(Date.now() / 1000);
  return {
    iss: 'https://issuer',
    aud: 'invoicing-api',
    sub: 'key_1',
    client_id: 'ak_live_x',
    org_id: 'org_1',
    scope: 'read:invoices',
    sid: 'ses_1',
    jti: 'j1',
    iat,
    exp: iat + 3600,
    ...overrides,
  };
}

function sign(payload: Record<string, unknown>, kid = 'k1', header: Record<string, unknown> = { typ: 'at+jwt' }) {
  return createSigner({ key: ring.keys.get(kid)!, algorithm: 'HS256', kid, header: { alg: 'HS256', ...header } })(payload);
}

function reason(token: string): string {
  try {
    verifier.verify(token);
  } catch (e) {
    expect(e).toBeInstanceOf(InvalidTokenError);
    return (e as InvalidTokenError).description;
  }
  return 'accepted';
}

describe(AccessTokenVerifier.name, () => {
  it('accepts a token signed by any key of the ring', () => {
    expect(verifier.verify(sign(claims())).sub).toBe('key_1');
    expect(verifier.verify(sign(claims(), 'k2')).sub).toBe('key_1');
  });

  it('refuses an unknown kid, a wrong signature and an alg other than HS256', () => {
    const other = createSigner({ key: Buffer.alloc(32, 9), algorithm: 'HS256', kid: 'k1', header: { alg: 'HS256', typ: 'at+jwt' } });
    expect(reason(other(claims()))).toBe('The access token signature is invalid.');
    const unknownKid = createSigner({ key: Buffer.alloc(32, 1), algorithm: 'HS256', kid: 'k9', header: { alg: 'HS256', typ: 'at+jwt' } });
    expect(reason(unknownKid(claims()))).toBe('The access token is malformed or signed with an unknown key.');
    const hs512 = createSigner({ key: Buffer.alloc(32, 1), algorithm: 'HS512', kid: 'k1', header: { alg: 'HS512', typ: 'at+jwt' } });
    expect(reason(hs512(claims()))).toBe('The access token is not signed with HS256.');
  });

  it('names an API key credential or a refresh token sent as the Bearer token, with the way to an access token, echoing none of it', () => {
    const secret = 'sk_live_0123456789abcdefghijklmnopqrstuvwxyzABCD';
    expect(reason(secret)).toMatch(/^This is an API key credential, not an access token: exchange .* at POST \/api\/v1\/auth\/token/);
    expect(reason('ak_live_rt46wmTb0uB5Vfcrlvb5yXWp')).toBe(reason(secret));
    expect(reason('rt_live_0123456789abcdef')).toMatch(/^This is a refresh token, not an access token: exchange it at POST \/api\/v1\/auth\/token \(grant_type=refresh_token\)/);
    expect(reason(secret)).not.toContain('0123456789');
    // Anything else that is not a JWT keeps the general answer.
    expect(reason('abc')).toBe('The access token is malformed or signed with an unknown key.');
  });

  it('refuses alg "none" even with a known kid', () => {
    const header = Buffer.from(JSON.stringify({ alg: 'none', typ: 'at+jwt', kid: 'k1' })).toString('base64url');
    const body = Buffer.from(JSON.stringify(claims())).toString('base64url');
    expect(reason(`${header}.${body}.`)).not.toBe('accepted');
  });

  it('refuses a token of another type, issuer or audience', () => {
    expect(reason(sign(claims(), 'k1', { typ: 'JWT' }))).toBe('The token is not an access token.');
    expect(reason(sign(claims({ iss: 'https://evil' })))).toBe('The access token was not issued for this API.');
    expect(reason(sign(claims({ aud: 'other' })))).toBe('The access token was not issued for this API.');
  });

  it('refuses an expired token and one missing a claim', () => {
    const past = Math.floor(Date.now() / 1000) - 7200;
    expect(reason(sign(claims({ iat: past, exp: past + 3600 })))).toBe('The access token expired.');
    const { sid, ...withoutSid } = claims();
    expect(sid).toBeDefined();
    expect(reason(sign(withoutSid))).toBe('The access token was not issued for this API.');
  });

  it('remembers an accepted token only until it expires, and never a refused one', () => {
    const cached = new AccessTokenVerifier({ keys: ring.keys, issuer: 'https://issuer', audience: 'invoicing-api', clockToleranceSeconds: 0 });
    const now = Date.now();
    const iat = Math.floor(now / 1000);
    const token = sign(claims({ iat, exp: iat + 2 }));
    const clock = jest.spyOn(Date, 'now');
    try {
      clock.mockReturnValue(now);
      expect(cached.verify(token).sub).toBe('key_1');
      expect(cached.verify(token).sub).toBe('key_1');
      clock.mockReturnValue((iat + 3) * 1000);
      expect(isTokenRefusal(cached.check(token))).toBe(true);
      expect(() => cached.verify(token)).toThrow('The access token expired.');
      clock.mockReturnValue(now);
      const forged = `${token.slice(0, -2)}${token.endsWith('AA') ? 'BB' : 'AA'}`;
      expect(isTokenRefusal(cached.check(forged))).toBe(true);
      expect(isTokenRefusal(cached.check(forged))).toBe(true);
    } finally {
      clock.mockRestore();
    }
  });

  it('keeps at most cacheSize accepted tokens, and still accepts those it forgot', () => {
    const small = new AccessTokenVerifier({ keys: ring.keys, issuer: 'https://issuer', audience: 'invoicing-api', cacheSize: 2 });
    const tokens = ['a', 'b', 'c'].map((jti) => sign(claims({ jti })));
    for (const t of tokens) expect(small.verify(t).jti).toBeDefined();
    const accepted = (small as unknown as { accepted: Map<string, unknown> }).accepted;
    expect([...accepted.keys()]).toEqual(tokens.slice(1));
    expect(small.verify(tokens[0]).jti).toBe('a');
  });

  it('refuses garbage', () => {
    for (const token of ['', 'abc', 'a.b.c', '.....']) expect(reason(token)).not.toBe('accepted');
  });

  it('verifies what a raw HMAC-SHA256 over the signing input produces', () => {
    const token = sign(claims());
    const [h, p, s] = token.split('.');
    expect(createHmac('sha256', ring.keys.get('k1')!).update(`${h}.${p}`).digest('base64url')).toBe(s);
  });
});

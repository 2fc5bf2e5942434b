import { OAuthError } from './oauth-error';
import { parseRefreshRequest, parseRevocationRequest, parseTokenRequest } from './token-request';

const basic = (id: string, secret: string) =>
  `Basic ${Buffer.from(`${encodeURIComponent(id)}:${encodeURIComponent(secret)}`).toString('base64')}`;

function oauthError(fn: () => unknown): OAuthError {
  try {
    fn();
  } catch (e) {
    expect(e).toBeInstanceOf(OAuthError);
    return e as OAuthError;
  }
  throw new Error('expected an OAuthError');
}

describe(`${parseTokenRequest.name} (client_credentials)`, () => {
  it('reads credentials from the body', () => {
    expect(
      parseTokenRequest({ grant_type: 'client_credentials', client_id: 'ak', client_secret: 'sk' }, undefined),
    ).toEqual({ grantType: 'client_credentials', clientId: 'ak', clientSecret: 'sk', scope: null, usedBasic: false });
  });

  it('reads credentials from HTTP Basic (form-urlencoded inside, RFC 6749 2.3.1)', () => {
    expect(parseTokenRequest({ grant_type: 'client_credentials', scope: 'read:invoices' }, basic('ak', 's+k'))).toEqual({
      grantType: 'client_credentials',
      clientId: 'ak',
      clientSecret: 's+k',
      scope: 'read:invoices',
      usedBasic: true,
    });
  });

  it('refuses two authentication methods at once', () => {
    const e = oauthError(() =>
      parseTokenRequest({ grant_type: 'client_credentials', client_secret: 'sk' }, basic('ak', 'sk')),
    );
    expect(e.error).toBe('invalid_request');
  });

  it('answers unsupported_grant_type for another grant, invalid_request for a missing one', () => {
    expect(oauthError(() => parseTokenRequest({ grant_type: 'password' }, undefined)).error).toBe(
      'unsupported_grant_type',
    );
    expect(oauthError(() => parseTokenRequest({}, undefined)).error).toBe('invalid_request');
  });

  it('refuses repeated parameters, non-string values and non-object bodies', () => {
    const repeated = { grant_type: 'client_credentials', client_id: ['a', 'b'], client_secret: 's' };
    expect(oauthError(() => parseTokenRequest(repeated, undefined)).error).toBe('invalid_request');
    const numeric = { grant_type: 'client_credentials', client_id: 1, client_secret: 's' };
    expect(oauthError(() => parseTokenRequest(numeric, undefined)).error).toBe('invalid_request');
    expect(oauthError(() => parseTokenRequest([1], undefined)).error).toBe('invalid_request');
    expect(oauthError(() => parseTokenRequest({ grant_type: 'client_credentials' }, 'Bearer x')).error).toBe(
      'invalid_request',
    );
  });
});

describe(parseRefreshRequest.name, () => {
  it('requires refresh_token and accepts the standard grant_type', () => {
    expect(parseRefreshRequest({ refresh_token: 'rt' })).toEqual({ refreshToken: 'rt' });
    expect(parseRefreshRequest({ refresh_token: 'rt', grant_type: 'refresh_token' })).toEqual({ refreshToken: 'rt' });
    expect(oauthError(() => parseRefreshRequest({})).error).toBe('invalid_request');
    expect(oauthError(() => parseRefreshRequest({ refresh_token: 'rt', grant_type: 'password' })).error).toBe(
      'unsupported_grant_type',
    );
  });
});

describe(parseTokenRequest.name, () => {
  it('reads the client-credentials grant and names a missing secret', () => {
    expect(parseTokenRequest({ grant_type: 'client_credentials', client_id: 'ak', client_secret: 'sk' }, undefined)).toEqual({
      grantType: 'client_credentials',
      clientId: 'ak',
      clientSecret: 'sk',
      scope: null,
      usedBasic: false,
    });
    expect(oauthError(() => parseTokenRequest({ grant_type: 'client_credentials', client_id: 'ak' }, undefined)).description).toMatch(
      /client_secret/,
    );
  });

  it('reads the refresh grant without client authentication', () => {
    expect(parseTokenRequest({ grant_type: 'refresh_token', refresh_token: 'rt' }, undefined)).toEqual({
      grantType: 'refresh_token',
      refreshToken: 'rt',
      scope: null,
      client: null,
    });
  });

  it('reads the refresh grant with HTTP Basic or with the credentials in the body, and a scope', () => {
    expect(parseTokenRequest({ grant_type: 'refresh_token', refresh_token: 'rt', scope: 'read:invoices' }, basic('ak', 'sk'))).toEqual({
      grantType: 'refresh_token',
      refreshToken: 'rt',
      scope: 'read:invoices',
      client: { clientId: 'ak', clientSecret: 'sk', usedBasic: true },
    });
    expect(parseTokenRequest({ grant_type: 'refresh_token', refresh_token: 'rt', client_id: 'ak', client_secret: 'sk' }, undefined)).toMatchObject({
      client: { clientId: 'ak', clientSecret: 'sk', usedBasic: false },
    });
  });

  it('turns a client_id without a secret into credentials that fail authentication, not into no authentication', () => {
    expect(parseTokenRequest({ grant_type: 'refresh_token', refresh_token: 'rt', client_id: 'ak' }, undefined)).toMatchObject({
      client: { clientId: 'ak', clientSecret: '' },
    });
    expect(oauthError(() => parseTokenRequest({ grant_type: 'refresh_token', refresh_token: 'rt', client_secret: 'sk' }, undefined)).error).toBe(
      'invalid_request',
    );
  });

  it('requires refresh_token, and answers unsupported_grant_type for any other grant', () => {
    expect(oauthError(() => parseTokenRequest({ grant_type: 'refresh_token' }, undefined)).error).toBe('invalid_request');
    for (const grant_type of ['password', 'authorization_code', 'urn:ietf:params:oauth:grant-type:device_code']) {
      expect(oauthError(() => parseTokenRequest({ grant_type }, undefined)).error).toBe('unsupported_grant_type');
    }
    expect(oauthError(() => parseTokenRequest({ grant_type: 'refresh_token', refresh_token: 'rt', client_secret: 'x' }, basic('ak', 'sk'))).error).toBe(
      'invalid_request',
    );
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
    const e = oauthError(() => parseRevocationRequest({ token: 't' }, undefined));
    expect({ status: e.status, error: e.error }).toEqual({ status: 401, error: 'invalid_client' });
    expect(e.headers['WWW-Authenticate']).toMatch(/^Basic /);
  });

  it('answers invalid_request without a token', () => {
    expect(oauthError(() => parseRevocationRequest({}, basic('ak', 'sk'))).error).toBe('invalid_request');
  });
});

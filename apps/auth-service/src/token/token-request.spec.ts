import { OAuthError } from './oauth-error';
import { parseClientCredentialsRequest, parseRefreshRequest } from './token-request';

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

describe(parseClientCredentialsRequest.name, () => {
  it('reads credentials from the body', () => {
    expect(
      parseClientCredentialsRequest({ grant_type: 'client_credentials', client_id: 'ak', client_secret: 'sk' }, undefined),
    ).toEqual({ clientId: 'ak', clientSecret: 'sk', scope: null, usedBasic: false });
  });

  it('reads credentials from HTTP Basic (form-urlencoded inside, RFC 6749 2.3.1)', () => {
    expect(parseClientCredentialsRequest({ grant_type: 'client_credentials', scope: 'read:invoices' }, basic('ak', 's+k'))).toEqual({
      clientId: 'ak',
      clientSecret: 's+k',
      scope: 'read:invoices',
      usedBasic: true,
    });
  });

  it('refuses two authentication methods at once', () => {
    const e = oauthError(() =>
      parseClientCredentialsRequest({ grant_type: 'client_credentials', client_secret: 'sk' }, basic('ak', 'sk')),
    );
    expect(e.error).toBe('invalid_request');
  });

  it('answers unsupported_grant_type for another grant, invalid_request for a missing one', () => {
    expect(oauthError(() => parseClientCredentialsRequest({ grant_type: 'password' }, undefined)).error).toBe(
      'unsupported_grant_type',
    );
    expect(oauthError(() => parseClientCredentialsRequest({}, undefined)).error).toBe('invalid_request');
  });

  it('refuses repeated parameters, non-string values and non-object bodies', () => {
    const repeated = { grant_type: 'client_credentials', client_id: ['a', 'b'], client_secret: 's' };
    expect(oauthError(() => parseClientCredentialsRequest(repeated, undefined)).error).toBe('invalid_request');
    const numeric = { grant_type: 'client_credentials', client_id: 1, client_secret: 's' };
    expect(oauthError(() => parseClientCredentialsRequest(numeric, undefined)).error).toBe('invalid_request');
    expect(oauthError(() => parseClientCredentialsRequest([1], undefined)).error).toBe('invalid_request');
    expect(oauthError(() => parseClientCredentialsRequest({ grant_type: 'client_credentials' }, 'Bearer x')).error).toBe(
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

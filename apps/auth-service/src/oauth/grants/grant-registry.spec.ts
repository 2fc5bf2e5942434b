import { buildAuthorizationServerMetadata } from '../authorization-server-metadata';
import type { ClientCredentialsGrant } from './client-credentials.grant';
import { GrantRegistry } from './grant-registry';
import type { RefreshTokenGrant } from './refresh-token.grant';
import { thrownOAuthError as thrown } from '../../testing/oauth-errors';

function setup() {
  const clientCredentials = { grantType: 'client_credentials', handle: jest.fn().mockResolvedValue('cc') };
  const refreshToken = { grantType: 'refresh_token', handle: jest.fn().mockResolvedValue('rt') };
  const registry = new GrantRegistry(clientCredentials as unknown as ClientCredentialsGrant, refreshToken as unknown as RefreshTokenGrant);
  return { registry, clientCredentials, refreshToken };
}


describe(GrantRegistry.name, () => {
  it('hands the request to the grant its grant_type names, with the client authentication and address', async () => {
    const { registry, clientCredentials, refreshToken } = setup();
    const body = { grant_type: 'refresh_token', refresh_token: 'rt' };
    expect(await registry.handle(body, 'Basic x', '10.0.0.1')).toBe('rt');
    expect(refreshToken.handle).toHaveBeenCalledWith(body, 'Basic x', '10.0.0.1');
    expect(clientCredentials.handle).not.toHaveBeenCalled();
  });

  it('answers unsupported_grant_type for any other grant, invalid_request for a missing or repeated one', () => {
    const { registry, clientCredentials, refreshToken } = setup();
    for (const grant_type of ['password', 'authorization_code', 'urn:ietf:params:oauth:grant-type:device_code', '__proto__', 'constructor']) {
      const e = thrown(() => registry.handle({ grant_type }, undefined, '10.0.0.1'));
      expect({ status: e.status, error: e.oauthError, description: e.detail }).toEqual({
        status: 400,
        error: 'unsupported_grant_type',
        description: 'The grant_type must be client_credentials or refresh_token.',
      });
    }
    expect(thrown(() => registry.handle({}, undefined, '10.0.0.1')).detail).toBe('The grant_type parameter is required.');
    expect(thrown(() => registry.handle(undefined, undefined, '10.0.0.1')).detail).toBe('The grant_type parameter is required.');
    expect(thrown(() => registry.handle({ grant_type: ['client_credentials', 'x'] }, undefined, '10.0.0.1')).oauthError).toBe('invalid_request');
    expect(thrown(() => registry.handle([1], undefined, '10.0.0.1')).detail).toBe('The request body must be a JSON object or a form.');
    expect(thrown(() => registry.handle('grant_type=x', undefined, '10.0.0.1')).oauthError).toBe('invalid_request');
    expect(clientCredentials.handle).not.toHaveBeenCalled();
    expect(refreshToken.handle).not.toHaveBeenCalled();
  });

  it('holds exactly the grants the RFC 8414 metadata announces', () => {
    expect(setup().registry.grantTypes).toEqual(buildAuthorizationServerMetadata('https://api.example').grant_types_supported);
  });
});

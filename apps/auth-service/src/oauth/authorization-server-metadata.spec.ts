import { ALL_SCOPES } from '@invoicing/contracts';
import { buildAuthorizationServerMetadata } from './authorization-server-metadata';

describe(buildAuthorizationServerMetadata.name, () => {
  it('names the issuer exactly as the tokens do and puts every endpoint under it', () => {
    expect(buildAuthorizationServerMetadata('https://api.example.com')).toEqual({
      issuer: 'https://api.example.com',
      token_endpoint: 'https://api.example.com/api/v1/auth/token',
      revocation_endpoint: 'https://api.example.com/api/v1/auth/revoke',
      grant_types_supported: ['client_credentials', 'refresh_token'],
      token_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      revocation_endpoint_auth_methods_supported: ['client_secret_basic', 'client_secret_post'],
      scopes_supported: [...ALL_SCOPES],
      response_types_supported: [],
      service_documentation: 'https://api.example.com/api/v1/docs',
    });
  });

  it('does not double a trailing slash of the issuer, and keeps the issuer as written', () => {
    const metadata = buildAuthorizationServerMetadata('http://localhost:8080/');
    expect(metadata.issuer).toBe('http://localhost:8080/');
    expect(metadata.token_endpoint).toBe('http://localhost:8080/api/v1/auth/token');
  });
});

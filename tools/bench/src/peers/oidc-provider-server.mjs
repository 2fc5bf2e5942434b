// The peer people would pick instead of our token endpoint: panva's oidc-provider (npm), issuing
// HS256 JWT access tokens (RFC 9068) on client_credentials, like ours. In-memory adapter (its
// default), one confidential client with client_secret_basic. Prints
// `READY {"port":..,"token_endpoint":..,"client_id":..,"client_secret":..,"scope":..}` once
// listening; exits on SIGTERM.
import { createSecretKey, randomBytes } from 'node:crypto';
import Provider from 'oidc-provider';

const port = Number(process.env.PORT ?? 4100);
const issuer = `http://127.0.0.1:${port}`;
const client = { client_id: 'bench-client', client_secret: 'bench-secret-0123456789abcdefghijklmnopqrstuv' };
const scope = 'read:invoices';
const key = createSecretKey(randomBytes(32));

const provider = new Provider(issuer, {
  clients: [
    {
      ...client,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
    },
  ],
  scopes: ['read:invoices', 'write:invoices'],
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    resourceIndicators: {
      enabled: true,
      defaultResource: () => 'urn:invoicing:api',
      useGrantedResource: () => true,
      getResourceServerInfo: () => ({
        scope: 'read:invoices write:invoices',
        audience: 'invoicing-api',
        accessTokenTTL: 3600,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'HS256', key } },
      }),
    },
  },
});
// Errors a load test may provoke would otherwise print a stack each.
provider.on('server_error', () => undefined);

const server = provider.listen(port, '127.0.0.1', () => {
  process.stdout.write(`READY ${JSON.stringify({ port, token_endpoint: `${issuer}/token`, ...client, auth: 'basic', scope })}\n`);
});
process.on('SIGTERM', () => server.close(() => process.exit(0)));

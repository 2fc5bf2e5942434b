// The peer people would pick instead of our token endpoint: panva's oidc-provider (npm), issuing
// HS256 JWT access tokens (RFC 9068) on client_credentials, like ours. In-memory adapter (its
// default; JWT access tokens are not stored in it, so it does not grow under load), one
// confidential client registered with client_secret_basic (oidc-provider 9 accepts the secret in
// the body too, client_secret_post, for a client registered with either). Prints
// `READY {"port":..,"token_endpoint":..,"client_id":..,"client_secret":..,"auth":"basic","scope":..}`
// on stdout once listening, and nothing else there; exits on SIGTERM.
//
// On stderr it warns once each about Node 20 (it wants 22; there is no option to silence that, it
// runs on import), its development adapter and its development signing keys (RS256 keys for ID
// tokens, unused here): none of them matters for client_credentials JWTs.
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
// A 500 is answered as `server_error` and emitted, not printed: put its message in the log, so a
// benchmark line full of non-2xx can be explained.
provider.on('server_error', (_ctx, err) => process.stderr.write(`oidc-provider server_error: ${err?.message ?? err}\n`));

const server = provider.listen(port, '127.0.0.1', () => {
  process.stdout.write(`READY ${JSON.stringify({ port, token_endpoint: `${issuer}/token`, ...client, auth: 'basic', scope })}\n`);
});
// Nothing is worth draining (in-memory state only): drop autocannon's keep-alive sockets and go.
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => {
    server.close(() => process.exit(0));
    server.closeAllConnections();
  });
}

// Runs one call of a real OAuth client library (openid-client v6, jose v6) against the platform and
// prints its outcome as one line of JSON. openid-client and jose are ESM-only, and Jest's CommonJS
// runtime cannot load them (openid-client's package.json has "type": "module" and exports only
// build/index.js; jose 6 dropped its CommonJS build), so oauth-interop.e2e-spec.ts spawns this
// script with plain Node instead of importing them, exactly as a real integration would use them.
//
// Usage: node oauth-client.mjs '<json>' where json is
//   { op: 'discover' | 'client_credentials' | 'refresh' | 'revoke' | 'verify', base, clientId,
//     clientSecret, auth: 'basic' | 'post', scope?, token?, hint?, key?, issuer?, audience? }
import * as client from 'openid-client';
import { jwtVerify } from 'jose';

const input = JSON.parse(process.argv[2]);

async function configuration() {
  const auth = input.auth === 'post' ? client.ClientSecretPost(input.clientSecret) : client.ClientSecretBasic(input.clientSecret);
  // RFC 8414 discovery from the base URL ('oauth2': /.well-known/oauth-authorization-server, not
  // OpenID Connect's openid-configuration); plain http is allowed for the local test stack only.
  return client.discovery(new URL(input.base), input.clientId, undefined, auth, {
    execute: [client.allowInsecureRequests],
    algorithm: 'oauth2',
  });
}

const tokens = (response) => ({
  access_token: response.access_token,
  refresh_token: response.refresh_token,
  token_type: response.token_type,
  expires_in: response.expires_in,
  scope: response.scope,
});

async function run() {
  switch (input.op) {
    case 'discover':
      return { metadata: (await configuration()).serverMetadata() };
    case 'client_credentials':
      return tokens(await client.clientCredentialsGrant(await configuration(), input.scope ? { scope: input.scope } : {}));
    case 'refresh':
      return tokens(await client.refreshTokenGrant(await configuration(), input.token));
    case 'revoke':
      await client.tokenRevocation(await configuration(), input.token, input.hint ? { token_type_hint: input.hint } : {});
      return { revoked: true };
    case 'verify': {
      const { payload, protectedHeader } = await jwtVerify(input.token, Buffer.from(input.key, 'base64url'), {
        algorithms: ['HS256'],
        typ: 'at+jwt',
        issuer: input.issuer,
        audience: input.audience,
        requiredClaims: ['iss', 'aud', 'exp', 'sub', 'client_id', 'iat', 'jti', 'scope'],
      });
      return { header: protectedHeader, payload };
    }
    default:
      throw new Error(`unknown op ${input.op}`);
  }
}

try {
  console.log(JSON.stringify({ ok: true, result: await run() }));
} catch (e) {
  // ResponseBodyError carries the RFC 6749 error; other errors their code (e.g. ERR_JWT_EXPIRED).
  // A 401 with `WWW-Authenticate: Basic` (client_secret_basic refused) is thrown as
  // WWWAuthenticateChallengeError before the body is read: its RFC 6749 error is in the response.
  const error = e?.error ?? (await e?.response?.json?.().then((body) => body?.error, () => undefined));
  console.log(JSON.stringify({ ok: false, name: e?.name, code: e?.code, error, status: e?.status, message: String(e?.message ?? e) }));
}

/**
 * Keycloak as a peer (when KEYCLOAK_URL is set): creates, through the admin REST API, a realm
 * `bench` whose active signing key is an HS256 `hmac-generated` key and whose default signature
 * algorithm is HS256 (ours signs HS256; comparing with RS256 would flatter us), and a confidential
 * client with service accounts (client_credentials). Idempotent: a second run reuses what exists.
 * Start Keycloak with tools/bench/keycloak/start.sh (README.md).
 */
export interface KeycloakPeer {
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
}

const REALM = 'bench';
const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = 'bench-secret-0123456789abcdefghijklmnopqrstuv';

export async function setupKeycloak(baseUrl: string, admin = { user: 'admin', password: 'admin' }): Promise<KeycloakPeer> {
  const base = baseUrl.replace(/\/$/, '');
  const login = await fetch(`${base}/realms/master/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: admin.user, password: admin.password }),
  });
  if (login.status !== 200) throw new Error(`Keycloak admin login failed: ${login.status} ${await login.text()}`);
  const { access_token: token } = (await login.json()) as { access_token: string };
  const api = async (method: string, path: string, body?: unknown): Promise<Response> => {
    const r = await fetch(`${base}/admin/realms${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    if (r.status >= 400 && r.status !== 409) throw new Error(`Keycloak ${method} ${path}: ${r.status} ${await r.text()}`);
    return r;
  };

  if ((await fetch(`${base}/realms/${REALM}`)).status === 404) {
    await api('POST', '', { realm: REALM, enabled: true });
  }
  const realm = (await (await api('GET', `/${REALM}`)).json()) as { id: string };
  const components = (await (await api('GET', `/${REALM}/components?type=org.keycloak.keys.KeyProvider`)).json()) as Array<{ providerId: string }>;
  if (!components.some((c) => c.providerId === 'hmac-generated' && JSON.stringify(c).includes('HS256'))) {
    await api('POST', `/${REALM}/components`, {
      name: 'bench-hs256',
      providerId: 'hmac-generated',
      providerType: 'org.keycloak.keys.KeyProvider',
      parentId: realm.id,
      config: { priority: ['200'], enabled: ['true'], active: ['true'], algorithm: ['HS256'], secretSize: ['32'] },
    });
  }
  await api('PUT', `/${REALM}`, { realm: REALM, enabled: true, defaultSignatureAlgorithm: 'HS256' });
  const clients = (await (await api('GET', `/${REALM}/clients?clientId=${CLIENT_ID}`)).json()) as unknown[];
  if (clients.length === 0) {
    await api('POST', `/${REALM}/clients`, {
      clientId: CLIENT_ID,
      secret: CLIENT_SECRET,
      enabled: true,
      publicClient: false,
      serviceAccountsEnabled: true,
      standardFlowEnabled: false,
      directAccessGrantsEnabled: false,
      clientAuthenticatorType: 'client-secret',
      attributes: { 'access.token.signed.response.alg': 'HS256' },
    });
  }
  return { tokenEndpoint: `${base}/realms/${REALM}/protocol/openid-connect/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET };
}

/**
 * Keycloak as a peer (when KEYCLOAK_URL is set): configures, through the admin REST API, a realm
 * `bench` whose access tokens are signed HS256 (ours signs HS256; against Keycloak's default RS256
 * the comparison would flatter us) and a confidential client with service accounts, so that
 * `client_credentials` with client_secret_basic returns an HS256 JWT. Idempotent: a second run finds
 * what exists and brings it back to this configuration. Start Keycloak with
 * tools/bench/keycloak/start.sh (tools/bench/KEYCLOAK.md).
 *
 * Shapes checked against Keycloak 26.4.5: key provider `hmac-generated` with config keys
 * algorithm/secretSize/priority/active/enabled (org.keycloak.keys.Attributes), client attribute
 * `access.token.signed.response.alg` (OIDCConfigAttributes.ACCESS_TOKEN_SIGNED_RESPONSE_ALG).
 */
export interface KeycloakPeer {
  tokenEndpoint: string;
  clientId: string;
  clientSecret: string;
  /** None: a client_credentials token carries the client's default client scopes. */
  scope?: string;
}

const REALM = 'bench';
const CLIENT_ID = 'bench-client';
const CLIENT_SECRET = 'bench-secret-0123456789abcdefghijklmnopqrstuv';
const ALG = 'HS256';
const KEY_PROVIDER = 'org.keycloak.keys.KeyProvider';

interface Component {
  id: string;
  providerId: string;
  config?: Record<string, string[]>;
}

export async function setupKeycloak(baseUrl: string, admin = { user: 'admin', password: 'admin' }): Promise<KeycloakPeer> {
  const base = baseUrl.replace(/\/$/, '');
  const signal = () => AbortSignal.timeout(30_000);

  // An admin-cli token of the master realm; it lives 60 s, far longer than this setup.
  const login = await fetch(`${base}/realms/master/protocol/openid-connect/token`, {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded' },
    body: new URLSearchParams({ grant_type: 'password', client_id: 'admin-cli', username: admin.user, password: admin.password }),
    signal: signal(),
  });
  if (login.status !== 200) throw new Error(`Keycloak admin login failed: ${login.status} ${await login.text()}`);
  const { access_token: token } = (await login.json()) as { access_token: string };

  /** Admin REST call under /admin/realms; returns null on 404, throws on any other failure. */
  const api = async <T = unknown>(method: string, path: string, body?: unknown): Promise<T | null> => {
    const r = await fetch(`${base}/admin/realms${path}`, {
      method,
      headers: { authorization: `Bearer ${token}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: signal(),
    });
    if (r.status === 404) return null;
    if (!r.ok) throw new Error(`Keycloak ${method} /admin/realms${path}: ${r.status} ${await r.text()}`);
    const text = await r.text();
    return (text ? JSON.parse(text) : undefined) as T;
  };

  if ((await api('GET', `/${REALM}`)) === null) {
    await api('POST', '', { realm: REALM, enabled: true });
  }
  const realm = await api<{ id: string }>('GET', `/${REALM}`);
  if (!realm) throw new Error(`Keycloak: realm ${REALM} missing right after its creation`);

  // A new realm has RSA, RSA-OAEP, AES and an HS512 HMAC key (the latter for Keycloak's own tokens),
  // but no HS256 key: signing HS256 needs a provider of that algorithm.
  const components = (await api<Component[]>('GET', `/${REALM}/components?type=${KEY_PROVIDER}`)) ?? [];
  const hs256 = components.find((c) => c.providerId === 'hmac-generated' && c.config?.algorithm?.[0] === ALG);
  if (!hs256) {
    await api('POST', `/${REALM}/components`, {
      name: 'bench-hs256',
      providerId: 'hmac-generated',
      providerType: KEY_PROVIDER,
      parentId: realm.id,
      config: { algorithm: [ALG], priority: ['200'], secretSize: ['32'], active: ['true'], enabled: ['true'] },
    });
  }
  // A partial representation: the admin API leaves the fields it does not carry as they are.
  await api('PUT', `/${REALM}`, { realm: REALM, enabled: true, defaultSignatureAlgorithm: ALG });

  const client = {
    clientId: CLIENT_ID,
    protocol: 'openid-connect',
    enabled: true,
    publicClient: false,
    clientAuthenticatorType: 'client-secret',
    secret: CLIENT_SECRET,
    serviceAccountsEnabled: true,
    standardFlowEnabled: false,
    implicitFlowEnabled: false,
    directAccessGrantsEnabled: false,
    // Per client, so the client signs HS256 even if the realm default is changed back.
    attributes: { 'access.token.signed.response.alg': ALG },
  };
  const [existing] = (await api<Array<{ id: string }>>('GET', `/${REALM}/clients?clientId=${encodeURIComponent(CLIENT_ID)}`)) ?? [];
  if (existing) {
    await api('PUT', `/${REALM}/clients/${existing.id}`, { ...client, id: existing.id });
  } else {
    await api('POST', `/${REALM}/clients`, client);
  }

  return { tokenEndpoint: `${base}/realms/${REALM}/protocol/openid-connect/token`, clientId: CLIENT_ID, clientSecret: CLIENT_SECRET };
}

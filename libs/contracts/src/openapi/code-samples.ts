import { ID_PREFIXES } from '../ids';
import { RESOURCE_MANIFEST, RESOURCES, Resource } from '../manifest';

/**
 * Request examples of the public API, attached to the OpenAPI document as `x-codeSamples` (Redoc
 * shows them beside each operation, ADR 0027): curl for every call an integration makes, and the
 * TypeScript SDK (`@invoicing/sdk`, ADR 0026) for the token endpoints and create, get and list.
 * Secrets are placeholders: environment variables, or `..._...` where a value is the caller's own.
 */
export interface CodeSample {
  /** The language Redoc highlights the sample in. */
  lang: string;
  /** The tab's name. */
  label: string;
  source: string;
}

export const CURL_SAMPLE_LABEL = 'curl';
export const SDK_SAMPLE_LABEL = 'TypeScript (SDK)';

const curl = (source: string): CodeSample => ({ lang: 'Shell', label: CURL_SAMPLE_LABEL, source });
const sdk = (source: string): CodeSample => ({ lang: 'TypeScript', label: SDK_SAMPLE_LABEL, source });

/** What the samples of one resource send and show. Every `create` validates against its schema (code-samples.spec.ts). */
interface ResourceSample {
  /** The object's name, also the variable that holds one in the SDK samples. */
  noun: string;
  create: Record<string, unknown>;
  /** A list filter worth showing (none for most resources). */
  listQuery: Record<string, string>;
  /** The field the SDK's list sample prints. */
  shown: string;
}

/** An id of the caller's own: `cli_...`. */
const placeholderId = (prefix: string) => `${prefix}_...`;

export const RESOURCE_SAMPLES = Object.fromEntries(
  RESOURCES.map((r) => [r, { noun: RESOURCE_MANIFEST[r].kind, ...RESOURCE_MANIFEST[r].sample }]),
) as unknown as Record<Resource, ResourceSample>;

const capitalized = (word: string) => word[0].toUpperCase() + word.slice(1);

/** The operation ids buildOpenApiDocument gives a resource's create, list and get. */
export function resourceOperationIds(resource: Resource): { create: string; list: string; get: string } {
  const noun = capitalized(RESOURCE_SAMPLES[resource].noun);
  return { create: `create${noun}`, list: `list${capitalized(resource)}`, get: `get${noun}` };
}

/**
 * A JSON value written as a TypeScript literal (single quotes, bare keys) or as JSON, on one line
 * when it fits in 80 columns, else one entry per line.
 */
function literal(value: unknown, style: 'ts' | 'json', indent = ''): string {
  const quote = (text: string) => (style === 'json' ? JSON.stringify(text) : `'${text.replace(/\\/g, '\\\\').replace(/'/g, "\\'")}'`);
  if (typeof value === 'string') return quote(value);
  if (typeof value !== 'object' || value === null) return JSON.stringify(value);
  const inner = `${indent}  `;
  const isArray = Array.isArray(value);
  const entries = isArray
    ? value.map((item) => literal(item, style, inner))
    : Object.entries(value).map(([key, item]) => `${style === 'ts' && /^[A-Za-z_$][\w$]*$/.test(key) ? key : quote(key)}: ${literal(item, style, inner)}`);
  if (entries.length === 0) return isArray ? '[]' : '{}';
  const [open, close] = isArray ? ['[', ']'] : ['{', '}'];
  const pad = isArray || style === 'json' ? '' : ' ';
  const oneLine = `${open}${pad}${entries.join(', ')}${pad}${close}`;
  if (indent.length + oneLine.length <= 80 && !oneLine.includes('\n')) return oneLine;
  // A trailing comma after the last entry in TypeScript (as Prettier writes it), none in JSON.
  const lines = entries.map((e, i) => `${inner}${e}${style === 'json' && i === entries.length - 1 ? '' : ','}`);
  return `${open}\n${lines.join('\n')}\n${indent}${close}`;
}

/** The SDK's client, as every SDK sample starts. */
function sdkClient(baseUrl: string): string {
  return `import { Invoicing } from '@invoicing/sdk';

const api = new Invoicing({
  baseUrl: '${baseUrl}',
  clientId: process.env.INVOICING_CLIENT_ID!,
  clientSecret: process.env.INVOICING_CLIENT_SECRET!,
});`;
}

const bearer = `  -H "Authorization: Bearer $ACCESS_TOKEN"`;

/** A JSON body for `curl -d '...'`: the examples hold no single quote (checked by the spec). */
const jsonBody = (body: unknown) => `  -d '${literal(body, 'json', '  ')}'`;

/** The code samples of each public-API operation, by operationId, for the API at `serverUrl`. */
export function codeSamples(serverUrl: string): Record<string, CodeSample[]> {
  const base = serverUrl.replace(/\/+$/, '');
  const client = sdkClient(base);
  const samples: Record<string, CodeSample[]> = {
    createToken: [
      curl(`# client_credentials: the key's Client ID and
# Secret Key, in HTTP Basic
curl -X POST ${base}/api/v1/auth/token \\
  -u "$INVOICING_CLIENT_ID:$INVOICING_CLIENT_SECRET" \\
  -d grant_type=client_credentials

# refresh_token (RFC 6749 section 6): each refresh
# token works once; keep the new pair
curl -X POST ${base}/api/v1/auth/token \\
  -d grant_type=refresh_token \\
  -d refresh_token=rt_live_...`),
      sdk(`// The SDK calls this endpoint for you: it
// exchanges the key on first use and refreshes
// ahead of expiry, presenting each refresh token
// at most once.
${client}

// The first call exchanges the key:
const invoice = await api.invoices.get('${placeholderId(ID_PREFIXES.invoice)}');`),
    ],
    refreshToken: [
      curl(`# Each refresh token works once: presenting a
# spent one revokes every session of the key.
# Keep the new pair from the answer.
curl -X POST ${base}/api/v1/auth/refresh \\
  -H 'Content-Type: application/json' \\
  -d '{"refresh_token": "rt_live_..."}'`),
      sdk(`// Nothing to call: the SDK refreshes ahead of
// expiry by itself, presenting each refresh token
// at most once (a second presentation would revoke
// every session of the key).
${client}

// Refreshed first if the access token is about to expire:
await api.invoices.get('${placeholderId(ID_PREFIXES.invoice)}');`),
    ],
    revokeToken: [
      curl(`# Ends the session of a refresh or access token
# (RFC 7009); 200 either way
curl -X POST ${base}/api/v1/auth/revoke \\
  -u "$INVOICING_CLIENT_ID:$INVOICING_CLIENT_SECRET" \\
  -d token=rt_live_... \\
  -d token_type_hint=refresh_token`),
    ],
    getAuthorizationServerMetadata: [curl(`curl ${base}/.well-known/oauth-authorization-server`)],
  };

  for (const resource of RESOURCES) {
    const { noun, create, listQuery, shown } = RESOURCE_SAMPLES[resource];
    const ids = resourceOperationIds(resource);
    const id = placeholderId(RESOURCE_MANIFEST[resource].idPrefix);
    const query = new URLSearchParams({ ...listQuery, limit: '20' }).toString();
    const filter = Object.keys(listQuery).length > 0 ? literal(listQuery, 'ts') : '';
    samples[ids.create] = [
      curl(`# ACCESS_TOKEN from /api/v1/auth/token, scope write:${resource}
curl -X POST ${base}/api/v1/${resource} \\
${bearer} \\
  -H 'Content-Type: application/json' \\
${jsonBody(create)}`),
      sdk(`${client}

const ${noun} = await api.${resource}.create(${literal(create, 'ts')});
console.log(${noun}.id);`),
    ];
    samples[ids.get] = [
      curl(`# ACCESS_TOKEN from /api/v1/auth/token, scope read:${resource}
curl ${base}/api/v1/${resource}/${id} \\
${bearer}`),
      sdk(`${client}

const ${noun} = await api.${resource}.get('${id}');`),
    ];
    samples[ids.list] = [
      curl(`# ACCESS_TOKEN from /api/v1/auth/token, scope read:${resource}
# More: starting_after=<last id>, while has_more
curl "${base}/api/v1/${resource}?${query}" \\
${bearer}`),
      sdk(`${client}

for await (const ${noun} of api.${resource}.list(${filter})) console.log(${noun}.${shown});`),
    ];
  }
  return samples;
}

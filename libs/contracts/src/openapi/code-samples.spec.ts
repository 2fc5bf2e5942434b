import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { spawnSync } from 'node:child_process';
import { RESOURCE_MANIFEST, RESOURCES } from '../manifest';
import { CodeSample, CURL_SAMPLE_LABEL, RESOURCE_SAMPLES, resourceOperationIds, SDK_SAMPLE_LABEL } from './code-samples';
import { buildOpenApiDocument } from './openapi-document';

interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
  'x-codeSamples'?: CodeSample[];
}

const SERVER = 'https://api.invoicing.test';
const doc = buildOpenApiDocument({ serverUrl: SERVER }) as { paths: Record<string, Record<string, Operation>> };
const operations = Object.entries(doc.paths).flatMap(([path, byMethod]) => Object.entries(byMethod).map(([method, op]) => ({ path, method, op })));
const byId = new Map(operations.map((o) => [o.op.operationId, o]));

/** Integrations call these: the OAuth endpoints and the five resources. The settings area and GitHub's reports are not theirs. */
const PUBLIC_TAGS = new Set<string>(['auth', ...RESOURCES]);
const publicOperations = operations.filter((o) => o.op.tags.some((t) => PUBLIC_TAGS.has(t)));

const sample = (operationId: string, label: string): string | undefined =>
  byId.get(operationId)?.op['x-codeSamples']?.find((s) => s.label === label)?.source;

const resourceCalls = RESOURCES.flatMap((r) => Object.values(resourceOperationIds(r)));
const SDK_OPERATIONS = ['createToken', 'refreshToken', ...resourceCalls];

describe('x-codeSamples of the OpenAPI document', () => {
  it('gives every public-API operation a curl sample that calls its path on the served base URL', () => {
    // token, refresh, revoke, RFC 8414 metadata; create, list and get of each resource.
    expect(publicOperations).toHaveLength(4 + RESOURCES.length * 3);
    for (const { path, method, op } of publicOperations) {
      const source = sample(op.operationId, CURL_SAMPLE_LABEL);
      expect({ operation: op.operationId, hasCurl: source !== undefined }).toEqual({ operation: op.operationId, hasCurl: true });
      const concretePath = path.replace('{id}', '');
      expect(source).toContain(`curl ${method === 'get' ? '' : `-X ${method.toUpperCase()} `}`);
      expect(source).toMatch(new RegExp(`${SERVER.replace(/\./g, '\\.')}${concretePath.replace(/[.?]/g, '\\$&')}`));
    }
  });

  it('gives token, refresh and the create, get and list of every resource an SDK sample on the served base URL', () => {
    for (const operationId of SDK_OPERATIONS) {
      const source = sample(operationId, SDK_SAMPLE_LABEL);
      expect({ operationId, hasSdk: source !== undefined }).toEqual({ operationId, hasSdk: true });
      expect(source).toContain("import { Invoicing } from '@invoicing/sdk';");
      expect(source).toContain(`baseUrl: '${SERVER}'`);
      expect(source).toContain('clientId: process.env.INVOICING_CLIENT_ID!');
      expect(source).toContain('clientSecret: process.env.INVOICING_CLIENT_SECRET!');
    }
    for (const resource of RESOURCES) {
      const ids = resourceOperationIds(resource);
      expect(sample(ids.create, SDK_SAMPLE_LABEL)).toContain(`await api.${resource}.create({`);
      expect(sample(ids.get, SDK_SAMPLE_LABEL)).toContain(`await api.${resource}.get('`);
      expect(sample(ids.list, SDK_SAMPLE_LABEL)).toContain(`for await (const ${RESOURCE_SAMPLES[resource].noun} of api.${resource}.list(`);
    }
    expect(sample('createInvoice', SDK_SAMPLE_LABEL)).toContain(
      "const invoice = await api.invoices.create({\n  client_id: 'cli_...',\n  currency: 'EUR',\n  line_items: [{ description: 'Consulting', quantity: 1, unit_price: 50000 }],\n});",
    );
    expect(sample('listInvoices', SDK_SAMPLE_LABEL)).toContain("for await (const invoice of api.invoices.list({ status: 'open' })) console.log(invoice.number);");
  });

  it('says in the token and refresh samples that the SDK exchanges and refreshes by itself, each refresh token at most once', () => {
    /** The comments of a sample as one line of prose. */
    const prose = (operationId: string) => (sample(operationId, SDK_SAMPLE_LABEL) ?? '').replace(/\n\/\/ /g, ' ');
    for (const operationId of ['createToken', 'refreshToken']) {
      expect(prose(operationId)).toMatch(/refreshes ahead of expiry/);
      expect(prose(operationId)).toContain('each refresh token at most once');
    }
    expect(prose('createToken')).toContain('exchanges the key on first use');
    expect(sample('createToken', CURL_SAMPLE_LABEL)).toContain('grant_type=client_credentials');
    expect(sample('createToken', CURL_SAMPLE_LABEL)).toContain('grant_type=refresh_token');
  });

  it('has no samples for the settings area or GitHub secret scanning', () => {
    for (const { op } of operations.filter((o) => !publicOperations.includes(o))) expect({ [op.operationId]: op['x-codeSamples'] }).toEqual({ [op.operationId]: undefined });
  });

  it('sends create bodies that the service accepts (the create schema, with ids of the right form)', () => {
    const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true });
    addFormats(ajv);
    ajv.addFormat('currency', /^[A-Z]{3}$/);
    ajv.addFormat('country', /^[A-Z]{2}$/);
    for (const resource of RESOURCES) {
      const { $id: _id, ...schema } = RESOURCE_MANIFEST[resource].createSchema;
      const validate = ajv.compile(schema);
      // `cli_...` stands for an id of the caller's; any well-formed one fills it in.
      const body = JSON.parse(JSON.stringify(RESOURCE_SAMPLES[resource].create).replace(/"([a-z]{3})_\.\.\."/g, `"$1_${'0'.repeat(32)}"`));
      validate(body);
      expect({ resource, errors: validate.errors ?? null }).toEqual({ resource, errors: null });
      // The curl sample sends exactly that body, as JSON in single quotes.
      const curl = sample(resourceOperationIds(resource).create, CURL_SAMPLE_LABEL) ?? '';
      const sent = /-d '([^']*)'/.exec(curl)?.[1];
      expect(JSON.parse(sent ?? 'null')).toEqual(RESOURCE_SAMPLES[resource].create);
    }
  });

  it('is valid shell, and holds no secret: only placeholders and environment variables', () => {
    const curls = publicOperations.map(({ op }) => sample(op.operationId, CURL_SAMPLE_LABEL) ?? '');
    const check = spawnSync('bash', ['-n'], { input: curls.join('\n\n'), encoding: 'utf8' });
    expect({ status: check.status, stderr: check.stderr }).toEqual({ status: 0, stderr: '' });
    const all = operations.flatMap(({ op }) => op['x-codeSamples'] ?? []).map((s) => s.source);
    for (const source of all) {
      expect(source).not.toMatch(/\b(?:ak|sk|rt)_live_[0-9A-Za-z]/);
      expect(source).not.toMatch(/eyJ[\w-]{10,}/);
      expect(source).not.toMatch(/Bearer [^$]/);
    }
  });

  it('names each resource with the right article in the summaries', () => {
    expect(byId.get('createInvoice')?.op.summary).toBe('Create an invoice');
    expect(byId.get('getExpense')?.op.summary).toBe('Get an expense');
    expect(byId.get('createClient')?.op.summary).toBe('Create a client');
    expect(byId.get('getPayment')?.op.summary).toBe('Get a payment');
    for (const { op } of operations) expect(op.summary).not.toMatch(/\ba (?:invoice|expense|API|access|organization|audit)\b/);
  });
});

import { execFileSync } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { RESOURCES } from '../manifest';
import { buildOpenApiDocument } from './openapi-document';

const doc = buildOpenApiDocument({ serverUrl: 'http://localhost:8080' }) as {
  openapi: string;
  paths: Record<string, Record<string, { security?: unknown; parameters?: Array<{ name: string }> }>>;
  components: { schemas: Record<string, unknown> };
};

describe(buildOpenApiDocument.name, () => {
  it('is a valid OpenAPI 3.1 document (checked against the official schema)', () => {
    const dir = mkdtempSync(join(tmpdir(), 'openapi-'));
    const file = join(dir, 'openapi.json');
    writeFileSync(file, JSON.stringify(doc));
    // The validator is ESM-only, which Jest's CommonJS runtime cannot load: run it in plain Node.
    const script = `
      import { Validator } from '@seriousme/openapi-schema-validator';
      const result = await new Validator().validate(${JSON.stringify(file)});
      console.log(JSON.stringify(result));`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', script], { cwd: __dirname, encoding: 'utf8' });
    const result = JSON.parse(out) as { valid: boolean; errors?: unknown };
    expect(result.errors ?? null).toBeNull();
    expect(result.valid).toBe(true);
    expect(doc.openapi).toBe('3.1.0');
  });

  it('documents the token endpoints and create, list and get for all five resources', () => {
    expect(doc.paths['/api/v1/auth/token'].post).toBeDefined();
    expect(doc.paths['/api/v1/auth/refresh'].post).toBeDefined();
    expect(doc.paths['/api/v1/auth/revoke'].post).toBeDefined();
    expect(doc.paths['/.well-known/oauth-authorization-server'].get).toBeDefined();
    for (const r of RESOURCES) {
      expect(doc.paths[`/api/v1/${r}`].post.security).toEqual([{ bearer: [`write:${r}`] }]);
      expect(doc.paths[`/api/v1/${r}`].get.parameters?.map((p) => p.name)).toEqual(expect.arrayContaining(['limit', 'starting_after']));
      expect(doc.paths[`/api/v1/${r}/{id}`].get).toBeDefined();
    }
    const range = (field: string) => ['gte', 'gt', 'lte', 'lt'].map((op) => `${field}[${op}]`);
    expect(doc.paths['/api/v1/invoices'].get.parameters?.map((p) => p.name)).toEqual([
      'limit',
      'starting_after',
      ...range('created'),
      'client_id',
      'status',
      'unpaid',
      ...range('issue_date'),
      ...range('due_date'),
    ]);
    expect(doc.paths['/api/v1/payments'].get.parameters?.map((p) => p.name)).toEqual(['limit', 'starting_after', ...range('created'), 'invoice_id']);
    for (const r of RESOURCES) expect(doc.paths[`/api/v1/${r}`].get.parameters?.map((p) => p.name).slice(0, 6)).toEqual(['limit', 'starting_after', ...range('created')]);
    expect(Object.keys(doc.components.schemas)).toEqual(expect.arrayContaining(['CreateInvoiceRequest', 'Invoice', 'Problem', 'TokenResponse', 'OAuthError', 'ClientCredentialsGrant', 'RefreshTokenGrant', 'RevocationRequest', 'AuthorizationServerMetadata']));
  });
});

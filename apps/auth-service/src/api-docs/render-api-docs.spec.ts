import { buildOpenApiDocument } from '@invoicing/contracts';
import { renderApiDocs } from './render-api-docs';

describe(renderApiDocs.name, () => {
  const html = renderApiDocs(buildOpenApiDocument({ serverUrl: 'http://localhost:8080' }));

  it('lists every operation of the document with its fields', () => {
    expect(html).toContain('<code>/api/v1/auth/token</code>');
    expect(html).toContain('<code>/api/v1/invoices/{id}</code>');
    expect(html).toContain('<code>line_items</code> <strong>required</strong>');
    // token, refresh, revoke and the RFC 8414 metadata; 11 account and settings calls (the audit log
    // included); GitHub's secret-scanning report; 3 per resource.
    expect(html.match(/<section id=/g)?.length).toBe(4 + 11 + 1 + 5 * 3);
  });

  it('shows both grants of the token endpoint, the revocation endpoint and the discovery document', () => {
    expect(html).toContain('<code>ClientCredentialsGrant</code>');
    expect(html).toContain('<code>RefreshTokenGrant</code>');
    expect(html).toContain('<code>refresh_token</code> <strong>required</strong>');
    expect(html).toContain('<code>/api/v1/auth/revoke</code>');
    expect(html).toContain('<code>token</code> <strong>required</strong>');
    expect(html).toContain('<code>/.well-known/oauth-authorization-server</code>');
  });

  it('has no script and escapes text', () => {
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('Settings → API → Create Key');
  });
});

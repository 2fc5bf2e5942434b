import { buildOpenApiDocument } from '@invoicing/contracts';
import { renderApiDocs } from './render-api-docs';

describe(renderApiDocs.name, () => {
  const html = renderApiDocs(buildOpenApiDocument({ serverUrl: 'http://localhost:8080' }));

  it('lists every operation of the document with its fields', () => {
    expect(html).toContain('<code>/api/v1/auth/token</code>');
    expect(html).toContain('<code>/api/v1/invoices/{id}</code>');
    expect(html).toContain('<code>line_items</code> <strong>required</strong>');
    expect(html.match(/<section id=/g)?.length).toBe(2 + 8 + 5 * 3);
  });

  it('has no script and escapes text', () => {
    expect(html).not.toMatch(/<script/i);
    expect(html).toContain('Settings → API → Create Key');
  });
});

import { RESOURCE_NAMES } from './generated/resource-names';
import * as sdk from './index';

describe('the package entry point', () => {
  it('exports the client, the token store, the error classes, the version and the webhook verifier, and nothing internal', () => {
    expect(Object.keys(sdk).sort()).toEqual(
      ['Invoicing', 'InvoicingApiError', 'InvoicingConnectionError', 'InvoicingError', 'InvoicingOAuthError', 'MemoryTokenStore', 'VERSION', 'WebhookVerificationError', 'webhooks'].sort(),
    );
  });

  it('gives every resource create, get, listPage and list', () => {
    const api = new sdk.Invoicing({ baseUrl: 'https://api.test', clientId: 'ak_live_x', clientSecret: 'sk_live_x', fetch: async () => new Response('{}') });
    // One property per resource of the generated table (src/generated/resource-names.ts), and no other.
    expect(Object.keys(api).sort()).toEqual([...RESOURCE_NAMES].sort());
    for (const resource of RESOURCE_NAMES.map((name) => api[name])) {
      expect([typeof resource.create, typeof resource.get, typeof resource.listPage, typeof resource.list]).toEqual(['function', 'function', 'function', 'function']);
    }
  });
});

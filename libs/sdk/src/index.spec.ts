import * as sdk from './index';

describe('the package entry point', () => {
  it('exports the client, the token store, the error classes and the version, and nothing internal', () => {
    expect(Object.keys(sdk).sort()).toEqual(
      ['Invoicing', 'InvoicingApiError', 'InvoicingConnectionError', 'InvoicingError', 'InvoicingOAuthError', 'MemoryTokenStore', 'VERSION'].sort(),
    );
  });

  it('gives every resource create, get, listPage and list', () => {
    const api = new sdk.Invoicing({ baseUrl: 'https://api.test', clientId: 'ak_live_x', clientSecret: 'sk_live_x', fetch: async () => new Response('{}') });
    for (const resource of [api.invoices, api.clients, api.payments, api.products, api.expenses]) {
      expect([typeof resource.create, typeof resource.get, typeof resource.listPage, typeof resource.list]).toEqual(['function', 'function', 'function', 'function']);
    }
  });
});

import { InvoicingOptions, resolveOptions } from './options';
import { Resource } from './resource';
import { TokenManager } from './token-manager';
import { Transport } from './transport';
import type { ResourceOperationsByName } from './types';

/**
 * The client of the invoicing platform's public API.
 *
 * ```ts
 * const api = new Invoicing({ baseUrl, clientId, clientSecret });
 * for await (const invoice of api.invoices.list({ status: 'open' })) console.log(invoice.number);
 * ```
 *
 * One instance keeps one session (token pair) for all its calls: create it once and share it,
 * rather than one per request (every new instance costs a token exchange and a server session).
 */
export class Invoicing {
  readonly invoices: Resource<ResourceOperationsByName['invoices']>;
  readonly clients: Resource<ResourceOperationsByName['clients']>;
  readonly payments: Resource<ResourceOperationsByName['payments']>;
  readonly products: Resource<ResourceOperationsByName['products']>;
  readonly expenses: Resource<ResourceOperationsByName['expenses']>;

  constructor(options: InvoicingOptions) {
    const resolved = resolveOptions(options);
    const transport = new Transport({
      baseUrl: resolved.baseUrl,
      fetch: resolved.fetch,
      timeoutMs: resolved.timeoutMs,
      limits: resolved.limits,
      now: resolved.now,
      sleep: resolved.sleep,
      userAgent: resolved.userAgent,
    });
    const tokens = new TokenManager({
      transport,
      store: resolved.tokenStore,
      clientId: resolved.clientId,
      clientSecret: resolved.clientSecret,
      scope: resolved.scope,
      now: resolved.now,
      refreshAheadMs: resolved.refreshAheadMs,
    });
    this.invoices = new Resource(transport, tokens, 'invoices');
    this.clients = new Resource(transport, tokens, 'clients');
    this.payments = new Resource(transport, tokens, 'payments');
    this.products = new Resource(transport, tokens, 'products');
    this.expenses = new Resource(transport, tokens, 'expenses');
  }
}

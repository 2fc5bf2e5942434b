import { RESOURCE_NAMES } from './generated/resource-names';
import type { ResourceName, ResourceOperationsByName } from './generated/resources';
import { InvoicingOptions, resolveOptions } from './options';
import { InvoiceResource, Resource } from './resource';
import { TokenManager } from './token-manager';
import { Transport } from './transport';

/**
 * A property per resource of the API (`invoices`, ...), typed by its generated operations; the
 * invoices' also fetches their documents (`pdf`, `eInvoice`).
 */
type ResourceClients = { readonly [R in Exclude<ResourceName, 'invoices'>]: Resource<ResourceOperationsByName[R]> } & {
  readonly invoices: InvoiceResource<ResourceOperationsByName['invoices']>;
};

// The class gets its resource properties from this interface (declaration merging) rather than from
// a field per resource, which would be a second list of the platform's resources: they come from
// the generated table (src/generated/resources.ts), and the constructor sets one per RESOURCE_NAMES.
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging, @typescript-eslint/no-empty-interface, @typescript-eslint/no-empty-object-type
export interface Invoicing extends ResourceClients {}

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
// eslint-disable-next-line @typescript-eslint/no-unsafe-declaration-merging
export class Invoicing {
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
    // A property per resource, as `ResourceClients` declares them (types.spec.ts checks that RESOURCE_NAMES
    // and `ResourceName` are the same resources).
    Object.assign(this, Object.fromEntries(RESOURCE_NAMES.map((name) => [name, new (name === 'invoices' ? InvoiceResource : Resource)(transport, tokens, name)])));
  }
}

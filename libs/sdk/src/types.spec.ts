/**
 * Type-level checks: the friendly aliases and what the resources take and answer are exactly the
 * generated schema types. They fail under `tsc -p libs/sdk/tsconfig.spec.json` (the typecheck
 * target), not under Jest, which strips types.
 */
import type { components, operations } from './generated/openapi';
import type { RESOURCE_NAMES } from './generated/resource-names';
import type { Invoicing } from './invoicing';
import type { InvoiceResource, Resource } from './resource';
import type * as sdk from './types';

type Equal<A, B> = (<T>() => T extends A ? 1 : 2) extends <T>() => T extends B ? 1 : 2 ? true : false;
type Expect<T extends true> = T;
type Schemas = components['schemas'];
type Returned<F> = F extends (...args: never[]) => Promise<infer R> ? R : never;
type Iterated<F> = F extends (...args: never[]) => AsyncIterable<infer R> ? R : never;

export type Checks = [
  Expect<Equal<sdk.Invoice, Schemas['Invoice']>>,
  Expect<Equal<sdk.CreateInvoiceRequest, Schemas['CreateInvoiceRequest']>>,
  // The generated query, but a list parameter (status) also takes one value alone.
  Expect<Equal<Omit<sdk.InvoiceListQuery, 'status'>, Omit<NonNullable<operations['listInvoices']['parameters']['query']>, 'status'>>>,
  Expect<Equal<sdk.InvoiceListQuery['status'], sdk.InvoiceStatus | sdk.InvoiceStatus[] | undefined>>,
  Expect<Equal<sdk.InvoiceListQuery['created[gte]'] | sdk.InvoiceListQuery['issue_date[lt]'], string | undefined>>,
  Expect<Equal<sdk.InvoiceListQuery['unpaid'], boolean | undefined>>,
  Expect<Equal<sdk.ClientListQuery['created[lt]'], string | undefined>>,
  Expect<Equal<sdk.Client, Schemas['Client']>>,
  Expect<Equal<sdk.CreateClientRequest, Schemas['CreateClientRequest']>>,
  Expect<Equal<sdk.Payment, Schemas['Payment']>>,
  Expect<Equal<sdk.CreatePaymentRequest, Schemas['CreatePaymentRequest']>>,
  Expect<Equal<sdk.PaymentListQuery, NonNullable<operations['listPayments']['parameters']['query']>>>,
  Expect<Equal<sdk.Product, Schemas['Product']>>,
  Expect<Equal<sdk.CreateProductRequest, Schemas['CreateProductRequest']>>,
  Expect<Equal<sdk.Expense, Schemas['Expense']>>,
  Expect<Equal<sdk.CreateExpenseRequest, Schemas['CreateExpenseRequest']>>,
  Expect<Equal<sdk.InvoiceList, sdk.ListPage<sdk.Invoice>>>,
  Expect<Equal<Returned<Invoicing['invoices']['create']>, Schemas['Invoice']>>,
  Expect<Equal<Returned<Invoicing['invoices']['get']>, Schemas['Invoice']>>,
  Expect<Equal<Returned<Invoicing['payments']['listPage']>, sdk.ListPage<Schemas['Payment']>>>,
  Expect<Equal<Iterated<Invoicing['expenses']['list']>, Schemas['Expense']>>,
  Expect<Equal<Parameters<Invoicing['clients']['create']>[0], Schemas['CreateClientRequest']>>,
  // The generated table: every resource is at runtime (RESOURCE_NAMES) what it is in the types, and
  // `Invoicing` has exactly one property per resource, typed by its operations.
  Expect<Equal<(typeof RESOURCE_NAMES)[number], sdk.ResourceName>>,
  Expect<Equal<keyof Invoicing, sdk.ResourceName>>,
  Expect<Equal<Invoicing['payments'], Resource<sdk.ResourceOperationsByName['payments']>>>,
  // The invoices' client is a Resource of their operations that also fetches their documents.
  Expect<Equal<Invoicing['invoices'], InvoiceResource<sdk.ResourceOperationsByName['invoices']>>>,
  Expect<Equal<Returned<Invoicing['invoices']['pdf']>, Uint8Array>>,
];

describe('types', () => {
  it('are checked by the compiler (see the Checks tuple)', () => {
    const checked: Checks['length'] = 27;
    expect(checked).toBe(27);
  });
});

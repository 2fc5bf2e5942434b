// Generated from the platform manifest's resources (RESOURCE_MANIFEST) and the OpenAPI document's
// operations and schemas (libs/sdk/scripts/generate-types.ts). Do not edit: run `npx nx run sdk:generate`.

import type { CreateBody, ListQuery, Page } from '../types';
import type { components, operations } from './openapi';

/** The resources of the API (the platform manifest's, in its order) and their operations. */
export interface ResourceOperationsByName {
  invoices: { create: operations['createInvoice']; list: operations['listInvoices']; get: operations['getInvoice'] };
  clients: { create: operations['createClient']; list: operations['listClients']; get: operations['getClient'] };
  payments: { create: operations['createPayment']; list: operations['listPayments']; get: operations['getPayment'] };
  products: { create: operations['createProduct']; list: operations['listProducts']; get: operations['getProduct'] };
  expenses: { create: operations['createExpense']; list: operations['listExpenses']; get: operations['getExpense'] };
}

/** The resources' names: `Invoicing` has a property of each. */
export type ResourceName = keyof ResourceOperationsByName;

type Schemas = components['schemas'];

/** An object of `api.invoices`, as the API returns it. */
export type Invoice = Schemas['Invoice'];
/** What `api.invoices.create` takes. */
export type CreateInvoiceRequest = CreateBody<ResourceOperationsByName['invoices']>;
/** What `api.invoices.list` and `api.invoices.listPage` take. */
export type InvoiceListQuery = ListQuery<ResourceOperationsByName['invoices']>;
/** One page of `api.invoices.listPage`. */
export type InvoiceList = Page<ResourceOperationsByName['invoices']>;

/** An object of `api.clients`, as the API returns it. */
export type Client = Schemas['Client'];
/** What `api.clients.create` takes. */
export type CreateClientRequest = CreateBody<ResourceOperationsByName['clients']>;
/** What `api.clients.list` and `api.clients.listPage` take. */
export type ClientListQuery = ListQuery<ResourceOperationsByName['clients']>;
/** One page of `api.clients.listPage`. */
export type ClientList = Page<ResourceOperationsByName['clients']>;

/** An object of `api.payments`, as the API returns it. */
export type Payment = Schemas['Payment'];
/** What `api.payments.create` takes. */
export type CreatePaymentRequest = CreateBody<ResourceOperationsByName['payments']>;
/** What `api.payments.list` and `api.payments.listPage` take. */
export type PaymentListQuery = ListQuery<ResourceOperationsByName['payments']>;
/** One page of `api.payments.listPage`. */
export type PaymentList = Page<ResourceOperationsByName['payments']>;

/** An object of `api.products`, as the API returns it. */
export type Product = Schemas['Product'];
/** What `api.products.create` takes. */
export type CreateProductRequest = CreateBody<ResourceOperationsByName['products']>;
/** What `api.products.list` and `api.products.listPage` take. */
export type ProductListQuery = ListQuery<ResourceOperationsByName['products']>;
/** One page of `api.products.listPage`. */
export type ProductList = Page<ResourceOperationsByName['products']>;

/** An object of `api.expenses`, as the API returns it. */
export type Expense = Schemas['Expense'];
/** What `api.expenses.create` takes. */
export type CreateExpenseRequest = CreateBody<ResourceOperationsByName['expenses']>;
/** What `api.expenses.list` and `api.expenses.listPage` take. */
export type ExpenseListQuery = ListQuery<ResourceOperationsByName['expenses']>;
/** One page of `api.expenses.listPage`. */
export type ExpenseList = Page<ResourceOperationsByName['expenses']>;

/**
 * Types of the public API, derived from the generated OpenAPI types (src/generated/openapi.ts) so
 * that a change to the platform's document reaches the SDK by `npx nx run sdk:generate` alone.
 */
import type { components, operations } from './generated/openapi';

/** The JSON request body of an operation. */
export type JsonRequestBody<Op> = Op extends { requestBody: { content: { 'application/json': infer B } } } ? B : never;

/** The JSON body of an operation's response with `status`. */
export type JsonResponse<Op, Status extends number> = Op extends {
  responses: { [S in Status]: { content: { 'application/json': infer R } } };
}
  ? R
  : never;

/** The query parameters of an operation. */
export type QueryParameters<Op> = Op extends { parameters: { query?: infer Q } } ? NonNullable<Q> : never;

/** The three operations every resource has. */
export interface ResourceOperations {
  create: unknown;
  list: unknown;
  get: unknown;
}

/**
 * The resources of the API and their operations. A new resource is one line here and one
 * property of `Invoicing`.
 */
export interface ResourceOperationsByName {
  invoices: { create: operations['createInvoice']; list: operations['listInvoices']; get: operations['getInvoice'] };
  clients: { create: operations['createClient']; list: operations['listClients']; get: operations['getClient'] };
  payments: { create: operations['createPayment']; list: operations['listPayments']; get: operations['getPayment'] };
  products: { create: operations['createProduct']; list: operations['listProducts']; get: operations['getProduct'] };
  expenses: { create: operations['createExpense']; list: operations['listExpenses']; get: operations['getExpense'] };
}

export type ResourceName = keyof ResourceOperationsByName;

/** What `create` takes. */
export type CreateBody<Ops extends ResourceOperations> = JsonRequestBody<Ops['create']>;
/** What `create` answers (201). */
export type Created<Ops extends ResourceOperations> = JsonResponse<Ops['create'], 201>;
/** What `get` answers. */
export type Fetched<Ops extends ResourceOperations> = JsonResponse<Ops['get'], 200>;
/** What `list` and `listPage` take. */
export type ListQuery<Ops extends ResourceOperations> = QueryParameters<Ops['list']>;
/** One page of a list. */
export type Page<Ops extends ResourceOperations> = JsonResponse<Ops['list'], 200>;
/** One object of a list. */
export type Listed<Ops extends ResourceOperations> = Page<Ops> extends { data: Array<infer T> } ? T : never;

/** A page of any list: newest first; `has_more` says whether to ask for the next one. */
export interface ListPage<T> {
  object: 'list';
  data: T[];
  has_more: boolean;
}

/** Options of a create call. */
export interface CreateOptions {
  /**
   * Sent as the `Idempotency-Key` header with every attempt of this call. Default: a new random
   * UUID per call. Pass your own (1 to 255 visible ASCII characters) to make a create safe to
   * repeat across process restarts, e.g. derived from your own record's id.
   */
  idempotencyKey?: string;
}

type Schemas = components['schemas'];

export type Invoice = Schemas['Invoice'];
export type InvoiceLineItem = Invoice['line_items'][number];
export type InvoiceStatus = Invoice['status'];
export type CreateInvoiceRequest = CreateBody<ResourceOperationsByName['invoices']>;
export type InvoiceListQuery = ListQuery<ResourceOperationsByName['invoices']>;
export type InvoiceList = Page<ResourceOperationsByName['invoices']>;

export type Client = Schemas['Client'];
export type CreateClientRequest = CreateBody<ResourceOperationsByName['clients']>;
export type ClientListQuery = ListQuery<ResourceOperationsByName['clients']>;
export type ClientList = Page<ResourceOperationsByName['clients']>;

export type Payment = Schemas['Payment'];
export type PaymentMethod = NonNullable<Payment['method']>;
export type CreatePaymentRequest = CreateBody<ResourceOperationsByName['payments']>;
export type PaymentListQuery = ListQuery<ResourceOperationsByName['payments']>;
export type PaymentList = Page<ResourceOperationsByName['payments']>;

export type Product = Schemas['Product'];
export type CreateProductRequest = CreateBody<ResourceOperationsByName['products']>;
export type ProductListQuery = ListQuery<ResourceOperationsByName['products']>;
export type ProductList = Page<ResourceOperationsByName['products']>;

export type Expense = Schemas['Expense'];
export type CreateExpenseRequest = CreateBody<ResourceOperationsByName['expenses']>;
export type ExpenseListQuery = ListQuery<ResourceOperationsByName['expenses']>;
export type ExpenseList = Page<ResourceOperationsByName['expenses']>;

/** An RFC 9457 problem document as resource endpoints send it. */
export type Problem = Schemas['Problem'];
/** A token endpoint's 200 body. */
export type TokenResponse = Schemas['TokenResponse'];

/**
 * Types of the public API, derived from the generated OpenAPI types (src/generated/openapi.ts) so
 * that a change to the platform's document reaches the SDK by `npx nx run sdk:generate` alone.
 */
import type { components } from './generated/openapi';
import type { Invoice, Payment } from './generated/resources';

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

/** What `create` takes. */
export type CreateBody<Ops extends ResourceOperations> = JsonRequestBody<Ops['create']>;
/** What `create` answers (201). */
export type Created<Ops extends ResourceOperations> = JsonResponse<Ops['create'], 201>;
/** What `get` answers. */
export type Fetched<Ops extends ResourceOperations> = JsonResponse<Ops['get'], 200>;
/** A list parameter's values, or one value alone (`status: 'open'` is `status: ['open']`). */
type OneOrMore<T> = T extends ReadonlyArray<infer U> ? U | T : T;
/**
 * What `list` and `listPage` take: the operation's query parameters (`limit`, `starting_after`, its
 * filters). A parameter the document declares as a list (`status`) takes one value or several; the
 * SDK sends them comma-separated (`status=open,paid`), as the document says (style form, not exploded).
 */
export type ListQuery<Ops extends ResourceOperations> = { [K in keyof QueryParameters<Ops['list']>]: OneOrMore<QueryParameters<Ops['list']>[K]> };
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

// The resource table (`ResourceOperationsByName`, `ResourceName`) and each resource's named types
// (`Invoice`, `CreateInvoiceRequest`, `InvoiceListQuery`, `InvoiceList`...) are generated from the
// platform manifest and the OpenAPI document: src/generated/resources.ts.
export * from './generated/resources';

// Names for fields of one resource's objects, written here: the generator names only what every
// resource has.
/** One line of an invoice. */
export type InvoiceLineItem = Invoice['line_items'][number];
/** The status of an invoice. */
export type InvoiceStatus = Invoice['status'];
/** How a payment was made. */
export type PaymentMethod = NonNullable<Payment['method']>;

/** An RFC 9457 problem document as resource endpoints send it. */
export type Problem = Schemas['Problem'];
/** A token endpoint's 200 body. */
export type TokenResponse = Schemas['TokenResponse'];

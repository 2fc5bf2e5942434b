/**
 * @invoicing/sdk: the official TypeScript client of the invoicing platform's public API. It
 * handles the token lifecycle (single-use refresh tokens, presented at most once), retries,
 * idempotent creates and pagination. Runs on Node 18+ and in browsers (for proxies and trusted
 * contexts only: a Secret Key must never ship in a browser bundle).
 */
export { Invoicing } from './invoicing';
export type { InvoicingOptions } from './options';
export type { EInvoiceSyntax, InvoiceResource, Resource } from './resource';
export type { StoredTokens, TokenStore } from './token-store';
export { MemoryTokenStore } from './token-store';
export type { FetchLike } from './transport';
export { InvoicingApiError, InvoicingConnectionError, InvoicingError, InvoicingOAuthError } from './errors';
export type { FieldError } from './errors';
export { VERSION } from './version';
export { webhooks, WebhookVerificationError } from './webhooks';
export type { VerifyOptions, WebhookEvent, WebhookEventType, WebhookHeaders } from './webhooks';
// Each resource's named types (`Invoice`, `CreateInvoiceRequest`, `InvoiceListQuery`, `InvoiceList`...),
// `ResourceOperationsByName` and `ResourceName`, generated from the platform manifest. That file holds
// types only (the runtime list is resource-names.ts, internal), so this adds no runtime export.
export * from './generated/resources';
export type {
  CreateOptions,
  InvoiceLineItem,
  InvoiceStatus,
  ListPage,
  PaymentMethod,
  Problem,
  ResourceOperations,
  TokenResponse,
} from './types';

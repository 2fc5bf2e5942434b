import { InvoicingError } from './errors';
import { newIdempotencyKey } from './idempotency-key';
import type { CallRetryTraits } from './retry';
import type { AccessTokenSource, Transport } from './transport';
import type { CreateBody, CreateOptions, Created, Fetched, ListQuery, Listed, Page, ResourceOperations } from './types';

/** Reads are safe to repeat after a lost answer. */
const READ_RETRY: CallRetryTraits = { retries: true, safeToRepeat: true, idempotencyKey: false };
/** Creates are too, because every attempt carries the same Idempotency-Key. */
const CREATE_RETRY: CallRetryTraits = { retries: true, safeToRepeat: true, idempotencyKey: true };

/** What the platform accepts as an Idempotency-Key, and what a header can carry: 1 to 255 visible ASCII characters. */
const IDEMPOTENCY_KEY_SHAPE = /^[\x21-\x7e]{1,255}$/;

/**
 * One resource of the API (`/api/v1/<name>`): create, get, and list one page or every page.
 * Typed by the resource's generated operations, so its bodies, queries and objects follow the
 * platform's OpenAPI document.
 */
export class Resource<Ops extends ResourceOperations> {
  readonly #transport: Transport;
  readonly #auth: AccessTokenSource;
  readonly #path: string;

  constructor(transport: Transport, auth: AccessTokenSource, name: string) {
    this.#transport = transport;
    this.#auth = auth;
    this.#path = `/api/v1/${name}`;
  }

  /**
   * Creates an object (`POST /api/v1/<name>`). The call carries an Idempotency-Key, the same for
   * each of its attempts, so a retry after a lost answer returns the object the first attempt
   * created instead of a second one.
   */
  create(body: CreateBody<Ops>, options: CreateOptions = {}): Promise<Created<Ops>> {
    const idempotencyKey = options.idempotencyKey ?? newIdempotencyKey();
    if (typeof idempotencyKey !== 'string' || !IDEMPOTENCY_KEY_SHAPE.test(idempotencyKey)) {
      // Before anything is sent: a key the server refuses, or a header the runtime refuses (its
      // error would then be taken for a network failure and retried). The key is not repeated.
      return Promise.reject(new InvoicingError(`POST ${this.#path}: idempotencyKey must be 1 to 255 visible ASCII characters (no spaces)`));
    }
    return this.#transport.call<Created<Ops>>({
      method: 'POST',
      path: this.#path,
      body,
      headers: { 'idempotency-key': idempotencyKey },
      retry: CREATE_RETRY,
      errors: 'problem',
      auth: this.#auth,
    });
  }

  /** Fetches one object by id (`GET /api/v1/<name>/{id}`); another organization's id is a 404. */
  get(id: string): Promise<Fetched<Ops>> {
    // `.` and `..` are path segments of their own, escaped or not: `/invoices/..` is `/api/v1`.
    // Anything else, `/` included, is escaped into one segment below.
    if (typeof id !== 'string' || id === '' || id === '.' || id === '..') {
      return Promise.reject(new InvoicingError(`${this.#path}: get needs an id (non-empty, neither '.' nor '..')`));
    }
    return this.#transport.call<Fetched<Ops>>({
      method: 'GET',
      path: `${this.#path}/${encodeURIComponent(id)}`,
      retry: READ_RETRY,
      errors: 'problem',
      auth: this.#auth,
    });
  }

  /**
   * One object as a document of another media type (`GET /api/v1/<name>/{id}` with that Accept), as
   * its bytes: for invoices, `application/pdf`, and `application/xml` (the EN 16931 e-invoice; pass
   * `{ syntax: 'ubl' }` for UBL 2.1 instead of CII). A type the resource does not offer is a 406
   * InvoicingApiError, or an InvoicingError when the resource answers another type (a resource
   * without documents answers JSON); an e-invoice the data cannot make is a 422 naming the missing fields.
   *
   * ```ts
   * const pdf = await api.invoices.document('inv_...', 'application/pdf');
   * await writeFile('INV-000042.pdf', pdf);
   * ```
   */
  document(id: string, mediaType: string, query?: Record<string, string>): Promise<Uint8Array> {
    if (typeof id !== 'string' || id === '' || id === '.' || id === '..') {
      return Promise.reject(new InvoicingError(`${this.#path}: document needs an id (non-empty, neither '.' nor '..')`));
    }
    return this.#transport.call<Uint8Array>({
      method: 'GET',
      path: `${this.#path}/${encodeURIComponent(id)}`,
      query,
      document: { accept: mediaType },
      retry: READ_RETRY,
      errors: 'problem',
      auth: this.#auth,
    });
  }

  /** One page (`GET /api/v1/<name>`): pass the last id of a page as `starting_after` for the next. */
  listPage(query?: ListQuery<Ops>): Promise<Page<Ops>> {
    return this.#transport.call<Page<Ops>>({
      method: 'GET',
      path: this.#path,
      query: query as object | undefined,
      retry: READ_RETRY,
      errors: 'problem',
      auth: this.#auth,
    });
  }

  /**
   * Every object matching `query`, newest first, fetching pages as the loop asks for them. It
   * follows `has_more`, not the page size: a page may hold fewer than `limit` objects when they are
   * large, and still have more after it.
   */
  async *list(query?: ListQuery<Ops>): AsyncIterableIterator<Listed<Ops>> {
    let pageQuery: Record<string, unknown> = { ...(query as object | undefined) };
    // Every cursor asked with, the caller's included: one coming round again means the server (or
    // a cache in front of it) ignored starting_after, and following it would loop for ever.
    const cursors = new Set<unknown>();
    if (pageQuery['starting_after'] !== undefined && pageQuery['starting_after'] !== null) cursors.add(pageQuery['starting_after']);
    for (;;) {
      const page: unknown = await this.listPage(pageQuery as ListQuery<Ops>);
      if (!isListPage(page)) throw new InvoicingError(`GET ${this.#path} answered a page that is not a list (data an array, has_more a boolean)`);
      yield* page.data as Array<Listed<Ops>>;
      if (!page.has_more) return;
      const last = page.data[page.data.length - 1] as { id?: unknown } | undefined;
      if (typeof last?.id !== 'string') {
        // has_more with nothing to continue after would ask for the same page for ever.
        throw new InvoicingError(`GET ${this.#path} answered has_more: true without an object id to continue after`);
      }
      if (cursors.has(last.id)) {
        throw new InvoicingError(`GET ${this.#path} answered has_more: true with the same cursor again (starting_after ignored?); stopping rather than looping`);
      }
      cursors.add(last.id);
      pageQuery = { ...pageQuery, starting_after: last.id };
    }
  }
}

function isListPage(value: unknown): value is { data: unknown[]; has_more: boolean } {
  if (typeof value !== 'object' || value === null) return false;
  const page = value as { data?: unknown; has_more?: unknown };
  return Array.isArray(page.data) && typeof page.has_more === 'boolean';
}

/** The syntaxes of an invoice's EN 16931 e-invoice: UN/CEFACT CII D16B (the API's default) or OASIS UBL 2.1. */
export type EInvoiceSyntax = 'cii' | 'ubl';

/**
 * The invoices of the API: a {@link Resource} whose objects are also documents (docs/api.md
 * section 7): the invoice as a PDF, and as an EN 16931 e-invoice.
 *
 * ```ts
 * await writeFile(`${invoice.number}.pdf`, await api.invoices.pdf(invoice.id));
 * await writeFile(`${invoice.number}.xml`, await api.invoices.eInvoice(invoice.id, 'ubl'));
 * ```
 */
export class InvoiceResource<Ops extends ResourceOperations> extends Resource<Ops> {
  /** The invoice as a PDF (A4), with the seller and buyer as they stood when it was created. */
  pdf(id: string): Promise<Uint8Array> {
    return this.document(id, 'application/pdf');
  }

  /**
   * The invoice as an EN 16931 e-invoice (XML, UTF-8): CII by default, UBL 2.1 with `'ubl'`. A 422
   * InvoicingApiError names what the standard needs and the data lacks (the seller's VAT id...).
   */
  eInvoice(id: string, syntax: EInvoiceSyntax = 'cii'): Promise<Uint8Array> {
    if (syntax !== 'cii' && syntax !== 'ubl') return Promise.reject(new InvoicingError(`eInvoice: syntax must be 'cii' or 'ubl', not ${String(syntax)}`));
    return this.document(id, 'application/xml', { syntax });
  }
}

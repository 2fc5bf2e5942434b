import { InvoicingError } from './errors';
import { newIdempotencyKey } from './idempotency-key';
import type { CallRetryTraits } from './retry';
import type { AccessTokenSource, Transport } from './transport';
import type { CreateBody, CreateOptions, Created, Fetched, ListQuery, Listed, Page, ResourceOperations } from './types';

/** Reads are safe to repeat after a lost answer. */
const READ_RETRY: CallRetryTraits = { retries: true, safeToRepeat: true, idempotencyKey: false };
/** Creates are too, because every attempt carries the same Idempotency-Key. */
const CREATE_RETRY: CallRetryTraits = { retries: true, safeToRepeat: true, idempotencyKey: true };

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
    if (typeof id !== 'string' || id === '') {
      return Promise.reject(new InvoicingError(`${this.#path}: get needs a non-empty id`));
    }
    return this.#transport.call<Fetched<Ops>>({
      method: 'GET',
      path: `${this.#path}/${encodeURIComponent(id)}`,
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
    let pageQuery: object = { ...(query as object | undefined) };
    for (;;) {
      const page = (await this.listPage(pageQuery as ListQuery<Ops>)) as { data: Array<Listed<Ops>>; has_more: boolean };
      yield* page.data;
      if (!page.has_more) return;
      const last = page.data[page.data.length - 1] as { id?: unknown } | undefined;
      if (typeof last?.id !== 'string') {
        // has_more with nothing to continue after would ask for the same page for ever.
        throw new InvoicingError(`GET ${this.#path} answered has_more: true without an object id to continue after`);
      }
      pageQuery = { ...pageQuery, starting_after: last.id };
    }
  }
}

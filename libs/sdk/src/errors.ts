/**
 * The SDK's error family. Every error it throws is an `InvoicingError`, so one `instanceof` check
 * separates them from the caller's own failures. No message ever carries the client secret, an
 * access token or a refresh token: messages are built from the method, the path and what the
 * server said, never from request headers or bodies.
 */

/** One field-level validation failure of a problem response (docs/api.md section 8). */
export interface FieldError {
  field: string;
  code: string;
  message: string;
}

/** Base class of every error the SDK throws. */
export class InvoicingError extends Error {
  constructor(message: string, options?: { cause?: unknown }) {
    super(message);
    // Transpiled to ES5, or by some bundlers, `extends Error` loses the subclass prototype and
    // `instanceof` answers false; restoring it keeps the classes usable for dispatch everywhere.
    Object.setPrototypeOf(this, new.target.prototype);
    // Literal names: a minifier renames classes, and `name` is what logs and `toString` show.
    this.name = 'InvoicingError';
    if (options && 'cause' in options) {
      Object.defineProperty(this, 'cause', { value: options.cause, enumerable: false, writable: true, configurable: true });
    }
  }
}

/**
 * A resource endpoint answered with an error status: the fields of its RFC 9457 problem document
 * (or what could be made of a body that is not one, such as a proxy's HTML page).
 */
export class InvoicingApiError extends InvoicingError {
  readonly status: number;
  /** Problem type URI (`about:blank` when the body was not a problem document). */
  readonly type: string;
  readonly title: string;
  readonly detail: string;
  /** The server's request id (body `request_id`, else the `X-Request-Id` header): quote it to support. */
  readonly requestId: string | undefined;
  /** Field-level failures of a 422 or a 409 on a unique value; empty otherwise. */
  readonly errors: FieldError[];
  /** Seconds the server asked to wait (`Retry-After` of a 429 or a 503). */
  readonly retryAfterSeconds: number | undefined;
  /** The parsed response body (text when it was not JSON). */
  readonly body: unknown;

  constructor(fields: {
    method: string;
    path: string;
    status: number;
    type: string;
    title: string;
    detail: string;
    requestId?: string;
    errors?: FieldError[];
    retryAfterSeconds?: number;
    body: unknown;
  }) {
    super(`${fields.method} ${fields.path} answered ${fields.status} ${fields.title}${fields.detail ? `: ${fields.detail}` : ''}`);
    this.name = 'InvoicingApiError';
    this.status = fields.status;
    this.type = fields.type;
    this.title = fields.title;
    this.detail = fields.detail;
    this.requestId = fields.requestId;
    this.errors = fields.errors ?? [];
    this.retryAfterSeconds = fields.retryAfterSeconds;
    this.body = fields.body;
  }
}

/** A token endpoint answered with an RFC 6749 error (`invalid_client`, `invalid_grant`, ...). */
export class InvoicingOAuthError extends InvoicingError {
  readonly status: number;
  /** The RFC 6749 error code, e.g. `invalid_client`. */
  readonly error: string;
  readonly errorDescription: string | undefined;
  readonly requestId: string | undefined;
  readonly retryAfterSeconds: number | undefined;

  constructor(fields: {
    path: string;
    status: number;
    error: string;
    errorDescription?: string;
    requestId?: string;
    retryAfterSeconds?: number;
  }) {
    super(`POST ${fields.path} answered ${fields.status} ${fields.error}${fields.errorDescription ? `: ${fields.errorDescription}` : ''}`);
    this.name = 'InvoicingOAuthError';
    this.status = fields.status;
    this.error = fields.error;
    this.errorDescription = fields.errorDescription;
    this.requestId = fields.requestId;
    this.retryAfterSeconds = fields.retryAfterSeconds;
  }
}

/**
 * No usable answer arrived: the connection failed, the attempt timed out, or the body could not be
 * read. Whether the server acted on the request is unknown; the SDK repeated it only where doing
 * so twice is harmless.
 */
export class InvoicingConnectionError extends InvoicingError {
  /** True when the per-attempt timeout (`timeoutMs`) ended the attempt. */
  readonly timedOut: boolean;

  constructor(message: string, options: { cause?: unknown; timedOut?: boolean }) {
    // No `cause` property at all when none is given (the token endpoints withhold theirs).
    super(message, 'cause' in options ? { cause: options.cause } : undefined);
    this.name = 'InvoicingConnectionError';
    this.timedOut = options.timedOut ?? false;
  }
}

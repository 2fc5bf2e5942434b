/** One field-level validation failure (docs/api.md section 8). */
export interface FieldError {
  field: string;
  code: string;
  message: string;
}

/**
 * RFC 6749 section 5.2 `error` codes the platform sends (`temporarily_unavailable` and
 * `server_error` are RFC 6749's own, section 4.1.2.1, used on the token endpoints too: ADR 0006).
 */
export type OAuthErrorCode =
  | 'invalid_request'
  | 'invalid_client'
  | 'invalid_grant'
  | 'unauthorized_client'
  | 'unsupported_grant_type'
  | 'invalid_scope'
  | 'temporarily_unavailable'
  | 'server_error';

export interface PlatformErrorOptions {
  /** The RFC 6749 `error` of this answer on an endpoint that speaks OAuth (the token endpoints). */
  oauthError?: OAuthErrorCode;
  /** The fields at fault (problem+json `errors`). */
  errors?: FieldError[];
  /** Sent with the answer: `Retry-After`, `WWW-Authenticate`... */
  headers?: Readonly<Record<string, string>>;
  /**
   * What the log says, when it must differ from `detail` (an outage names the dependency and what
   * it failed to do; the caller is told only that it may retry). Defaults to `detail`.
   */
  message?: string;
}

const NO_HEADERS: Readonly<Record<string, string>> = Object.freeze({});

/** `Retry-After: 1`, sent with every outage (503). */
export const RETRY_SHORTLY: Readonly<Record<string, string>> = Object.freeze({ 'Retry-After': '1' });

/**
 * Every refusal the platform answers with, thrown by the code that decides it and rendered at the
 * edge (`sendError`) in the form of the endpoint it hit: RFC 9457 problem+json, or RFC 6749 section
 * 5.2 on the token endpoints (ADR 0006, ADR 0032). The thrower says what happened (status, a stable
 * `code`, a `detail` safe to show, the fields at fault, the headers that go with it, and how an OAuth
 * client reads it); never how it is written on the wire.
 *
 * An answer, not a fault: no stack is captured (it is never logged or sent, and capturing one on
 * every 400/401/404 showed in the hot paths' profiles, ADR 0015). What is not a PlatformError is a
 * fault the edge translates: a framework's refusal (Nest's HttpException, Fastify's body errors), an
 * unreachable dependency (503), anything else (500, logged with its stack).
 */
export class PlatformError extends Error {
  readonly oauthError: OAuthErrorCode | undefined;
  readonly errors: FieldError[] | undefined;
  readonly headers: Readonly<Record<string, string>>;

  constructor(
    /** HTTP status. */
    readonly status: number,
    /** Stable, machine-readable: the RFC 6749 code, a field error's, or the problem type's slug. */
    readonly code: string,
    /** Safe to send: what went wrong and, where it helps, what to do. */
    readonly detail: string,
    options?: PlatformErrorOptions,
  ) {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super(options?.message ?? detail);
    Error.stackTraceLimit = limit;
    this.name = new.target.name;
    this.oauthError = options?.oauthError;
    this.errors = options?.errors;
    this.headers = options?.headers ?? NO_HEADERS;
  }
}

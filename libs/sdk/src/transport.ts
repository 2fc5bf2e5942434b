import { FieldError, InvoicingApiError, InvoicingConnectionError, InvoicingError, InvoicingOAuthError } from './errors';
import { AttemptFailure, CallRetryTraits, isRetryable, nextRetryDelay, parseRetryAfter, RetryLimits } from './retry';

/** The subset of `fetch` the SDK uses; the global one fits, and so do most custom agents. */
export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;

export interface TransportConfig {
  /** Without a trailing slash. */
  baseUrl: string;
  fetch: FetchLike;
  /** Per attempt: the connection, the answer and its body must all arrive within it. */
  timeoutMs: number;
  limits: RetryLimits;
  now: () => number;
  sleep: (ms: number) => Promise<void>;
  /** Undefined where the header may not be set (browsers). */
  userAgent: string | undefined;
  random?: () => number;
}

/** Supplies bearer tokens to resource calls (the token manager). */
export interface AccessTokenSource {
  accessToken(): Promise<string>;
  /** The server refused `token`; resolves once the next `accessToken()` will answer a usable one. */
  rejected(token: string): Promise<void>;
}

export interface CallSpec {
  method: 'GET' | 'POST';
  /** Under the base URL, starting with `/`. */
  path: string;
  /** Query parameters; undefined and null values are left out. */
  query?: object;
  /** Sent as JSON. */
  body?: unknown;
  headers?: Record<string, string>;
  retry: CallRetryTraits;
  /** How error bodies read: RFC 9457 problems (resources) or RFC 6749 errors (token endpoints). */
  errors: 'problem' | 'oauth';
  /** Bearer authentication for resource calls; absent for the token endpoints. */
  auth?: AccessTokenSource;
  /**
   * The request or its answer carries credentials (the token endpoints): errors then get no raw
   * `cause`, whose message may quote the body (a JSON parser's error quotes the text around the
   * fault, a custom fetch may describe the request).
   */
  credentials?: boolean;
  /**
   * A document rather than JSON: sent with this Accept, a success's body is answered as its bytes
   * (a Uint8Array); an error's is read as JSON as usual (problem+json).
   */
  document?: { accept: string };
}

interface Answer {
  status: number;
  headers: Headers;
  /** Parsed JSON; for an error status, the text when it is not JSON (a proxy's page). */
  body: unknown;
}

/**
 * Sends API calls: one attempt at a time under a timeout, with the retry policy between attempts
 * and, for authenticated calls, one renewal and one more attempt when the token is refused.
 */
export class Transport {
  constructor(private readonly config: TransportConfig) {}

  async call<T>(spec: CallSpec): Promise<T> {
    // Once, before any token or attempt: every attempt sends these very bytes (a retry carrying
    // the Idempotency-Key of the first must carry its body too, not what the caller changed since),
    // and a body JSON cannot carry is the caller's mistake, not a network failure to retry.
    const body = spec.body === undefined ? undefined : serialise(spec);
    const { now, sleep, limits, random } = this.config;
    const startedAt = now();
    let retriesSoFar = 0;
    let reauthenticated = false;
    /** Waits before the next attempt, or throws `error` when the policy says stop. */
    const retryOrThrow = async (failure: AttemptFailure, error: Error, retryAfterMs: number | undefined) => {
      const delay = isRetryable(failure, spec.retry)
        ? nextRetryDelay({ retriesSoFar, elapsedMs: now() - startedAt, retryAfterMs, limits, random })
        : null;
      if (delay === null) throw error;
      await sleep(delay);
      retriesSoFar++;
    };
    for (;;) {
      // Token failures are not this call's to retry: the exchange has its own retries.
      const token = spec.auth ? await spec.auth.accessToken() : undefined;
      let answer: Answer;
      try {
        answer = await this.send(spec, token, body);
      } catch (e) {
        if (!(e instanceof InvoicingConnectionError)) throw e;
        await retryOrThrow({ kind: 'connection' }, e, undefined);
        continue;
      }
      if (isSuccess(answer.status)) {
        if (spec.document) checkDocumentType(spec, answer.headers.get('content-type'));
        return answer.body as T;
      }
      if (answer.status === 401 && spec.auth && token !== undefined && !reauthenticated) {
        // Revoked session, rotated signing key, a clock that ran ahead: a fresh session may help
        // once. A second refusal is an answer, not a glitch.
        reauthenticated = true;
        await spec.auth.rejected(token);
        continue;
      }
      const retryAfterMs = parseRetryAfter(answer.headers.get('retry-after'), now());
      const error = this.errorFrom(spec, answer, retryAfterMs);
      const hasFieldErrors = error instanceof InvoicingApiError && error.errors.length > 0;
      await retryOrThrow({ kind: 'status', status: answer.status, hasFieldErrors }, error, retryAfterMs);
    }
  }

  private async send(spec: CallSpec, token: string | undefined, body: string | undefined): Promise<Answer> {
    const headers: Record<string, string> = { accept: spec.document?.accept ?? 'application/json', ...spec.headers };
    if (body !== undefined) headers['content-type'] = 'application/json';
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    if (this.config.userAgent) headers['user-agent'] = this.config.userAgent;

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.config.timeoutMs);
    try {
      const response = await this.config.fetch(this.url(spec), {
        method: spec.method,
        headers,
        body,
        signal: controller.signal,
        // The API never redirects. Following one would carry the client secret or a refresh token
        // in the body (307/308) to wherever the redirect points.
        redirect: 'error',
      });
      if (spec.document && isSuccess(response.status)) {
        return { status: response.status, headers: response.headers, body: new Uint8Array(await response.arrayBuffer()) };
      }
      const text = await response.text();
      // A success whose body is cut short throws here, a transport failure retried where safe.
      const parsed = isSuccess(response.status) ? (text === '' ? undefined : JSON.parse(text)) : parseLoosely(text);
      return { status: response.status, headers: response.headers, body: parsed };
    } catch (cause) {
      const timedOut = controller.signal.aborted;
      // The cause's message stays out of ours: a custom fetch may describe the request, body included.
      // For the token endpoints the cause stays out altogether (only its class's name is given).
      if (timedOut) {
        const message = `${spec.method} ${spec.path} timed out after ${this.config.timeoutMs} ms`;
        throw new InvoicingConnectionError(message, spec.credentials ? { timedOut } : { cause, timedOut });
      }
      if (spec.credentials) {
        throw new InvoicingConnectionError(
          `${spec.method} ${spec.path} got no usable answer (network error or unreadable body: ${errorName(cause)}; the cause is not kept, as it may quote credentials)`,
          { timedOut },
        );
      }
      throw new InvoicingConnectionError(`${spec.method} ${spec.path} got no usable answer (network error or unreadable body; see cause)`, { cause, timedOut });
    } finally {
      clearTimeout(timer);
    }
  }

  private url(spec: CallSpec): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value === undefined || value === null) continue;
      // A list is one parameter, comma-separated (OpenAPI style form, explode false: status=open,paid).
      params.append(name, Array.isArray(value) ? value.join(',') : String(value));
    }
    const query = params.toString();
    return `${this.config.baseUrl}${spec.path}${query ? `?${query}` : ''}`;
  }

  private errorFrom(spec: CallSpec, answer: Answer, retryAfterMs: number | undefined): InvoicingApiError | InvoicingOAuthError {
    const body = answer.body;
    const fields = isObject(body) ? body : {};
    const requestId = text(fields['request_id']) ?? answer.headers.get('x-request-id') ?? undefined;
    const retryAfterSeconds = retryAfterMs === undefined ? undefined : retryAfterMs / 1000;
    if (spec.errors === 'oauth') {
      return new InvoicingOAuthError({
        path: spec.path,
        status: answer.status,
        // A proxy's error page has no RFC 6749 code; one is made up so that callers can still branch.
        error: text(fields['error']) ?? (answer.status >= 500 ? 'server_error' : 'invalid_request'),
        errorDescription: text(fields['error_description']),
        requestId,
        retryAfterSeconds,
      });
    }
    return new InvoicingApiError({
      method: spec.method,
      path: spec.path,
      status: answer.status,
      type: text(fields['type']) ?? 'about:blank',
      title: text(fields['title']) ?? `HTTP ${answer.status}`,
      detail: text(fields['detail']) ?? '',
      requestId,
      errors: fieldErrors(fields['errors']),
      retryAfterSeconds,
      body,
    });
  }
}

/** The call's body as JSON text, or an `InvoicingError` (not retried) when JSON cannot carry it. */
function serialise(spec: CallSpec): string {
  let text: string | undefined;
  try {
    text = JSON.stringify(spec.body);
  } catch (cause) {
    // A BigInt or a cycle (TypeErrors naming no value), or a toJSON or getter that threw.
    const message = `${spec.method} ${spec.path}: the body cannot be sent as JSON (a BigInt, a cycle, a throwing toJSON)`;
    throw new InvoicingError(message, spec.credentials ? undefined : { cause });
  }
  if (text === undefined) throw new InvoicingError(`${spec.method} ${spec.path}: the body cannot be sent as JSON (a function or a symbol)`);
  return text;
}

/** The class name of a thrown value (`TypeError`, `SyntaxError`, `AbortError`), never its message. */
function errorName(value: unknown): string {
  const name = value instanceof Error || (typeof DOMException !== 'undefined' && value instanceof DOMException) ? value.name : undefined;
  return typeof name === 'string' && /^[A-Za-z]{1,40}$/.test(name) ? name : 'an error';
}

function isSuccess(status: number): boolean {
  return status >= 200 && status < 300;
}

function parseLoosely(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function text(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

function fieldErrors(value: unknown): FieldError[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObject).map((e) => ({
    field: text(e['field']) ?? '',
    code: text(e['code']) ?? '',
    message: text(e['message']) ?? '',
  }));
}

/**
 * A document answered in another media type than the one asked for is not that document: a resource
 * without that representation (it answers JSON whatever the Accept), an older server, a proxy's page.
 */
function checkDocumentType(spec: CallSpec, contentType: string | null): void {
  const mediaType = (value: string) => value.split(';')[0].trim().toLowerCase();
  const asked = mediaType(spec.document!.accept);
  if (contentType === null || mediaType(contentType) !== asked) {
    throw new InvoicingError(`${spec.method} ${spec.path} answered ${contentType ?? 'no Content-Type'}, not the ${asked} asked for: this resource does not offer it`);
  }
}

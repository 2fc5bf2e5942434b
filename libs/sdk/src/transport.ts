import { FieldError, InvoicingApiError, InvoicingConnectionError, InvoicingOAuthError } from './errors';
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
        answer = await this.send(spec, token);
      } catch (e) {
        if (!(e instanceof InvoicingConnectionError)) throw e;
        await retryOrThrow({ kind: 'connection' }, e, undefined);
        continue;
      }
      if (isSuccess(answer.status)) return answer.body as T;
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

  private async send(spec: CallSpec, token: string | undefined): Promise<Answer> {
    const headers: Record<string, string> = { accept: 'application/json', ...spec.headers };
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    if (token !== undefined) headers['authorization'] = `Bearer ${token}`;
    if (this.config.userAgent) headers['user-agent'] = this.config.userAgent;

    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(), this.config.timeoutMs);
    try {
      const response = await this.config.fetch(this.url(spec), {
        method: spec.method,
        headers,
        body: spec.body === undefined ? undefined : JSON.stringify(spec.body),
        signal: controller.signal,
        // The API never redirects. Following one would carry the client secret or a refresh token
        // in the body (307/308) to wherever the redirect points.
        redirect: 'error',
      });
      const text = await response.text();
      // A success whose body is cut short throws here, a transport failure retried where safe.
      const body = isSuccess(response.status) ? (text === '' ? undefined : JSON.parse(text)) : parseLoosely(text);
      return { status: response.status, headers: response.headers, body };
    } catch (cause) {
      const timedOut = controller.signal.aborted;
      // The cause's message stays out of ours: a custom fetch may describe the request, body included.
      const what = timedOut ? `timed out after ${this.config.timeoutMs} ms` : 'got no usable answer (network error or unreadable body; see cause)';
      throw new InvoicingConnectionError(`${spec.method} ${spec.path} ${what}`, { cause, timedOut });
    } finally {
      clearTimeout(timer);
    }
  }

  private url(spec: CallSpec): string {
    const params = new URLSearchParams();
    for (const [name, value] of Object.entries(spec.query ?? {})) {
      if (value !== undefined && value !== null) params.append(name, String(value));
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

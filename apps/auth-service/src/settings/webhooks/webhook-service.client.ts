import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { ProblemException } from '@invoicing/service-kit';
import { context, propagation, trace } from '@opentelemetry/api';
import { AUTH_CONFIG, AuthConfig } from '../../config/config';

/** The largest answer read from the webhook service: a page of 100 attempts is some 50 KiB. */
export const MAX_ANSWER_BYTES = 1024 * 1024;

export type FetchLike = (url: string, init: RequestInit) => Promise<Response>;
/** Injection token of the `fetch` the client uses (the global one unless a test provides another). */
export const WEBHOOK_SERVICE_FETCH = Symbol('WEBHOOK_SERVICE_FETCH');

export interface UpstreamRequest {
  method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path on the webhook service (webhook-routes.ts `upstreamPath`). */
  path: string;
  /** Raw query string without `?`, or ''. */
  query: string;
  /** A JSON document, already serialized and bounded. */
  body?: string;
  /** The access token minted for this call (never logged). */
  token: string;
  /** This request's id: the webhook service logs and answers under the same one. */
  requestId: string;
}

/** The webhook service's answer as it came: status, media type, Retry-After, the bytes of the body. */
export interface UpstreamAnswer {
  status: number;
  contentType: string;
  retryAfter: string | null;
  body: Buffer;
}

const JSON_TYPES = new Set(['application/json', 'application/problem+json']);

export const UNAVAILABLE_DETAIL = 'The webhook service is unavailable right now; retry shortly.';
export const TIMEOUT_READ_DETAIL = 'The webhook service did not answer in time; retry shortly.';
export const TIMEOUT_WRITE_DETAIL =
  'The webhook service did not answer in time, so the change may or may not have been made: reload before trying again.';
export const BAD_ANSWER_DETAIL = 'The webhook service gave an answer that could not be used; try again in a moment.';

/**
 * The HTTP client of the settings area's webhook calls (ADR 0038): one request to the webhook
 * service per call, bounded by WEBHOOK_SERVICE_TIMEOUT_MS (connection, answer and body together) and
 * {@link MAX_ANSWER_BYTES}; redirects are not followed. What the webhook service answers is handed
 * back as it is, provided it is one of its own answers: JSON or problem+json, a status it uses. Anything
 * else becomes a problem of this service's, which names no address, port or error code:
 * - no connection, or one dropped before the answer: 503 with Retry-After (a retry may work);
 * - no answer within the timeout: 503 with Retry-After, saying, for a change, that it may have been made;
 * - an answer that is not one (a redirect, another media type, unreadable JSON, over the size
 *   limit), or a 401/403: 502. The webhook service refusing the credentials this service minted is
 *   a fault of the platform's configuration (key rings, clocks), not the user's: passed on, a 401
 *   would read as "your session ended" and a 403 as a stale CSRF token.
 */
@Injectable()
export class WebhookServiceClient {
  private readonly logger = new Logger('WebhookServiceClient');
  private readonly base: string;
  private readonly timeoutMs: number;
  private readonly fetch: FetchLike;

  constructor(
    @Inject(AUTH_CONFIG) config: Pick<AuthConfig, 'WEBHOOK_SERVICE_URL' | 'WEBHOOK_SERVICE_TIMEOUT_MS'>,
    @Optional() @Inject(WEBHOOK_SERVICE_FETCH) fetchImpl?: FetchLike,
  ) {
    this.base = config.WEBHOOK_SERVICE_URL.replace(/\/+$/, '');
    this.timeoutMs = config.WEBHOOK_SERVICE_TIMEOUT_MS;
    this.fetch = fetchImpl ?? ((url, init) => fetch(url, init));
  }

  async send(request: UpstreamRequest): Promise<UpstreamAnswer> {
    const headers: Record<string, string> = {
      authorization: `Bearer ${request.token}`,
      accept: 'application/json',
      'x-request-id': request.requestId,
    };
    if (request.body !== undefined) headers['content-type'] = 'application/json';
    // As for the resource services' calls to each other: a traced request's fetch gets its
    // traceparent from the instrumentation; an unsampled one's "not sampled" is added here.
    if (trace.getSpan(context.active()) === undefined) propagation.inject(context.active(), headers);
    const url = `${this.base}${request.path}${request.query ? `?${request.query}` : ''}`;
    const signal = AbortSignal.timeout(this.timeoutMs);
    let response: Response;
    let body: Buffer | null;
    try {
      response = await this.fetch(url, { method: request.method, headers, body: request.body, redirect: 'manual', signal });
      body = await readCapped(response, MAX_ANSWER_BYTES);
    } catch (error) {
      if (signal.aborted) {
        this.logger.warn({ msg: 'webhook service did not answer in time', method: request.method, path: request.path, timeout_ms: this.timeoutMs });
        throw ProblemException.unavailable(request.method === 'GET' ? TIMEOUT_READ_DETAIL : TIMEOUT_WRITE_DETAIL);
      }
      this.logger.warn({ msg: 'webhook service unreachable', method: request.method, path: request.path, error: describe(error) });
      throw ProblemException.unavailable(UNAVAILABLE_DETAIL);
    }
    return this.checked(request, response, body);
  }

  private checked(request: UpstreamRequest, response: Response, body: Buffer | null): UpstreamAnswer {
    const status = response.status;
    const contentType = response.headers.get('content-type') ?? '';
    const refuse = (reason: string, extra: Record<string, unknown> = {}): never => {
      this.logger.error({ msg: `webhook service answer not passed on: ${reason}`, method: request.method, path: request.path, status, ...extra });
      throw new ProblemException(502, BAD_ANSWER_DETAIL);
    };
    if (body === null) return refuse(`larger than ${MAX_ANSWER_BYTES} bytes`);
    if (status < 200 || (status >= 300 && status < 400)) return refuse('not a final answer');
    if (!JSON_TYPES.has(contentType.split(';', 1)[0].trim().toLowerCase())) return refuse('not JSON', { content_type: contentType.slice(0, 100) });
    let parsed: unknown;
    try {
      parsed = JSON.parse(body.toString('utf8'));
    } catch {
      return refuse('unreadable JSON');
    }
    if (status === 401 || status === 403) {
      const detail = typeof (parsed as { detail?: unknown } | null)?.detail === 'string' ? (parsed as { detail: string }).detail : undefined;
      return refuse('it refused the minted access token', { detail });
    }
    return { status, contentType, retryAfter: response.headers.get('retry-after'), body };
  }
}

/** The body's bytes, or null past `limit` (the rest is not read). */
async function readCapped(response: Response, limit: number): Promise<Buffer | null> {
  const declared = Number(response.headers.get('content-length'));
  if (Number.isFinite(declared) && declared > limit) {
    await response.body?.cancel().catch(() => undefined);
    return null;
  }
  if (!response.body) return Buffer.alloc(0);
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    total += value.byteLength;
    if (total > limit) {
      await reader.cancel().catch(() => undefined);
      return null;
    }
    chunks.push(value);
  }
  return Buffer.concat(chunks);
}

/** For the log: the error's code or name (fetch wraps the socket's error in `cause`), never a URL. */
function describe(error: unknown): string {
  const cause = (error as { cause?: { code?: unknown; name?: unknown } } | null)?.cause;
  const code = cause?.code ?? cause?.name ?? (error as { name?: unknown } | null)?.name;
  return typeof code === 'string' ? code : 'unknown';
}

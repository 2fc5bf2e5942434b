import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { DependencyUnavailableError, isDependencyFailure } from './dependency-failure';
import { PlatformError, RETRY_SHORTLY } from './platform-error';
import { problemFor } from './problem';

/**
 * The two contracts an error can be written in (ADR 0006): RFC 9457 problem+json everywhere, RFC 6749
 * section 5.2 on the OAuth endpoints (the auth service's `/api/v1/auth/*`).
 */
export type ErrorForm = 'problem' | 'oauth';

/** Which form the errors of a request are written in; the app decides by route (createServiceApp). */
export type ErrorFormOf = (request: FastifyRequest) => ErrorForm;

export const PROBLEM_FORM_ONLY: ErrorFormOf = () => 'problem';

interface FastifyishError {
  statusCode?: number;
  code?: string;
}

/**
 * The edge: every error of a request, whether raised in a handler (this filter, global) or by
 * Fastify before one (its error handler calls {@link sendError} too), is written here and only here,
 * in the form of the endpoint it hit.
 */
@Catch()
export class ErrorFilter implements ExceptionFilter {
  private readonly logger = new Logger('ErrorFilter');

  constructor(private readonly formOf: ErrorFormOf = PROBLEM_FORM_ONLY) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    const request = ctx.getRequest<FastifyRequest>();
    sendError(exception, request, ctx.getResponse<FastifyReply>(), this.logger, this.formOf(request));
  }
}

/**
 * Writes an error: a {@link PlatformError} as it is, anything else first translated into one (a
 * framework's refusal, an outage, a bug). Both forms carry the same status, detail and headers of a
 * PlatformError; what is not one is described as each contract has always described it (docs/api.md
 * sections 4 and 8), which differs in places: a body Fastify cannot parse is 400 `invalid_request` on
 * the token endpoints whatever Fastify's status, an outage says "The service is temporarily
 * unavailable" there.
 */
export function sendError(exception: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger, form: ErrorForm = 'problem'): void {
  if (form === 'oauth') writeOAuth(toOAuthForm(exception, request, logger), reply);
  else writeProblem(toProblemForm(exception, request, logger), request, reply);
}

/** RFC 9457: `{type, title, status, detail, request_id, errors?}` as application/problem+json. */
function writeProblem(error: PlatformError, request: FastifyRequest, reply: FastifyReply): void {
  const problem = problemFor(error.status, error.detail, error.errors);
  problem.request_id = String(request.id);
  for (const name in error.headers) void reply.header(name, error.headers[name]);
  if (problem.status === 503 && !reply.hasHeader('retry-after')) void reply.header('Retry-After', '1');
  void reply.status(problem.status).type('application/problem+json').send(problem);
}

/**
 * RFC 6749 section 5.2: `{error, error_description}`, never cached. An answer with no OAuth code of
 * its own (none is thrown on the token endpoints today) reads as the closest one its status allows.
 */
function writeOAuth(error: PlatformError, reply: FastifyReply): void {
  for (const name in error.headers) void reply.header(name, error.headers[name]);
  void reply
    .status(error.status)
    .header('Cache-Control', 'no-store')
    .header('Pragma', 'no-cache')
    .type('application/json')
    .send({ error: error.oauthError ?? oauthCodeFor(error.status), error_description: error.detail });
}

function oauthCodeFor(status: number): NonNullable<PlatformError['oauthError']> {
  if (status === 503) return 'temporarily_unavailable';
  return status >= 500 ? 'server_error' : 'invalid_request';
}

/** An answer the code chose, as opposed to an outage, whose words are the edge's (its message is for the log). */
function isAnswer(exception: unknown): exception is PlatformError {
  return exception instanceof PlatformError && !(exception instanceof DependencyUnavailableError);
}

const PROBLEM_OUTAGE = new PlatformError(503, 'dependency_unavailable', 'A dependency is unavailable; retry shortly.', {
  oauthError: 'temporarily_unavailable',
  headers: RETRY_SHORTLY,
});
const OAUTH_OUTAGE = new PlatformError(503, 'dependency_unavailable', 'The service is temporarily unavailable; retry shortly.', {
  oauthError: 'temporarily_unavailable',
  headers: RETRY_SHORTLY,
});

/** What a body of another media type, or of none (no Content-Type), is told: the types each form takes. */
export const JSON_ONLY = 'The request body must be application/json, sent with Content-Type: application/json.';
const JSON_OR_FORM = 'The body must be application/json or application/x-www-form-urlencoded, sent with that Content-Type.';

// The translations below keep each contract's order of checks as it has always been: the same
// exception can match more than one (a Fastify 413 is also a 4xx).
//
// Fastify's own refusals (body parsing, media types) reach us two ways: as they are, and, in a running
// app, turned by Nest's exception handler into an HttpException of the same status and message
// (RoutesResolver.mapExternalException), its code lost. A 415 means the same either way.

function toProblemForm(exception: unknown, request: FastifyRequest, logger: Logger): PlatformError {
  if (isAnswer(exception)) return exception;
  if (exception instanceof HttpException) {
    const status = exception.getStatus();
    return new PlatformError(status, 'request_rejected', status === 404 ? 'No such resource.' : status === 415 ? JSON_ONLY : publicMessage(exception));
  }
  // Errors raised by Fastify itself before a handler runs (body parsing, limits, media types).
  const fst = exception as FastifyishError;
  if (fst && typeof fst.statusCode === 'number' && fst.statusCode >= 400 && fst.statusCode < 500) {
    return new PlatformError(fst.statusCode, fst.code ?? 'request_rejected', fastifyDetail(fst));
  }
  if (isDependencyFailure(exception)) {
    logger.warn({ msg: 'dependency unavailable', request_id: request.id, err: errorForLog(exception) });
    return PROBLEM_OUTAGE;
  }
  logger.error({ msg: 'unhandled error', request_id: request.id, err: errorForLog(exception) });
  return new PlatformError(500, 'internal', 'An unexpected error occurred. Quote the request_id when you report it.');
}

function toOAuthForm(exception: unknown, request: FastifyRequest, logger: Logger): PlatformError {
  if (isAnswer(exception)) return exception;
  if (isDependencyFailure(exception)) {
    logger.warn({ msg: 'dependency unavailable', request_id: request.id, err: errorForLog(exception) });
    return OAUTH_OUTAGE;
  }
  const fst = exception as FastifyishError;
  // A body too large (raised by Fastify, or by Nest as PayloadTooLargeException) keeps its 413: the
  // service then lets the rest of the upload drain (see createServiceApp), so a proxy still sending
  // it (the gateway) reads this answer instead of a reset connection, which it would turn into a 502.
  if (fst?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || (exception instanceof HttpException && exception.getStatus() === 413)) {
    return invalidRequest(413, 'The request body is too large.');
  }
  if (fst && typeof fst.statusCode === 'number' && fst.statusCode >= 400 && fst.statusCode < 500 && !(exception instanceof HttpException)) {
    // Raised by Fastify before the handler: bad JSON, unsupported content type.
    return invalidRequest(
      400,
      fst.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE' ? JSON_OR_FORM : 'The request body could not be parsed.',
    );
  }
  if (exception instanceof HttpException && exception.getStatus() === 404) return invalidRequest(404, 'No such endpoint.');
  if (exception instanceof HttpException && exception.getStatus() === 415) return invalidRequest(400, JSON_OR_FORM);
  if (exception instanceof HttpException && exception.getStatus() < 500) {
    // Nest's own body parsing (invalid JSON) and routing errors.
    return invalidRequest(400, exception.getStatus() === 400 ? 'The request body could not be parsed.' : 'The request was rejected.');
  }
  logger.error({ msg: 'unhandled error', request_id: request.id, err: errorForLog(exception) });
  return new PlatformError(500, 'server_error', 'An unexpected error occurred.', { oauthError: 'server_error' });
}

function invalidRequest(status: number, detail: string): PlatformError {
  return new PlatformError(status, 'invalid_request', detail, { oauthError: 'invalid_request' });
}

function publicMessage(e: HttpException): string {
  const response = e.getResponse();
  if (typeof response === 'string') return response;
  const message = (response as { message?: unknown }).message;
  if (typeof message === 'string') return message;
  if (Array.isArray(message)) return message.join('; ');
  return e.message;
}

function fastifyDetail(e: FastifyishError): string {
  switch (e.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return 'The request body exceeds the 1 MiB limit.';
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return JSON_ONLY;
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return 'The request body is empty.';
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return 'The Content-Length header does not match the body.';
    default:
      return e.statusCode === 400 ? 'The request body is not valid JSON.' : 'The request was rejected.';
  }
}

export function errorForLog(e: unknown): Record<string, unknown> {
  if (e instanceof Error) return { name: e.name, message: e.message, stack: e.stack };
  return { value: String(e) };
}

import { ArgumentsHost, Catch, ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { isDependencyFailure } from './dependency-failure';
import { ProblemDetails, ProblemException, problemFor } from './problem';

interface FastifyishError {
  statusCode?: number;
  code?: string;
}

/**
 * Renders every error as `application/problem+json` (RFC 9457). Unknown errors become a 500 with a
 * generic detail: the message, stack and any SQL stay in the log, never in the response.
 */
@Catch()
export class ProblemFilter implements ExceptionFilter {
  private readonly logger = new Logger('ProblemFilter');

  constructor(private readonly render: ErrorRenderer = sendProblem) {}

  catch(exception: unknown, host: ArgumentsHost): void {
    const ctx = host.switchToHttp();
    this.render(exception, ctx.getRequest<FastifyRequest>(), ctx.getResponse<FastifyReply>(), this.logger);
  }
}

/** Writes an error response; the default renders problem+json. */
export type ErrorRenderer = (exception: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger) => void;

/** Shared by the Nest filter and Fastify's own error handler (errors raised before a handler runs). */
export function sendProblem(exception: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const problem = toProblem(exception, request, logger);
  problem.request_id = String(request.id);
  if (exception instanceof ProblemException) {
    for (const [name, value] of Object.entries(exception.headers)) void reply.header(name, value);
  }
  if (problem.status === 503 && !reply.hasHeader('retry-after')) void reply.header('Retry-After', '1');
  void reply.status(problem.status).type('application/problem+json').send(problem);
}

function toProblem(exception: unknown, request: FastifyRequest, logger: Logger): ProblemDetails {
  {
    if (exception instanceof ProblemException) {
      return problemFor(exception.status, exception.detail, exception.errors);
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      return problemFor(status, status === 404 ? 'No such resource.' : publicMessage(exception));
    }
    // Errors raised by Fastify itself before a handler runs (body parsing, limits, media types).
    const fst = exception as FastifyishError;
    if (fst && typeof fst.statusCode === 'number' && fst.statusCode >= 400 && fst.statusCode < 500) {
      return problemFor(fst.statusCode, fastifyDetail(fst));
    }
    if (isDependencyFailure(exception)) {
      logger.warn({ msg: 'dependency unavailable', request_id: request.id, err: errorForLog(exception) });
      return problemFor(503, 'A dependency is unavailable; retry shortly.');
    }
    logger.error({ msg: 'unhandled error', request_id: request.id, err: errorForLog(exception) });
    return problemFor(500, 'An unexpected error occurred. Quote the request_id when you report it.');
  }
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
      return 'The request body must be application/json.';
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

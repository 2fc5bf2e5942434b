import { HttpException, Logger } from '@nestjs/common';
import { errorForLog, isDependencyFailure } from '@invoicing/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import { OAuthError } from './oauth-error';

interface FastifyishError {
  statusCode?: number;
  code?: string;
}

export function sendOAuthError(exception: unknown, request: FastifyRequest, reply: FastifyReply, logger: Logger): void {
  const error = toOAuthError(exception, request, logger);
  for (const [name, value] of Object.entries(error.headers)) void reply.header(name, value);
  void reply
    .status(error.status)
    .header('Cache-Control', 'no-store')
    .header('Pragma', 'no-cache')
    .type('application/json')
    .send({ error: error.error, error_description: error.description });
}

function toOAuthError(exception: unknown, request: FastifyRequest, logger: Logger): OAuthError {
  if (exception instanceof OAuthError) return exception;
  if (isDependencyFailure(exception)) {
    logger.warn({ msg: 'dependency unavailable', request_id: request.id, err: errorForLog(exception) });
    return OAuthError.unavailable();
  }
  const fst = exception as FastifyishError;
  // A body too large (raised by Fastify, or by Nest as PayloadTooLargeException) keeps its 413: the
  // service then lets the rest of the upload drain (see createServiceApp), so a proxy still sending
  // it (the gateway) reads this answer instead of a reset connection, which it would turn into a 502.
  if (fst?.code === 'FST_ERR_CTP_BODY_TOO_LARGE' || (exception instanceof HttpException && exception.getStatus() === 413)) {
    return new OAuthError(413, 'invalid_request', 'The request body is too large.');
  }
  if (fst && typeof fst.statusCode === 'number' && fst.statusCode >= 400 && fst.statusCode < 500 && !(exception instanceof HttpException)) {
    // Raised by Fastify before the handler: bad JSON, unsupported content type.
    const description =
      fst.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? 'The body must be application/json or application/x-www-form-urlencoded.'
        : 'The request body could not be parsed.';
    return OAuthError.invalidRequest(description);
  }
  if (exception instanceof HttpException && exception.getStatus() === 404) {
    return new OAuthError(404, 'invalid_request', 'No such endpoint.');
  }
  if (exception instanceof HttpException && exception.getStatus() < 500) {
    // Nest's own body parsing (invalid JSON) and routing errors.
    return OAuthError.invalidRequest(exception.getStatus() === 400 ? 'The request body could not be parsed.' : 'The request was rejected.');
  }
  logger.error({ msg: 'unhandled error', request_id: request.id, err: errorForLog(exception) });
  return new OAuthError(500, 'server_error', 'An unexpected error occurred.');
}

import { FastifyBaseLogger, LogController } from 'fastify';
import { problemClientErrorHandler, problemFrameworkErrors } from './client-error';
import { requestIdFrom } from './request-id';

/**
 * The Fastify options every HTTP process of the platform starts from (the Nest services through
 * createServiceApp, the settings page directly): the caller's pino logger, the
 * request id taken from X-Request-Id or made, log lines labelled `request_id` and one access line
 * per request (installAccessLog) instead of Fastify's two, 503 while closing, and problem+json for
 * what Node's parser or Fastify's router refuses (headers over 16 KiB, a URL that is not UTF-8). Only
 * trustProxy differs: the settings page trusts its gateway; the services take the client from X-Forwarded-For, but
 * only when the peer is one of their configured proxies (TRUSTED_PROXIES; false or [] trusts none).
 */
export function fastifyBaseOptions(logger: FastifyBaseLogger, options: { trustProxy: boolean | readonly string[] }) {
  const trusted = options.trustProxy;
  return {
    loggerInstance: logger,
    genReqId: requestIdFrom,
    logController: new LogController({ requestIdLogLabel: 'request_id', disableRequestLogging: true }),
    return503OnClosing: true,
    clientErrorHandler: problemClientErrorHandler,
    frameworkErrors: problemFrameworkErrors,
    trustProxy: typeof trusted === 'boolean' ? trusted : trusted.length > 0 ? [...trusted] : false,
  };
}

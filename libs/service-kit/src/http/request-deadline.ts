import type { Logger } from '@nestjs/common';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { ErrorFormOf, sendError } from './error-edge';
import { PlatformError, RETRY_SHORTLY } from './platform-error';

/** Default of REQUEST_TIMEOUT_MS: well inside the gateway's 30 s, well past any ordinary request. */
export const DEFAULT_REQUEST_TIMEOUT_MS = 15_000;

declare module 'fastify' {
  interface FastifyRequest {
    /** The request's deadline timer (installRequestDeadline); null once it is answered. */
    deadline: NodeJS.Timeout | null;
  }
}

/**
 * Every request is answered within `timeoutMs`, whatever its handler is waiting for: past it, a 503
 * (Retry-After: 1) in the endpoint's error form, and a log line naming the route. The statement
 * timeout bounds what Postgres may take and fetches carry their own; this is the bound for the rest
 * (a promise nobody settles, a queue that does not move), so that a caller, and the gateway's
 * connection it holds, is never held until the gateway gives up (docs/api.md section 8). The handler
 * still runs to its end; what it answers then is dropped (Fastify logs that the reply was sent).
 *
 * One timer per request, cleared when the answer is written: Node keeps timers of one duration in a
 * single list, so arming and clearing one is constant work (docs/perf.md).
 */
export function installRequestDeadline(fastify: FastifyInstance, timeoutMs: number, logger: Logger, formOf: ErrorFormOf): void {
  const expired = new PlatformError(503, 'request_timeout', `The request could not be completed within ${timeoutMs / 1000} s; retry shortly.`, {
    oauthError: 'temporarily_unavailable',
    headers: RETRY_SHORTLY,
  });
  const expire = (request: FastifyRequest, reply: FastifyReply): void => {
    request.deadline = null;
    if (reply.sent || reply.raw.headersSent || reply.raw.destroyed) return;
    logger.error({ msg: 'request exceeded its deadline; answered 503', method: request.method, route: request.routeOptions.url, timeout_ms: timeoutMs });
    sendError(expired, request, reply, logger, formOf(request));
  };
  fastify.decorateRequest('deadline', null);
  fastify.addHook('onRequest', (request, reply, done) => {
    request.deadline = setTimeout(expire, timeoutMs, request, reply);
    done();
  });
  const clear = (request: FastifyRequest): void => {
    if (request.deadline !== null) clearTimeout(request.deadline);
    request.deadline = null;
  };
  fastify.addHook('onResponse', (request, _reply, done) => {
    clear(request);
    done();
  });
  // A caller that went away is answered by nobody: its timer goes with it.
  fastify.addHook('onRequestAbort', (request, done) => {
    clear(request);
    done();
  });
}

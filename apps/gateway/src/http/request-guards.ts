import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { sendGatewayProblem } from './gateway-problem';

/**
 * Longest request-target (path and query) the gateway accepts: 8 KiB, the 8000 octets RFC 9112
 * section 3 asks every party to support, rounded up. Longer is a 414 before any route runs. (A
 * request head over Node's 16 KiB maxHeaderSize never gets here: service-kit's clientErrorHandler
 * answers it 431.) The routes are wildcards, so Fastify's maxParamLength does not apply to them.
 */
export const MAX_URL_LENGTH = 8 * 1024;

/**
 * onRequest, once the request id is on the reply: what no upstream should see, answered as the gateway's own problem and
 * never echoing the input. A request-target over MAX_URL_LENGTH is a 414. A request with two Host
 * lines, or an HTTP/1.1 one with none, is a 400 (RFC 9112 section 3.2): Node keeps the first of
 * two, and a cache or an upstream that went by the other would disagree on which site was asked.
 * (Node's own check of a missing Host is off, see createGateway: it answers an empty 400.)
 */
export function rejectMalformedRequest(request: FastifyRequest, reply: FastifyReply, done: () => void): void {
  const raw = request.raw;
  if ((raw.url ?? '').length > MAX_URL_LENGTH) {
    return sendGatewayProblem(reply, 414, `The request URL is longer than the ${MAX_URL_LENGTH} characters this API accepts.`);
  }
  const hosts = hostLines(raw.rawHeaders);
  if (hosts > 1 || (hosts === 0 && raw.httpVersion !== '1.0')) {
    return sendGatewayProblem(reply, 400, 'The request must carry exactly one Host header.');
  }
  done();
}

function hostLines(rawHeaders: string[]): number {
  let count = 0;
  for (let i = 0; i < rawHeaders.length; i += 2) if (rawHeaders[i].toLowerCase() === 'host') count++;
  return count;
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any hook runs. Fastify's own answer
 * is its JSON shape quoting the URL (`'/%ff' is not a valid url component`); this is the gateway's
 * problem, without the URL.
 */
export function answerFrameworkError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  // No onRequest hook ran: the request id is not on the reply yet.
  void reply.header('X-Request-Id', request.id);
  if (error.code === 'FST_ERR_BAD_URL') return sendGatewayProblem(reply, 400, 'The request URL is not valid percent-encoding.');
  if (error.code === 'FST_ERR_MAX_PARAM_LENGTH') return sendGatewayProblem(reply, 414, 'A segment of the request URL is too long.');
  request.log.error({ err: error }, 'gateway error');
  sendGatewayProblem(reply, 500, 'An unexpected error occurred. Quote the request_id when you report it.');
}

import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { STATUS_CODES } from 'node:http';
import type { Socket } from 'node:net';
import { problemFor } from './problem';

/**
 * Fastify's `clientErrorHandler`: answers what Node's HTTP parser refuses before any route runs
 * (headers over 16 KiB, a malformed request line, a request that took too long) as problem+json,
 * like every other error, instead of Fastify's own JSON shape. No request id exists yet; nothing
 * from the request is echoed back.
 */
export function problemClientErrorHandler(error: Error & { code?: string }, socket: Socket): void {
  // A reset connection has nobody left to answer.
  if (error.code === 'ECONNRESET' || socket.destroyed) return;
  const [status, detail] =
    error.code === 'HPE_HEADER_OVERFLOW'
      ? [431, 'The request headers are larger than the 16 KiB this API accepts.']
      : error.code === 'ERR_HTTP_REQUEST_TIMEOUT'
        ? [408, 'The request was not received in time.']
        : [400, 'The request is not valid HTTP/1.1.'];
  const body = JSON.stringify(problemFor(status, detail));
  if (socket.writable) {
    socket.write(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/problem+json\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  }
  socket.destroy(error);
}

/**
 * Fastify's `frameworkErrors`: what its router refuses before any route or hook runs. Its own answer
 * is a JSON shape quoting the URL (`'/%ff' is not a valid url component`); this is a problem+json with
 * the request id that quotes nothing. (Before nginx, the Node gateway answered these itself; nginx
 * passes a well-formed escape that is not UTF-8 on, so the service must.)
 */
export function problemFrameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  const [status, detail] =
    error.code === 'FST_ERR_BAD_URL'
      ? [400, 'The request URL is not valid percent-encoded UTF-8.']
      : error.code === 'FST_ERR_MAX_PARAM_LENGTH'
        ? [414, 'A segment of the request URL is too long.']
        : [500, 'An unexpected error occurred. Quote the request_id when you report it.'];
  if (status === 500) request.log.error({ err: error }, 'framework error');
  const problem = { ...problemFor(status, detail), request_id: String(request.id) };
  void reply.header('X-Request-Id', String(request.id)).code(status).type('application/problem+json').send(problem);
}

import { DRAIN_REJECTED_BODY_MAX_BYTES } from '@invoicing/service-kit';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { IncomingMessage } from 'node:http';
import { PassThrough, Readable } from 'node:stream';


/**
 * preHandler of the proxied routes: the upstream client is handed a stand-in for the caller's body.
 *
 * When an upstream answers before the body is all sent (a 413 decided on Content-Length), undici
 * destroys its connection and the body stream it was given. Handed the caller's own request, that
 * destroyed the caller's socket as well, racing the answer on its way out: now and then (seen
 * through the compose stack) the caller got EPIPE instead of the 413. The stand-in stops that chain;
 * a caller that goes away mid-upload still aborts the upstream request.
 */
export function shieldRequestBody(request: FastifyRequest, _reply: FastifyReply, done: () => void): void {
  if (request.body === request.raw) request.body = standIn(request.raw);
  done();
}

/**
 * onSend: an answer that leaves the caller's body unread. reply-from (and the gateway's own errors)
 * would close the connection, and closing with unread bytes makes the kernel send a reset, which can
 * wipe the answer from the caller's buffer before it reads it. So a body of a sane declared size is
 * drained instead, on an open connection, as a server does; a larger or undeclared one is closed.
 */
export function drainUnreadBody(request: FastifyRequest, reply: FastifyReply, payload: unknown, done: (err: null, payload: unknown) => void): void {
  const raw = request.raw;
  if (!raw.complete && !raw.destroyed && declaresBody(raw)) {
    // As much as the services drain of a body they refuse (DRAIN_REJECTED_BODY_MAX_BYTES).
    if (Number(raw.headers['content-length'] ?? NaN) <= DRAIN_REJECTED_BODY_MAX_BYTES) {
      reply.removeHeader('connection');
      raw.unpipe();
      raw.resume();
    } else {
      reply.header('connection', 'close');
    }
  }
  done(null, payload);
}

/**
 * Without Content-Length or Transfer-Encoding a request has no body (RFC 9112 section 6.3). Node
 * marks such a request complete only after an answer given at once (a 404, a 400 from an onRequest
 * hook): taken for an undeclared body, it closed the caller's keep-alive connection for nothing.
 */
function declaresBody(raw: IncomingMessage): boolean {
  return raw.headers['content-length'] !== undefined || raw.headers['transfer-encoding'] !== undefined;
}

function standIn(raw: IncomingMessage): Readable {
  const body = new PassThrough();
  raw.pipe(body);
  raw.once('close', () => {
    if (!raw.complete) body.destroy(new Error('The caller closed the connection during the upload.'));
  });
  // undici listens for errors while it sends the body and detaches after; one raised later (the
  // caller leaving) has nobody else to hear it, and the outcome is already the gateway's to answer.
  body.on('error', () => undefined);
  return body;
}

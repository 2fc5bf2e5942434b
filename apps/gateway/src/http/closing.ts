import type { FastifyInstance } from 'fastify';
import type { IncomingMessage } from 'node:http';

/**
 * Node's server.close() ends the connections idle when it runs and waits for the others. Kept alive,
 * one whose exchange ends later then waits for a next request until keepAliveTimeout (72 s), and
 * holds the close that long: a body still being drained after its answer (early-response.ts; the int
 * spec's "mid-upload" test hung its 30 s on it), an answer still on its way. From preClose on, the
 * gateway ends each connection as soon as its exchange is over: the answer says `Connection: close`,
 * and a connection whose answer is out ends once its body is read.
 *
 * Register before drainUnreadBody: that hook drops the `Connection: close` of an answer whose body it
 * drains (closing with unread bytes resets the connection under the answer).
 */
export function closeConnectionsWhenClosing(fastify: FastifyInstance): void {
  let closing = false;
  fastify.addHook('preClose', (done) => {
    closing = true;
    done();
  });
  fastify.addHook('onSend', (_request, reply, payload, done) => {
    if (closing) void reply.header('connection', 'close');
    done(null, payload);
  });
  fastify.addHook('onResponse', (request, _reply, done) => {
    endOnceRead(request.raw, () => closing);
    done();
  });
}

/** The answer is out: end the connection when the request is read too, if the server is closing by then. */
function endOnceRead(raw: IncomingMessage, closing: () => boolean): void {
  const end = (): void => {
    if (closing()) raw.socket.destroySoon();
  };
  if (raw.complete) end();
  else raw.once('end', end);
}

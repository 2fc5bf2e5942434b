import type { FastifyReply, FastifyRequest, HookHandlerDoneFunction } from 'fastify';
import { problemFor } from './problem';

/**
 * Request paths a service refuses before any handler runs: those a proxy in front may have routed as
 * another path than the one the service reads. nginx (the gateway, ingress-nginx) routes on the path
 * decoded and normalised, and forwards it as sent; find-my-way routes on it as sent, and decodes an
 * encoded slash into the parameter it lands in. `/internal/v1/objects/x%2F..%2F..%2F..%2F..%2Fapi%2Fv1%2Fclients`
 * is `/api/v1/clients` to nginx and, here, the internal route with the id `x/../../../../api/v1/clients`.
 * The gateway refuses these already (REFUSED_PATH, libs/gateway/src/nginx-config.ts, the same rule);
 * this is the same refusal behind any other proxy, the Ingress included (ADR 0029, addendum): encoded
 * slashes, backslashes and dots, a backslash, dot and empty segments, `;`, `#`, and overlong UTF-8.
 * Only the path is looked at: the query is the handler's.
 */
export const AMBIGUOUS_PATH = /^[^?]*(?:%2[EF]|%5C|\\|\/\/|\/[.][.]?(?:[/?]|$)|[;#]|%C[01]|%E0%[89]|%F0%8)/i;

export const AMBIGUOUS_PATH_DETAIL =
  'The request path is ambiguous: it holds an encoded slash, backslash or dot (%2F, %5C, %2E), a backslash, a dot segment (/./ or /../), an empty segment (//), a semicolon, a # or an overlong UTF-8 sequence. Send the path as the API documents it.';

/**
 * Fastify `onRequest` hook: a 400 problem+json with the request id for an ambiguous path, which
 * quotes nothing of it. The route was already looked up (Fastify runs hooks after the router), but no
 * handler, guard or body parser has run. A callback hook: it runs on every request.
 */
export function refuseAmbiguousPaths(request: FastifyRequest, reply: FastifyReply, done: HookHandlerDoneFunction): void {
  if (!AMBIGUOUS_PATH.test(request.raw.url ?? '')) {
    done();
    return;
  }
  const problem = { ...problemFor(400, AMBIGUOUS_PATH_DETAIL), request_id: String(request.id) };
  void reply.header('X-Request-Id', String(request.id)).code(400).type('application/problem+json').send(problem);
}

import fastifyHttpProxy from '@fastify/http-proxy';
import { GATEWAY_ROUTES, GatewayRoute } from '@invoicing/contracts';
import { createLogger, drainOnSignals, fastifyBaseOptions, installAccessLog, installHealthRoutes, OpsState } from '@invoicing/service-kit';
import Fastify, { FastifyBaseLogger, FastifyError, FastifyInstance } from 'fastify';
import type { IncomingHttpHeaders } from 'node:http';
import type { GatewayConfig } from './config';
import { closeConnectionsWhenClosing } from './http/closing';
import { drainUnreadBody, shieldRequestBody } from './http/early-response';
import { classifyUpstreamError, sendGatewayProblem } from './http/gateway-problem';
import { withoutHopByHop } from './http/hop-by-hop';
import { answerFrameworkError, rejectMalformedRequest } from './http/request-guards';
import { createMetricsApp } from './observability/metrics-app';
import { resolveRoutes, ResolvedRoute } from './routing/route-table';

export interface Gateway {
  /** The public app: the proxied routes and the health routes. */
  fastify: FastifyInstance;
  /** GET /metrics of the public app's traffic, for the METRICS_PORT listener; closed with the public app. */
  metrics: FastifyInstance;
  routes: ResolvedRoute[];
  state: OpsState;
}

/** Methods forwarded upstream; the services decide which they implement (405/404 in their format). */
const METHODS = ['DELETE', 'GET', 'HEAD', 'PATCH', 'POST', 'PUT', 'OPTIONS'];

/**
 * Builds the gateway (not listening): one `@fastify/http-proxy` per route of the platform table.
 * It never parses or limits a proxied body (the proxy streams it; the service enforces the 1 MiB
 * limit and answers 413 in its own format), forwards and echoes X-Request-Id, and answers its own
 * errors (no route, upstream down or slow) as problem+json, exactly like the services.
 */
export async function createGateway(config: GatewayConfig, table: readonly GatewayRoute[] = GATEWAY_ROUTES): Promise<Gateway> {
  const routes = resolveRoutes(table, config.upstreams);
  const logger: FastifyBaseLogger = createLogger('gateway', config.LOG_LEVEL);
  const fastify = Fastify({
    // The gateway is the edge: the client is the peer, whatever X-Forwarded-For a caller claims.
    ...fastifyBaseOptions(logger, { trustProxy: false }),
    frameworkErrors: answerFrameworkError,
    // rejectMalformedRequest checks Host and answers in problem+json; Node's check answers an empty 400.
    http: { requireHostHeader: false },
  });
  const state: OpsState = { shuttingDown: false };

  fastify.addHook('onRequest', (request, reply, done) => {
    void reply.header('X-Request-Id', request.id);
    done();
  });
  fastify.addHook('onRequest', rejectMalformedRequest);
  installAccessLog(fastify);
  // Before drainUnreadBody, which takes back the `Connection: close` of an answer whose body it drains.
  closeConnectionsWhenClosing(fastify);
  fastify.addHook('onSend', drainUnreadBody);
  fastify.setNotFoundHandler((request, reply) => {
    sendGatewayProblem(reply, 404, `No route for ${request.url.split('?', 1)[0]}.`);
  });
  fastify.setErrorHandler((error: FastifyError, request, reply) => {
    const status = typeof error.statusCode === 'number' && error.statusCode >= 400 && error.statusCode < 500 ? error.statusCode : 500;
    if (status === 500) request.log.error({ err: error }, 'gateway error');
    sendGatewayProblem(reply, status, status === 500 ? 'An unexpected error occurred. Quote the request_id when you report it.' : 'The request was rejected.');
  });

  const metrics = createMetricsApp(fastify, logger);
  installHealthRoutes(fastify, {}, state);

  for (const route of routes) {
    await fastify.register(fastifyHttpProxy, {
      upstream: route.upstream,
      prefix: route.prefix,
      // Forward the path unchanged: the services route on the full /api/v1/... path.
      rewritePrefix: route.prefix,
      internalRewriteLocationHeader: false,
      httpMethods: METHODS,
      disableRequestLogging: true,
      preHandler: shieldRequestBody,
      undici: upstreamClientOptions(config),
      replyOptions: {
        timeout: config.UPSTREAM_TIMEOUT_MS,
        // reply-from would retry a GET that got a 503 up to ten times: the service's 503 (a dependency
        // down, still replaying revocations) is the answer and must reach the caller as it is.
        retryDelay: () => null,
        rewriteRequestHeaders: (request, headers) => forwardedHeaders(request, headers as IncomingHttpHeaders),
        rewriteHeaders: (headers) => withoutHopByHop(headers),
        onError: (reply, { error }) => {
          const failure = classifyUpstreamError(error);
          reply.request.log.warn({ upstream: route.upstream, service: route.service, status: failure.status, err: error }, 'upstream failed');
          sendGatewayProblem(reply, failure.status, failure.detail);
        },
      },
    });
  }
  return { fastify, metrics, routes, state };
}

/**
 * undici's options for the upstream connections. The source address is the client's `localAddress`:
 * a `connect: { localAddress }` would be overridden by the client's own (unset) one.
 */
function upstreamClientOptions(config: GatewayConfig) {
  const source = config.UPSTREAM_SOURCE_ADDRESS ? { localAddress: config.UPSTREAM_SOURCE_ADDRESS } : {};
  return { connections: 128, pipelining: 1, keepAliveTimeout: 30000, ...source };
}

/**
 * The request id travels upstream so both log lines carry it. X-Forwarded-* are set, not appended:
 * the services trust them for per-address throttling, so a caller must not be able to forge them.
 * `Expect: 100-continue` (curl sends it for bodies over 1 KiB) was already answered by this server;
 * the upstream client refuses to send it again. Hop-by-hop fields end here (hop-by-hop.ts).
 */
function forwardedHeaders(request: { id: unknown; ip: string; protocol: string; host: string }, headers: IncomingHttpHeaders): IncomingHttpHeaders {
  const { expect: _answered, ...rest } = withoutHopByHop(headers);
  return {
    ...rest,
    'x-request-id': String(request.id),
    'x-forwarded-for': request.ip,
    'x-forwarded-proto': request.protocol,
    'x-forwarded-host': request.host,
  };
}

/** Listens on PORT, and with the metrics app on METRICS_PORT unless it is 0; both on HOST. */
export async function listenGateway(gateway: Gateway, config: GatewayConfig): Promise<void> {
  await gateway.fastify.listen({ port: config.PORT, host: config.HOST });
  if (config.METRICS_PORT !== 0) await gateway.metrics.listen({ port: config.METRICS_PORT, host: config.HOST });
}

/**
 * Listens and drains on SIGTERM/SIGINT: readiness turns 503, Fastify stops accepting, in-flight
 * proxied requests finish (bounded by SHUTDOWN_GRACE_SECONDS), then the process exits.
 */
export async function startGateway(gateway: Gateway, config: GatewayConfig): Promise<void> {
  await listenGateway(gateway, config);
  drainOnSignals({
    state: gateway.state,
    logger: gateway.fastify.log,
    close: () => gateway.fastify.close(),
    graceSeconds: config.SHUTDOWN_GRACE_SECONDS,
  });
}

import type { FastifyInstance } from 'fastify';
import { Histogram, Registry, collectDefaultMetrics } from 'prom-client';

/** A Prometheus registry per app instance (tests start several apps in one process). */
export function createMetrics(service: string): { registry: Registry; install(fastify: FastifyInstance): void } {
  const registry = new Registry();
  registry.setDefaultLabels({ service });
  collectDefaultMetrics({ register: registry });
  const duration = new Histogram({
    name: 'http_request_duration_seconds',
    help: 'HTTP request duration by route and status.',
    labelNames: ['method', 'route', 'status_code'],
    buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
    registers: [registry],
  });
  return {
    registry,
    install(fastify: FastifyInstance): void {
      fastify.addHook('onResponse', (request, reply, done) => {
        // The route template, never the raw URL: ids in paths would explode label cardinality.
        const route = request.routeOptions.url ?? 'unmatched';
        duration.observe(
          { method: request.method, route, status_code: String(reply.statusCode) },
          reply.elapsedTime / 1000,
        );
        done();
      });
      fastify.get('/metrics', async (_request, reply) => {
        void reply.type(registry.contentType);
        return registry.metrics();
      });
    },
  };
}

import { createMetrics, fastifyBaseOptions } from '@invoicing/service-kit';
import Fastify, { FastifyBaseLogger, FastifyInstance } from 'fastify';

/**
 * The gateway's Prometheus metrics: recorded on the public app, served by a second one that listens
 * on METRICS_PORT. On the public port, anyone could read the tenants' traffic counts and the Node
 * version; there `/metrics` is an unknown path like any other (404).
 *
 * service-kit's `install` records (an onResponse hook) and serves (GET /metrics) on the instance it
 * is given; this one is given the hooks of the public app and the routes of the metrics app. Should
 * `install` ever use anything else, it throws here at start instead of serving on the public port.
 */
export function createMetricsApp(observed: FastifyInstance, logger: FastifyBaseLogger): FastifyInstance {
  const app = Fastify(fastifyBaseOptions(logger, { trustProxy: false }));
  const split = { addHook: observed.addHook.bind(observed), get: app.get.bind(app) } as unknown as FastifyInstance;
  createMetrics('gateway').install(split);
  // Closed with the public app: the SIGTERM drain and the tests close one thing.
  observed.addHook('onClose', async () => {
    await app.close();
  });
  return app;
}

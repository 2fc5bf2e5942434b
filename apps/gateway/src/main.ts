import { GATEWAY_ROUTES } from '@invoicing/contracts';
import { printJson, runCli, SERVING } from '@invoicing/service-kit';
import { gatewayEnvSpec, loadGatewayConfig } from './config';
import { createGateway, startGateway } from './gateway-app';
import { resolveRoutes } from './routing/route-table';

/**
 * `serve` (default); `env-spec` (the variables it reads, as JSON); `routes` (the effective route
 * table for the current environment, longest prefix first, as JSON: the deploy tests compare it
 * with docker-compose and the Ingress).
 */
runCli('gateway', {
  serve: async () => {
    const config = loadGatewayConfig();
    await startGateway(await createGateway(config), config);
    return SERVING;
  },
  routes: () => printJson(resolveRoutes(GATEWAY_ROUTES, loadGatewayConfig().upstreams)),
  'env-spec': () => printJson(gatewayEnvSpec()),
});

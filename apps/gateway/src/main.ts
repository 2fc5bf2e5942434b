import { GATEWAY_ROUTES } from '@invoicing/contracts';
import { ConfigError } from '@invoicing/service-kit';
import { gatewayEnvSpec, loadGatewayConfig } from './config';
import { createGateway, startGateway } from './gateway-app';
import { resolveRoutes } from './routing/route-table';

/**
 * `serve` (default); `env-spec` (the variables it reads, as JSON); `routes` (the effective route
 * table for the current environment, longest prefix first, as JSON: the deploy tests compare it
 * with docker-compose and the Ingress).
 */
async function main(argv: string[]): Promise<number> {
  const [command = 'serve'] = argv;
  if (command === 'env-spec') {
    process.stdout.write(`${JSON.stringify(gatewayEnvSpec())}\n`);
    return 0;
  }
  const config = loadGatewayConfig();
  switch (command) {
    case 'serve':
      await startGateway(await createGateway(config), config);
      return -1;
    case 'routes':
      process.stdout.write(`${JSON.stringify(resolveRoutes(GATEWAY_ROUTES, config.upstreams))}\n`);
      return 0;
    default:
      process.stderr.write(`unknown command "${command}"; use serve, routes or env-spec\n`);
      return 2;
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    if (code >= 0) process.exit(code);
  },
  (e: unknown) => {
    if (e instanceof ConfigError) process.stderr.write(`gateway: ${e.message}\n`);
    else process.stderr.write(`gateway: ${e instanceof Error ? (e.stack ?? e.message) : String(e)}\n`);
    process.exit(1);
  },
);

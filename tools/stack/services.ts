/**
 * Prints every process of the local stack, one per line: `name instance port kind`, the gateway last.
 * The stack scripts read the table from the contracts library rather than keeping a second list that
 * would fall behind, and the instances' ports from libs/gateway/src/instances.ts, which renders the
 * gateway's upstreams for the same instances.
 *
 *   tsx tools/stack/services.ts [--instances N]     N instances (1 to 4, default 1) of the auth, resource
 *                                                    and webhook services; settings-web and the gateway
 *                                                    stay one. Ports before STACK_PORT_OFFSET.
 */
import { GATEWAY_PORT, SERVICES } from '../../libs/contracts/src/platform';
import { stackInstances } from '../../libs/gateway/src/instances';

const flag = process.argv.indexOf('--instances');
const instances = flag < 0 ? 1 : Number(process.argv[flag + 1]);
try {
  for (const { name, instance, port, kind } of stackInstances({ ...SERVICES, gateway: { port: GATEWAY_PORT, kind: 'gateway' } }, instances)) {
    process.stdout.write(`${name} ${instance} ${port} ${kind}\n`);
  }
} catch (e) {
  process.stderr.write(`services.ts: ${e instanceof Error ? e.message : String(e)}\n`);
  process.exitCode = 2;
}

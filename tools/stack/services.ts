/**
 * Prints the platform's services, one per line: `name port kind`. The stack scripts read the table
 * from the contracts library rather than keeping a second list that would fall behind.
 */
import { GATEWAY_PORT, SERVICES } from '../../libs/contracts/src/platform';

for (const [name, { port, kind }] of Object.entries(SERVICES)) process.stdout.write(`${name} ${port} ${kind}\n`);
process.stdout.write(`gateway ${GATEWAY_PORT} gateway\n`);

/**
 * The gateway's configuration, rendered from the platform table:
 *
 *   tsx libs/gateway/src/cli.ts render [--upstreams loopback|named] [--offset N] [--instances N] [--listen ADDR]
 *       [--status-listen ADDR] [--runtime-dir DIR] [--access-log PATH|off] [--error-log PATH]
 *       [--workers N|auto] [--proxy-bind ADDR] [--trace-sample-percent P] [--tls-proxy ADDR|CIDR]...
 *       [--hsts on|off] [--out FILE]
 *   tsx libs/gateway/src/cli.ts compose      the configuration docker-compose.yml mounts (deploy/compose/gateway.nginx.conf)
 *
 * `loopback`: every service on 127.0.0.1 at its port of SERVICES (+ offset), as tools/stack runs
 * them; `named`: every service by its name (compose, kube play). `--instances N` (loopback only, 1 to
 * MAX_INSTANCES): N instances of every service but settings-web, instance i at its port + 10 × (i − 1)
 * (src/instances.ts), as `tools/stack/start.sh --instances N` runs them. `--tls-proxy` (repeatable):
 * a load balancer in front that terminates TLS, whose X-Forwarded-Proto is believed; HSTS (DEFAULT_HSTS)
 * is then sent on what came over TLS, unless `--hsts off`.
 */
import { writeFileSync } from 'node:fs';
import { parseArgs } from 'node:util';
import { GATEWAY_PORT } from '@invoicing/contracts';
import { MAX_INSTANCES } from './instances';
import { composeConfig, loopbackUpstreams, namedUpstreams, NginxGatewayOptions, renderNginxConfig } from './nginx-config';

function main(argv: string[]): void {
  const [command, ...rest] = argv;
  if (command === 'compose') {
    process.stdout.write(composeConfig());
    return;
  }
  if (command !== 'render') {
    process.stderr.write('usage: cli.ts render [options] | cli.ts compose (see the header of libs/gateway/src/cli.ts)\n');
    process.exitCode = 64;
    return;
  }
  const { values } = parseArgs({
    args: rest,
    options: {
      upstreams: { type: 'string', default: 'loopback' },
      offset: { type: 'string', default: '0' },
      instances: { type: 'string', default: '1' },
      listen: { type: 'string', default: `127.0.0.1:${GATEWAY_PORT}` },
      'status-listen': { type: 'string' },
      'runtime-dir': { type: 'string', default: '/tmp/nginx' },
      'access-log': { type: 'string', default: 'off' },
      'error-log': { type: 'string', default: 'stderr' },
      workers: { type: 'string', default: '1' },
      'proxy-bind': { type: 'string' },
      'trace-sample-percent': { type: 'string' },
      'tls-proxy': { type: 'string', multiple: true },
      hsts: { type: 'string', default: 'on' },
      out: { type: 'string' },
    },
  });
  const offset = Number(values.offset);
  if (!Number.isInteger(offset) || offset < 0) throw new Error('--offset must be a whole number');
  if (values.upstreams !== 'loopback' && values.upstreams !== 'named') throw new Error('--upstreams must be loopback or named');
  const instances = Number(values.instances);
  if (!(Number.isInteger(instances) && instances >= 1 && instances <= MAX_INSTANCES)) throw new Error(`--instances must be a whole number from 1 to ${MAX_INSTANCES}`);
  if (instances > 1 && values.upstreams !== 'loopback') throw new Error('--instances needs --upstreams loopback');
  const workers = values.workers === 'auto' ? 'auto' : Number(values.workers);
  if (workers !== 'auto' && !(Number.isInteger(workers) && workers > 0)) throw new Error('--workers must be a positive number or auto');
  if (values.hsts !== 'on' && values.hsts !== 'off') throw new Error('--hsts must be on or off');
  const options: NginxGatewayOptions = {
    upstreams: values.upstreams === 'named' ? namedUpstreams() : loopbackUpstreams(offset, '127.0.0.1', instances),
    listen: values.listen as string,
    statusListen: values['status-listen'],
    runtimeDir: values['runtime-dir'] as string,
    accessLog: values['access-log'] === 'off' ? false : (values['access-log'] as string),
    errorLog: values['error-log'] as string,
    workerProcesses: workers,
    proxyBind: values['proxy-bind'],
    traceSamplePercent: values['trace-sample-percent'] === undefined ? undefined : Number(values['trace-sample-percent']),
    tlsProxies: values['tls-proxy'] ?? [],
    hsts: values.hsts === 'off' ? false : undefined,
  };
  const config = renderNginxConfig(options);
  if (values.out) writeFileSync(values.out, config);
  else process.stdout.write(config);
}

// Only when run, never when imported.
if (require.main === module) main(process.argv.slice(2));

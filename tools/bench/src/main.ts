/**
 * The platform's benchmark: our token endpoint, refresh rotation, guarded reads and revocation
 * propagation, side by side in one run with what people would pick instead (oidc-provider, Keycloak
 * when KEYCLOAK_URL is set) and with the floors (bare Fastify, Fastify + fast-jwt). Prints a table and
 * the ratios the performance targets are stated in; `--json FILE` also writes them for comparing
 * commits. Needs the stack of tools/stack/start.sh running. Asserts nothing: it measures.
 *
 *   npx nx run bench:run                       # everything (about 7 minutes)
 *   npx nx run bench:run --args="--json tmp/bench.json --seconds 5"
 */
import 'reflect-metadata';
import { ALL_SCOPES } from '@invoicing/contracts';
import { DEFAULT_TRACE_SAMPLE_PERCENT, loopbackUpstreams, prepareNginx } from '@invoicing/gateway';
import { writeFileSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { join } from 'node:path';
import { Figure, load } from './load';
import { setupKeycloak } from './peers/keycloak';
import {
  exchange,
  exchangeBody,
  jwtEnv,
  mainOf,
  refreshChains,
  requireStack,
  RESOURCE_SERVICES,
  RESOURCES,
  ROOT,
  seedObjects,
  serviceUrl,
  SettingsAccount,
  stackPid,
} from './platform';
import { measureCreates } from './creates';
import { startCreateFloor, startSecondInstances, startTokenAndReadFloors } from './instances';
import { rssMb, runBench, startProcess, stopAll } from './processes';
import { keyRevokeTrials, reuseTrials, summarize } from './revocation';
import { Report } from './report';

interface Args {
  json: string | null;
  seconds: number;
  warmup: number;
  trials: number;
  sessions: number;
}

function parseArgs(argv: string[]): Args {
  const args: Args = {
    json: null,
    seconds: Number(process.env.BENCH_SECONDS ?? 10),
    warmup: Number(process.env.BENCH_WARMUP_SECONDS ?? 3),
    trials: Number(process.env.BENCH_TRIALS ?? 50),
    sessions: Number(process.env.BENCH_SESSIONS ?? 50_000),
  };
  for (let i = 0; i < argv.length; i++) {
    const next = () => argv[++i];
    switch (argv[i]) {
      case '--json':
        args.json = next();
        break;
      case '--seconds':
        args.seconds = Number(next());
        break;
      case '--warmup':
        args.warmup = Number(next());
        break;
      case '--trials':
        args.trials = Number(next());
        break;
      case '--sessions':
        args.sessions = Number(next());
        break;
      default:
        throw new Error(`unknown argument ${argv[i]} (use --json FILE, --seconds N, --warmup N, --trials N, --sessions N)`);
    }
  }
  return args;
}

const LOGS = join(ROOT, 'tmp', 'bench');
/** Lists measured across 16 organizations beside the read floor: small rows, and large ones behind the per-organization gate. */
const LIST_ACROSS = RESOURCES.filter((r) => r === 'products' || r === 'invoices');

async function main(): Promise<void> {
  const args = parseArgs(process.argv.slice(2));
  const report = new Report();
  const step = (s: string) => process.stderr.write(`bench: ${s}\n`);
  const measure = { seconds: args.seconds, warmupSeconds: args.warmup };

  await requireStack();
  report.note(`machine: ${cpus().length} cores (${cpus()[0]?.model ?? 'unknown'}), node ${process.version}; load from autocannon in this process, 16 connections, ${args.seconds} s after ${args.warmup} s of warm-up`);

  // Idle memory first, before anything has loaded the services.
  for (const name of ['auth-service', ...Object.values(RESOURCE_SERVICES), 'gateway']) {
    const pid = await stackPid(name);
    const mb = pid ? await rssMb(pid) : null;
    if (mb !== null) report.memory(name, mb);
  }

  step('creating keys and objects through the settings API and the resource services');
  const account = await SettingsAccount.signUp();
  const scopes = [...ALL_SCOPES];
  const [keyDirect, keyGateway, keyRefresh, keyFresh, keyBusy, keyReuse, keyFloor] = await Promise.all(
    Array.from({ length: 7 }, () => account.createKey(scopes)),
  );
  const main = await exchange(keyDirect);
  const ids = await seedObjects(main.access_token, 25);

  step('starting second instances of the resource services (rate limit lifted) and the baselines');
  const { owners, second } = await startSecondInstances(LOGS);
  const baseline = join(__dirname, 'peers', 'baseline-server.mjs');
  await startProcess('node', [baseline], { env: { PORT: '4201', MODE: 'hello' }, logFile: join(LOGS, 'baseline-hello.log') });
  await startProcess('node', [baseline], { env: { PORT: '4202', MODE: 'jwt', ...jwtEnv }, logFile: join(LOGS, 'baseline-jwt.log') });
  // The hand-written floors (baseline-server.mjs): our token exchange and product reads with nothing
  // but Fastify, pg, ioredis and fast-jwt underneath, against the same Postgres and Redis.
  const floors = await startTokenAndReadFloors(LOGS, keyFloor);
  const floorCreate = await startCreateFloor(LOGS);
  // Tracing on: a second auth service and a second product service (rate limit lifted) exporting
  // every span over OTLP/HTTP to a sink that keeps nothing (peers/otlp-sink.mjs).
  const sink = await startProcess('node', [join(__dirname, 'peers', 'otlp-sink.mjs')], { env: { PORT: '4220' }, logFile: join(LOGS, 'otlp-sink.log') });
  const traced = { OTEL_EXPORTER_OTLP_ENDPOINT: String(sink.info.url) };
  const tracedAuth = 'http://127.0.0.1:3951';
  const tracedProducts = 'http://127.0.0.1:3955';
  await startProcess('node', [mainOf('auth-service'), 'serve'], {
    env: { ...owners, ...traced, OTEL_SERVICE_NAME: 'auth-service', PORT: '3951', TRUSTED_PROXIES: '127.0.0.2', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
    logFile: join(LOGS, 'auth-service-traced.log'),
    readyUrl: `${tracedAuth}/health/ready`,
  });
  await startProcess('node', [mainOf('product-service'), 'serve'], {
    env: { ...owners, ...traced, OTEL_SERVICE_NAME: 'product-service', PORT: '3955', RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000', TRUSTED_PROXIES: '127.0.0.2', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
    logFile: join(LOGS, 'product-service-traced.log'),
    readyUrl: `${tracedProducts}/health/ready`,
  });
  // Two gateways with the configuration the stack runs (libs/gateway, one nginx worker), one in front
  // of the untraced instances measured directly (the stack's auth service, the second product
  // service), one in front of the traced ones: "through the gateway" and "tracing on" are each one
  // change from the direct figure.
  const gateway = async (port: number, auth: string, products: string, traceSamplePercent?: number) => {
    const { command, args } = prepareNginx(join(LOGS, `gateway-${port}`), {
      upstreams: { ...loopbackUpstreams(), 'auth-service': new URL(auth).host, 'product-service': new URL(products).host },
      listen: `127.0.0.1:${port}`,
      proxyBind: '127.0.0.2',
      traceSamplePercent,
    });
    await startProcess(command, args, { logFile: join(LOGS, `gateway-${port}.log`), readyUrl: `http://127.0.0.1:${port}/health/ready` });
    return `http://127.0.0.1:${port}`;
  };
  const gatewayPlain = await gateway(4210, serviceUrl('auth-service'), second.products);
  // In front of the traced instances: every request sampled, and the gateway's default share.
  const gatewayTraced = await gateway(4211, tracedAuth, tracedProducts, 100);
  const gatewaySampled = await gateway(4212, tracedAuth, tracedProducts);
  // The auth service on the Redis Cluster with one replica per primary (tools/infra/redis-cluster.sh),
  // without and with every session write waiting for its replica (ADR 0030).
  const clusterAuth = async (port: number, waitReplicas: number) => {
    await startProcess('node', [mainOf('auth-service'), 'serve'], {
      env: {
        ...owners,
        PORT: String(port),
        REDIS_URL: 'redis-cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003',
        REDIS_WAIT_REPLICAS: String(waitReplicas),
        TRUSTED_PROXIES: '127.0.0.2',
        LOG_LEVEL: process.env.LOG_LEVEL ?? 'info',
      },
      logFile: join(LOGS, `auth-service-cluster-wait${waitReplicas}.log`),
      readyUrl: `http://127.0.0.1:${port}/health/ready`,
    });
    return `http://127.0.0.1:${port}`;
  };
  const authCluster = await clusterAuth(3952, 0);
  const authClusterWait = await clusterAuth(3953, 1);
  const oidc = await startProcess('node', [join(__dirname, 'peers', 'oidc-provider-server.mjs')], {
    env: { PORT: '4100' },
    logFile: join(LOGS, 'oidc-provider.log'),
  });
  const bearer = { authorization: `Bearer ${main.access_token}` };

  step('baselines');
  report.load('bare Fastify GET /hello', 'hello', await load({ url: 'http://127.0.0.1:4201/hello', ...measure }));
  report.load('Fastify + fast-jwt HS256 GET /hello', 'jwt', await load({ url: 'http://127.0.0.1:4202/hello', headers: bearer, ...measure }));
  report.load('floor: token exchange by hand (Fastify, SHA-256, one Redis script, fast-jwt)', 'floorToken', await load({
    url: `${floors.token}/api/v1/auth/token`, method: 'POST', headers: { 'content-type': 'application/json' }, body: exchangeBody(keyFloor), ...measure,
  }));
  report.load('floor: GET product by id by hand (Fastify, fast-jwt, one pg query)', 'floorGet', await load({
    url: `${floors.read}/api/v1/products/${ids.products}`, headers: bearer, ...measure,
  }));
  report.load('floor: list of 20 products by hand (Fastify, fast-jwt, one pg query)', 'floorList', await load({
    url: `${floors.read}/api/v1/products`, headers: bearer, ...measure,
  }));

  step('peers');
  const o = oidc.info as { token_endpoint: string; client_id: string; client_secret: string; scope: string };
  report.load('oidc-provider client_credentials (HS256 JWT)', 'oidc', await load({
    url: o.token_endpoint,
    method: 'POST',
    headers: {
      'content-type': 'application/x-www-form-urlencoded',
      authorization: `Basic ${Buffer.from(`${o.client_id}:${o.client_secret}`).toString('base64')}`,
    },
    body: `grant_type=client_credentials&scope=${encodeURIComponent(o.scope)}`,
    ...measure,
  }));
  if (process.env.KEYCLOAK_URL) {
    const kc = await setupKeycloak(process.env.KEYCLOAK_URL);
    // Keycloak's JIT needs longer than Node's to settle.
    await load({ url: kc.tokenEndpoint, method: 'POST', headers: kcHeaders(kc), body: 'grant_type=client_credentials', seconds: 10 });
    report.load('Keycloak client_credentials (HS256)', 'keycloak', await load({
      url: kc.tokenEndpoint,
      method: 'POST',
      headers: kcHeaders(kc),
      body: 'grant_type=client_credentials',
      ...measure,
    }));
  } else {
    report.note('Keycloak: not measured (set KEYCLOAK_URL; see tools/bench/README.md)');
  }

  step('our token endpoint');
  const tokenPath = '/api/v1/auth/token';
  const json = { 'content-type': 'application/json' };
  report.load('POST /api/v1/auth/token (client_credentials), direct', 'token', await load({
    url: serviceUrl('auth-service') + tokenPath, method: 'POST', headers: json, body: exchangeBody(keyDirect), ...measure,
  }));
  report.load('POST /api/v1/auth/token through the gateway (nginx)', 'tokenGateway', await load({
    url: gatewayPlain + tokenPath, method: 'POST', headers: json, body: exchangeBody(keyGateway), ...measure,
  }));
  report.load('POST /api/v1/auth/token through the gateway, tracing on, every request sampled', 'tokenTraced', await load({
    url: gatewayTraced + tokenPath, method: 'POST', headers: json, body: exchangeBody(keyGateway), ...measure,
  }));
  report.load(`POST /api/v1/auth/token through the gateway, tracing on, ${DEFAULT_TRACE_SAMPLE_PERCENT} % sampled (the default)`, 'tokenSampled', await load({
    url: gatewaySampled + tokenPath, method: 'POST', headers: json, body: exchangeBody(keyGateway), ...measure,
  }));

  const refreshChainsOf = async (base: string) => load(await refreshChains(keyRefresh, base, measure));
  report.load('POST /api/v1/auth/refresh (16 chains of rotation)', 'refresh', await refreshChainsOf(serviceUrl('auth-service')));

  step('on a Redis Cluster with replicas, without and with WAIT');
  report.load('POST /api/v1/auth/token, Redis Cluster with replicas, no WAIT', 'tokenCluster', await load({
    url: authCluster + tokenPath, method: 'POST', headers: json, body: exchangeBody(keyDirect), ...measure,
  }));
  report.load('POST /api/v1/auth/token, Redis Cluster, WAIT for one replica', 'tokenClusterWait', await load({
    url: authClusterWait + tokenPath, method: 'POST', headers: json, body: exchangeBody(keyDirect), ...measure,
  }));
  report.load('POST /api/v1/auth/refresh, Redis Cluster with replicas, no WAIT', 'refreshCluster', await refreshChainsOf(authCluster));
  report.load('POST /api/v1/auth/refresh, Redis Cluster, WAIT for one replica', 'refreshClusterWait', await refreshChainsOf(authClusterWait));

  step(`a key holding ${args.sessions.toLocaleString('en')} live sessions`);
  const seeding = await load({
    url: serviceUrl('auth-service') + tokenPath, method: 'POST', headers: json, body: exchangeBody(keyBusy), seconds: 600, amount: args.sessions,
  });
  report.note(`seeded ${seeding.total.toLocaleString('en')} sessions on one key at ${Math.round(seeding.rps)}/s (${seeding.unexpected} refused)`);
  report.load('token exchange, fresh key (same moment as the next line)', 'tokenFresh', await load({
    url: serviceUrl('auth-service') + tokenPath, method: 'POST', headers: json, body: exchangeBody(keyFresh), ...measure,
  }));
  report.load(`token exchange, key already holding ${args.sessions.toLocaleString('en')} live sessions`, 'tokenBusy', await load({
    url: serviceUrl('auth-service') + tokenPath, method: 'POST', headers: json, body: exchangeBody(keyBusy), ...measure,
  }));

  step('guarded reads (second instances, rate limit lifted)');
  report.load('GET /api/v1/invoices with a malformed token (401 path)', 'unauthorized', await load({
    url: `${second.invoices}/api/v1/invoices`, headers: { authorization: 'Bearer abc' }, expect: 401, ...measure,
  }));
  for (const resource of RESOURCES) {
    report.load(`GET /api/v1/${resource}/{id}`, `get:${resource}`, await load({ url: `${second[resource]}/api/v1/${resource}/${ids[resource]}`, headers: bearer, ...measure }));
    report.load(`GET /api/v1/${resource} (list of 20)`, `list:${resource}`, await load({ url: `${second[resource]}/api/v1/${resource}`, headers: bearer, ...measure }));
  }

  report.load('GET /api/v1/products/{id} through the gateway (nginx)', 'getGateway', await load({
    url: `${gatewayPlain}/api/v1/products/${ids.products}`, headers: bearer, ...measure,
  }));
  report.load('GET /api/v1/products/{id} through the gateway, tracing on, every request sampled', 'getTraced', await load({
    url: `${gatewayTraced}/api/v1/products/${ids.products}`, headers: bearer, ...measure,
  }));
  report.load(`GET /api/v1/products/{id} through the gateway, tracing on, ${DEFAULT_TRACE_SAMPLE_PERCENT} % sampled (the default)`, 'getSampled', await load({
    url: `${gatewaySampled}/api/v1/products/${ids.products}`, headers: bearer, ...measure,
  }));

  const orgs = await measureCreates(report, (resource) => second[resource], floorCreate, measure, step);

  // Lists across 16 organizations (each has its seeded objects), ours and the floor's, for the
  // resource with small rows and the one with large ones (invoices: the per-organization gate).
  step('lists across 16 organizations');
  const acrossOrganizations = () => {
    let n = 0;
    return () => ({ body: '', headers: { authorization: `Bearer ${orgs[n++ % orgs.length].token}` } });
  };
  for (const resource of LIST_ACROSS) {
    report.load(`GET /api/v1/${resource} (list of 20), 16 organizations`, `list:${resource}:many`, await load({ url: `${second[resource]}/api/v1/${resource}`, method: 'GET', next: acrossOrganizations(), ...measure }));
    report.load(`floor: GET /api/v1/${resource} list of 20 by hand, 16 organizations`, `floorList:${resource}:many`, await load({ url: `${floors.read}/api/v1/${resource}`, method: 'GET', next: acrossOrganizations(), ...measure }));
  }

  step(`revocation propagation (${args.trials} trials each)`);
  report.revocation('refresh-token reuse', summarize(await reuseTrials(keyReuse, second, args.trials)));
  report.revocation('key revoked in the settings area', summarize(await keyRevokeTrials(account, scopes, second, args.trials)));

  await stopAll();
  report.note(`tracing on: ${(await readFile(join(LOGS, 'otlp-sink.log'), 'utf8').catch(() => '')).trim().split('\n').pop() ?? 'the sink reported nothing'}`);
  process.stdout.write(report.render());
  if (args.json) {
    writeFileSync(args.json, JSON.stringify(report.toJson(), null, 2));
    process.stderr.write(`bench: wrote ${args.json}\n`);
  }
}

function kcHeaders(kc: { clientId: string; clientSecret: string }): Record<string, string> {
  return {
    'content-type': 'application/x-www-form-urlencoded',
    authorization: `Basic ${Buffer.from(`${kc.clientId}:${kc.clientSecret}`).toString('base64')}`,
  };
}

runBench(main);

export type { Figure };

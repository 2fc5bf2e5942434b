import { Resource, RESOURCE_MANIFEST, serviceUrlVariable } from '@invoicing/contracts';
import { join } from 'node:path';
import { DEV_JWT_KEYS } from '@invoicing/auth-guard';
import { ApiKey, jwtEnv, mainOf, RESOURCE_SERVICES, RESOURCES, serviceUrl } from './platform';
import { startProcess } from './processes';

/** Second instances of the resource services, with the per-key rate limit lifted, sit here. */
const SECOND_INSTANCE_PORT_SHIFT = 100;

/**
 * A second instance of every resource service beside the stack's, with the per-key rate limit
 * lifted so that loads measure the code path, not the limiter; references go to the stack's owners.
 */
export async function startSecondInstances(logs: string): Promise<{ owners: Record<string, string>; second: Record<Resource, string> }> {
  const owners = Object.fromEntries(Object.values(RESOURCE_SERVICES).map((s) => [serviceUrlVariable(s), serviceUrl(s)]));
  const second = {} as Record<Resource, string>;
  await Promise.all(
    RESOURCES.map(async (resource) => {
      const service = RESOURCE_SERVICES[resource];
      const port = Number(new URL(serviceUrl(service)).port) + SECOND_INSTANCE_PORT_SHIFT;
      second[resource] = `http://127.0.0.1:${port}`;
      await startProcess('node', [mainOf(service), 'serve'], {
        env: { ...owners, PORT: String(port), RATE_LIMIT_PER_SECOND: '1000000', RATE_LIMIT_BURST: '1000000', LOG_LEVEL: process.env.LOG_LEVEL ?? 'info' },
        logFile: join(logs, `${service}-2.log`),
        readyUrl: `${second[resource]}/health/ready`,
      });
    }),
  );
  return { owners, second };
}

/**
 * The database URL a hand-written floor connects with: the service's own application role (as our
 * service does), or `FLOOR_<SCHEMA>_DATABASE_URL` when set.
 */
export function floorDatabaseUrl(schema: 'auth' | Resource): string {
  const role = schema === 'auth' ? schema : RESOURCE_MANIFEST[schema].kind;
  return process.env[`FLOOR_${schema.toUpperCase()}_DATABASE_URL`] ?? `postgres://${role}_app:${role}_app_dev@127.0.0.1:5432/invoicing`;
}

/** The hand-written create floor (peers/baseline-server.mjs MODE=create) on 4205; its URL. */
export async function startCreateFloor(logs: string): Promise<string> {
  await startProcess('node', [BASELINE], {
    env: {
      PORT: '4205',
      MODE: 'create',
      ...jwtEnv,
      CLIENTS_DATABASE_URL: floorDatabaseUrl('clients'),
      INVOICES_DATABASE_URL: floorDatabaseUrl('invoices'),
    },
    logFile: join(logs, 'floor-create.log'),
  });
  return 'http://127.0.0.1:4205';
}

const BASELINE = join(__dirname, 'peers', 'baseline-server.mjs');

/**
 * The hand-written floors of the token exchange (4203: `key`'s row loaded once, one Redis script,
 * fast-jwt) and of the product and invoice reads (4204: fast-jwt, one pg query), beside the stack
 * (peers/baseline-server.mjs MODE=token and MODE=read).
 */
export async function startTokenAndReadFloors(logs: string, key: ApiKey): Promise<{ token: string; read: string }> {
  await startProcess('node', [BASELINE], {
    env: { PORT: '4203', MODE: 'token', ...jwtEnv, JWT_KEYS: process.env.JWT_KEYS ?? DEV_JWT_KEYS, FLOOR_CLIENT_ID: key.clientId, DATABASE_URL: floorDatabaseUrl('auth') },
    logFile: join(logs, 'floor-token.log'),
  });
  await startProcess('node', [BASELINE], {
    env: { PORT: '4204', MODE: 'read', ...jwtEnv, DATABASE_URL: floorDatabaseUrl('products'), INVOICES_DATABASE_URL: floorDatabaseUrl('invoices') },
    logFile: join(logs, 'floor-read.log'),
  });
  return { token: 'http://127.0.0.1:4203', read: 'http://127.0.0.1:4204' };
}

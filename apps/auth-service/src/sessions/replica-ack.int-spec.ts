import { parsePublicId } from '@invoicing/contracts';
import Redis from 'ioredis';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';
import { keySlot } from './key-slot';

/**
 * REDIS_WAIT_REPLICAS on the real Redis Cluster with replicas (`tools/infra/redis-cluster.sh`: three
 * primaries, one replica each; ADR 0030). A session write is acknowledged only once a replica holds
 * it: with the replica of the key's primary frozen (SIGSTOP, so it neither copies nor acknowledges),
 * an exchange and a refresh answer 503 and hand nothing out; thawed, they work again. The same
 * frozen replica under an instance that does not wait shows what the wait is for: that instance
 * hands the rotation out although no replica has it.
 */
const CLUSTER_URL = 'redis-cluster://127.0.0.1:7001,127.0.0.1:7002,127.0.0.1:7003';

let waiting: AuthTestApp;
let notWaiting: AuthTestApp;
let seed: Redis;

type Key = Awaited<ReturnType<AuthTestApp['createKey']>>;

beforeAll(async () => {
  seed = new Redis({ host: '127.0.0.1', port: 7001, maxRetriesPerRequest: 1 });
  waiting = await startAuthTestApp({ REDIS_URL: CLUSTER_URL, REDIS_WAIT_REPLICAS: '1', REDIS_WAIT_TIMEOUT_MS: '200' });
  notWaiting = await startAuthTestApp({ REDIS_URL: CLUSTER_URL, REDIS_KEY_PREFIX: waiting.config.REDIS_KEY_PREFIX });
});

afterAll(async () => {
  await waiting?.close();
  await notWaiting?.close();
  seed?.disconnect();
});

const exchange = (app: AuthTestApp, key: Key) =>
  postJson(`${app.baseUrl}/api/v1/auth/token`, { client_id: key.clientId, client_secret: key.clientSecret, grant_type: 'client_credentials' });
const refresh = (app: AuthTestApp, refreshToken: string) => postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: refreshToken });

/** The pid of the replica of the primary that serves the sessions of `key` (their hash tag's slot). */
async function replicaPidOf(app: AuthTestApp, key: Key): Promise<number> {
  const slot = keySlot(`${app.config.REDIS_KEY_PREFIX}sess:{${parsePublicId('key', key.id) as string}}`);
  const slots = (await seed.cluster('SLOTS')) as unknown as Array<[number, number, ...Array<[string, number, string]>]>;
  const range = slots.find(([from, to]) => slot >= from && slot <= to);
  if (!range || range.length < 4) throw new Error(`slot ${slot} has no replica: run bash tools/infra/redis-cluster.sh start (3 primaries, 1 replica each)`);
  const [host, port] = range[3] as [string, number, string];
  const replica = new Redis({ host, port, maxRetriesPerRequest: 1 });
  try {
    const info = await replica.info('server');
    return Number(/process_id:(\d+)/.exec(info)![1]);
  } finally {
    replica.disconnect();
  }
}

/** Runs `during` with the replica frozen, for at most a second (the cluster would start to fail it over at 3 s). */
async function withReplicaFrozen<T>(pid: number, during: () => Promise<T>): Promise<T> {
  process.kill(pid, 'SIGSTOP');
  try {
    return await during();
  } finally {
    process.kill(pid, 'SIGCONT');
  }
}

it('acknowledges an exchange and a rotation only once a replica holds them', async () => {
  const key = await waiting.createKey();
  const first = await exchange(waiting, key);
  expect(first.status).toBe(200);
  const pid = await replicaPidOf(waiting, key);

  const frozen = await withReplicaFrozen(pid, async () => {
    const started = Date.now();
    const rotation = await refresh(waiting, first.body.refresh_token as string);
    return { rotation, ms: Date.now() - started };
  });
  // Nothing handed out: the client would exchange again (a lost refresh response is handled that way).
  expect(frozen.rotation.status).toBe(503);
  expect(frozen.rotation.body).toMatchObject({ error: 'temporarily_unavailable' });
  expect(frozen.rotation.body).not.toHaveProperty('refresh_token');
  expect(frozen.ms).toBeGreaterThanOrEqual(190);
  expect(frozen.ms).toBeLessThan(2000);

  // Thawed, the replica catches up and the platform works again with no restart.
  const again = await exchange(waiting, key);
  expect(again.status).toBe(200);
  const rotated = await refresh(waiting, again.body.refresh_token as string);
  expect(rotated.status).toBe(200);
});

it('without the wait, hands out a rotation that no replica holds (what a failover would forget)', async () => {
  const key = await notWaiting.createKey();
  const first = await exchange(notWaiting, key);
  expect(first.status).toBe(200);
  const pid = await replicaPidOf(notWaiting, key);
  const rotation = await withReplicaFrozen(pid, () => refresh(notWaiting, first.body.refresh_token as string));
  expect(rotation.status).toBe(200);
});

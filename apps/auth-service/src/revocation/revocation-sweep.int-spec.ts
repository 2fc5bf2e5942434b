import { parsePublicId } from '@invoicing/contracts';
import type Redis from 'ioredis';
import { randomUUID } from 'node:crypto';
import { DataSource } from 'typeorm';
import { uuidv7 } from 'uuidv7';
import { REDIS } from '../sessions/session-store';
import { AuthTestApp, postJson, startAuthTestApp } from '../testing/auth-test-app';
import { RevocationRelay } from './outbox-relay';
import { RevocationOutbox } from './revocation-outbox.service';

/**
 * The sweeper moves revocations left pending in Redis into the outbox (ADR 0004) without walking
 * the whole keyspace at every sweep: what this process failed to insert is retried from memory, and
 * records orphaned by a process that died are found by a bounded, resumable scan.
 */
let app: AuthTestApp;

beforeAll(async () => {
  app = await startAuthTestApp();
  // The app's own sweeps (one at start, then every 5 s) would take steps of the same scan between
  // this file's calls: stop the timer and let the start-up sweep finish.
  const relay = app.service.app.get(RevocationRelay) as unknown as { sweeper: NodeJS.Timeout; sweeping: Promise<void> | null };
  clearInterval(relay.sweeper);
  await relay.sweeping;
});

afterAll(async () => {
  await app.close();
});

const redis = () => app.service.app.get<Redis>(REDIS);
const outbox = () => app.service.app.get(RevocationOutbox);
const db = () => app.service.app.get(DataSource);
const pendKey = (keyId: string) => `${app.config.REDIS_KEY_PREFIX}pend:{${parsePublicId('key', keyId)}}`;
const outboxRowsNaming = async (text: string) =>
  Number((await db().query(`SELECT count(*)::int AS n FROM auth.outbox WHERE topic = 'auth.revocations.v1' AND payload::text LIKE $1`, [`%${text}%`]))[0].n);

it('retries from memory, without scanning, a revocation whose outbox insert failed', async () => {
  const key = await app.createKey();
  const pair = (await postJson(`${app.baseUrl}/api/v1/auth/token`, { grant_type: 'client_credentials', client_id: key.clientId, client_secret: key.clientSecret }))
    .body as { refresh_token: string };
  expect((await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: pair.refresh_token })).status).toBe(200);

  // Postgres refuses the outbox insert of the reuse detected next (as when it is down). The insert
  // itself is made to fail, not db.transaction: the relay's polling uses transactions too.
  const insert = jest
    .spyOn(outbox() as unknown as { insert: () => Promise<void> }, 'insert')
    .mockRejectedValueOnce(new Error('connection refused'));
  const reuse = await postJson(`${app.baseUrl}/api/v1/auth/refresh`, { refresh_token: pair.refresh_token });
  expect(reuse.status).toBe(400);
  expect(insert).toHaveBeenCalledTimes(1);
  insert.mockRestore();
  expect(await redis().llen(pendKey(key.id))).toBe(1);

  const scan = jest.spyOn(redis(), 'scan');
  try {
    expect(await outbox().sweep(0)).toBe(1);
    expect(scan).not.toHaveBeenCalled();
  } finally {
    scan.mockRestore();
  }
  expect(await redis().llen(pendKey(key.id))).toBe(0);
  expect(await outboxRowsNaming(key.id)).toBeGreaterThan(0);
});

it('finds a record orphaned by a dead process with a bounded scan that resumes where it stopped', async () => {
  const key = await app.createKey();
  const sessionId = `ses_${randomUUID().replace(/-/g, '')}`;
  // What a session script leaves when its process dies before the outbox insert.
  const orphan = JSON.stringify({
    event_id: uuidv7(),
    reason: 'refresh_token_reuse',
    session_ids: [sessionId],
    revoked_at: String(Date.now()),
    org: parsePublicId('org', key.organizationPublicId),
    cid: key.clientId,
  });
  await redis().rpush(pendKey(key.id), orphan);

  const scan = jest.spyOn(redis(), 'scan');
  try {
    // Each sweep takes at most the steps it is given; the Redis of a developer machine may hold
    // many keys besides this test's, so sweep until a pass has gone by (bounded here too).
    let moved = 0;
    for (let sweeps = 0; sweeps < 2000 && (await redis().llen(pendKey(key.id))) > 0; sweeps++) {
      const before = scan.mock.calls.length;
      moved += await outbox().sweep(2);
      expect(scan.mock.calls.length - before).toBeLessThanOrEqual(2);
      // Resumes: a step starts from the cursor the previous one returned (or '0' after a full pass).
      const results = scan.mock.results.slice(before);
      const calls = scan.mock.calls.slice(before);
      for (let i = 1; i < calls.length; i++) expect(String(calls[i][0])).toBe((await results[i - 1].value)[0]);
    }
    expect(moved).toBeGreaterThanOrEqual(1);
  } finally {
    scan.mockRestore();
  }
  expect(await redis().llen(pendKey(key.id))).toBe(0);
  expect(await outboxRowsNaming(sessionId)).toBe(1);
});

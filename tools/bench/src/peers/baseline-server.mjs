// Baselines the benchmark compares our services with, each started as its own process:
//   MODE=hello  bare Fastify, GET /hello -> {"hello":"world"}
//   MODE=jwt    Fastify + fast-jwt: GET /hello verifies an HS256 Bearer token (verifier cache on,
//               as in our guard) and answers 401 without one; the floor of "a guarded route".
// The hand-written floors: the same work as our endpoints with nothing but the libraries underneath
// (no Nest, no throttle, no key cache invalidation, no logging, no outbox), so a row of ours over its
// floor says what everything else costs.
//   MODE=token  POST /api/v1/auth/token (JSON client_credentials): the key's row loaded once from
//               Postgres (FLOOR_CLIENT_ID), SHA-256 of the secret compared in constant time, one Redis
//               script storing the session and its refresh-token pointer, an HS256 JWT by fast-jwt.
//   MODE=read   GET /api/v1/products/:id and GET /api/v1/products (20 of the newest, has_more):
//               fast-jwt verification (cache on) and scope check, one pg query by the organization.
// Prints `READY {"port":N}` once listening; exits on SIGTERM.
import Fastify from 'fastify';
import { createSigner, createVerifier } from 'fast-jwt';
import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';

/** `uuid` <-> `prefix_<32 hex>`, as libs/contracts/src/ids.ts. */
const publicId = (prefix, uuid) => `${prefix}_${uuid.replace(/-/g, '')}`;
function uuidOf(prefix, value) {
  const m = new RegExp(`^${prefix}_([0-9a-f]{8})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{4})([0-9a-f]{12})$`).exec(value ?? '');
  return m ? m.slice(1).join('-') : null;
}

const port = Number(process.env.PORT ?? 4200);
const mode = process.env.MODE ?? 'hello';
const app = Fastify({ logger: false });

if (mode === 'jwt') {
  const key = Buffer.from(process.env.JWT_SECRET_B64URL ?? '', 'base64url');
  const verify = createVerifier({
    key,
    algorithms: ['HS256'],
    allowedIss: process.env.JWT_ISSUER,
    allowedAud: process.env.JWT_AUDIENCE,
    cache: 10000,
  });
  app.get('/hello', async (request, reply) => {
    const header = request.headers.authorization ?? '';
    try {
      const claims = verify(header.slice(7));
      return { hello: claims.sub };
    } catch {
      return reply.code(401).send({ error: 'invalid_token' });
    }
  });
} else if (mode === 'token') {
  await tokenFloor();
} else if (mode === 'read') {
  await readFloor();
} else {
  app.get('/hello', async () => ({ hello: 'world' }));
}


async function tokenFloor() {
  const { default: pg } = await import('pg');
  const { default: Redis } = await import('ioredis');
  const db = new pg.Client({ connectionString: process.env.DATABASE_URL });
  await db.connect();
  const { rows } = await db.query('SELECT id, organization_id, client_id, secret_hash, scopes FROM auth.api_keys WHERE client_id = $1', [process.env.FLOOR_CLIENT_ID]);
  await db.end();
  const keys = new Map(rows.map((r) => [r.client_id, r]));
  const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/0', { enableAutoPipelining: true });
  const STORE = `redis.call('HSET', KEYS[1], 'key', ARGV[1], 'org', ARGV[2], 'scope', ARGV[3], 'rt', ARGV[4])
redis.call('EXPIRE', KEYS[1], ARGV[5])
redis.call('SET', KEYS[2], ARGV[6], 'EX', ARGV[5])
return 1`;
  const sha = await redis.script('LOAD', STORE);
  const [kid, secret] = (process.env.JWT_KEYS ?? '').split(',')[0].split('=');
  const sign = createSigner({ key: Buffer.from(secret, 'base64url'), algorithm: 'HS256', kid, header: { typ: 'at+jwt' } });
  app.post('/api/v1/auth/token', async (request, reply) => {
    const body = request.body ?? {};
    if (body.grant_type !== 'client_credentials') return reply.code(400).send({ error: 'unsupported_grant_type' });
    const key = keys.get(body.client_id);
    const presented = createHash('sha256').update(String(body.client_secret ?? '')).digest();
    if (!key || !timingSafeEqual(presented, key.secret_hash)) return reply.code(401).send({ error: 'invalid_client' });
    const sid = randomBytes(16).toString('hex');
    const refresh = `rt_live_${randomBytes(32).toString('base64url')}`;
    const scope = key.scopes.join(' ');
    await redis.evalsha(sha, 2, `floor:s:${sid}`, `floor:p:${createHash('sha256').update(refresh).digest('base64url')}`, key.id, key.organization_id, scope, refresh, 2592000, sid);
    const iat = Math.floor(Date.now() / 1000);
    const token = sign({
      iss: process.env.JWT_ISSUER, aud: process.env.JWT_AUDIENCE, sub: publicId('key', key.id), client_id: key.client_id,
      org_id: publicId('org', key.organization_id), scope, sid: `ses_${sid}`, jti: randomUUID(), iat, exp: iat + 3600,
    });
    reply.header('cache-control', 'no-store');
    return { access_token: token, token_type: 'Bearer', expires_in: 3600, refresh_token: refresh, scope };
  });
}

async function readFloor() {
  const { default: pg } = await import('pg');
  const pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 10 });
  const query = async (sql, params) => (await pool.query(sql, params)).rows;
  const verify = createVerifier({
    key: Buffer.from(process.env.JWT_SECRET_B64URL ?? '', 'base64url'),
    algorithms: ['HS256'], allowedIss: process.env.JWT_ISSUER, allowedAud: process.env.JWT_AUDIENCE, cache: 10000,
  });
  const caller = (request) => {
    try {
      const claims = verify((request.headers.authorization ?? '').slice(7));
      return claims.scope.split(' ').includes('read:products') ? uuidOf('org', claims.org_id) : null;
    } catch {
      return null;
    }
  };
  const view = (r) => ({
    object: 'product', id: publicId('prd', r.id), name: r.name, description: r.description, sku: r.sku,
    unit_price: Number(r.unit_price), currency: r.currency, tax_rate_bps: r.tax_rate_bps, created_at: r.created_at.toISOString(),
  });
  const COLUMNS = 'id, name, description, sku, unit_price, currency, tax_rate_bps, created_at';
  app.get('/api/v1/products/:id', async (request, reply) => {
    const org = caller(request);
    if (!org) return reply.code(401).send({ error: 'invalid_token' });
    const id = uuidOf('prd', request.params.id);
    const rows = id ? await query(`SELECT ${COLUMNS} FROM products.products WHERE organization_id = $1 AND id = $2`, [org, id]) : [];
    return rows.length ? view(rows[0]) : reply.code(404).send({ status: 404 });
  });
  app.get('/api/v1/products', async (request, reply) => {
    const org = caller(request);
    if (!org) return reply.code(401).send({ error: 'invalid_token' });
    const rows = await query(`SELECT ${COLUMNS} FROM products.products WHERE organization_id = $1 ORDER BY id DESC LIMIT 21`, [org]);
    return { object: 'list', data: rows.slice(0, 20).map(view), has_more: rows.length > 20 };
  });
}

await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`READY ${JSON.stringify({ port })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));

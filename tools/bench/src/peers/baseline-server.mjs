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
//   MODE=read   GET /api/v1/products/:id, GET /api/v1/products and GET /api/v1/invoices (20 of the
//               newest, has_more): fast-jwt verification (cache on) and scope check, one pg query by
//               the organization.
//   MODE=create POST /api/v1/clients and POST /api/v1/invoices (Idempotency-Key required): fast-jwt
//               verification and scope check, then one Postgres statement that stores the key with
//               the response, the row and its outbox event together (one commit); the invoice's also
//               checks its client in the read model, computes two lines' totals and takes the next
//               number of the organization's gapless sequence (the counter row, locked to the commit).
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
} else if (mode === 'create') {
  await createFloor();
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
  // The invoices' list: the same, with the invoice's columns and view (its lines included).
  const invoices = new pg.Pool({ connectionString: process.env.INVOICES_DATABASE_URL, max: 10 });
  const invoiceView = (r) => ({
    object: 'invoice', id: publicId('inv', r.id), created_at: r.created_at.toISOString(), client_id: publicId('cli', r.client_id), number: r.number,
    currency: r.currency, issue_date: r.issue_date, due_date: r.due_date, status: r.status,
    line_items: r.line_items.map((l) => ({ description: l.description, quantity: Number(l.quantity_milli) / 1000, unit_price: l.unit_price, tax_rate_bps: l.tax_rate_bps, product_id: l.product_id ? publicId('prd', l.product_id) : null, amount: l.amount, tax: l.tax })),
    subtotal: Number(r.subtotal), tax_total: Number(r.tax_total), total: Number(r.total), amount_paid: Number(r.amount_paid),
    amount_due: Math.max(Number(r.total) - Number(r.amount_paid), 0), notes: r.notes,
  });
  app.get('/api/v1/invoices', async (request, reply) => {
    const claims = (() => {
      try {
        return verify((request.headers.authorization ?? '').slice(7));
      } catch {
        return null;
      }
    })();
    if (!claims || !claims.scope.split(' ').includes('read:invoices')) return reply.code(401).send({ error: 'invalid_token' });
    const { rows } = await invoices.query(
      `SELECT id, created_at, client_id, number, currency, to_char(issue_date, 'YYYY-MM-DD') AS issue_date, to_char(due_date, 'YYYY-MM-DD') AS due_date, status, line_items, subtotal, tax_total, total, amount_paid, notes
         FROM invoices.invoices WHERE organization_id = $1 ORDER BY id DESC LIMIT 21`,
      [uuidOf('org', claims.org_id)],
    );
    return { object: 'list', data: rows.slice(0, 20).map(invoiceView), has_more: rows.length > 20 };
  });
}

async function createFloor() {
  const { default: pg } = await import('pg');
  const clients = new pg.Pool({ connectionString: process.env.CLIENTS_DATABASE_URL, max: 10 });
  const invoices = new pg.Pool({ connectionString: process.env.INVOICES_DATABASE_URL, max: 10 });
  const verify = createVerifier({
    key: Buffer.from(process.env.JWT_SECRET_B64URL ?? '', 'base64url'),
    algorithms: ['HS256'], allowedIss: process.env.JWT_ISSUER, allowedAud: process.env.JWT_AUDIENCE, cache: 10000,
  });
  const caller = (request, scope) => {
    try {
      const claims = verify((request.headers.authorization ?? '').slice(7));
      return claims.scope.split(' ').includes(scope) ? { uuid: uuidOf('org', claims.org_id), id: claims.org_id } : null;
    } catch {
      return null;
    }
  };
  const hash = (body) => createHash('sha256').update(JSON.stringify(body)).digest('hex');
  const event = (service, type, view, org) => ({
    specversion: '1.0', id: randomUUID(), source: `/invoicing/${service}`, type, subject: view.id, time: view.created_at,
    datacontenttype: 'application/json', data: { organization_id: org, object: view },
  });

  app.post('/api/v1/clients', async (request, reply) => {
    const org = caller(request, 'write:clients');
    const key = request.headers['idempotency-key'];
    if (!org) return reply.code(401).send({ status: 401 });
    const b = request.body ?? {};
    if (typeof b.name !== 'string' || !key) return reply.code(422).send({ status: 422 });
    const id = randomUUID();
    const created_at = new Date().toISOString();
    const view = { object: 'client', id: publicId('cli', id), created_at, name: b.name, email: b.email ?? null, phone: null, tax_id: null, address: null, currency: b.currency ?? null };
    const { rows } = await clients.query(
      `WITH k AS (
         INSERT INTO clients.idempotency_keys (organization_id, key, request_hash, state, response_status, response_body, response_location, claimed_until)
         VALUES ($1, $2, $3, 'done', 201, $4, $5, now()) ON CONFLICT DO NOTHING RETURNING 1),
       r AS (INSERT INTO clients.clients (id, organization_id, name, email, currency, created_at) SELECT $6, $1, $7, $8, $9, $10 FROM k RETURNING id),
       o AS (INSERT INTO clients.outbox (id, topic, message_key, payload, created_at) SELECT $11, 'invoicing.domain.v1', $12, $13, now() FROM r RETURNING 1)
       SELECT (SELECT count(*) FROM o)::int AS created`,
      [org.uuid, key, hash(b), JSON.stringify(view), `/api/v1/clients/${view.id}`, id, b.name, b.email ?? null, b.currency ?? null, created_at,
        randomUUID(), view.id, JSON.stringify(event('client-service', 'invoicing.clients.client_created.v1', view, org.id))],
    );
    if (rows[0].created !== 1) return reply.code(409).send({ status: 409 });
    return reply.code(201).header('location', `/api/v1/clients/${view.id}`).send(view);
  });

  const half = (n, d) => (2n * n + d) / (2n * d);
  app.post('/api/v1/invoices', async (request, reply) => {
    const org = caller(request, 'write:invoices');
    const key = request.headers['idempotency-key'];
    if (!org) return reply.code(401).send({ status: 401 });
    const b = request.body ?? {};
    const client = uuidOf('cli', b.client_id);
    if (!client || !Array.isArray(b.line_items) || !key) return reply.code(422).send({ status: 422 });
    let subtotal = 0n;
    let taxTotal = 0n;
    const lines = b.line_items.map((l) => {
      const amount = half(BigInt(Math.round(Number(l.quantity) * 1000)) * BigInt(l.unit_price), 1000n);
      const tax = half(amount * BigInt(l.tax_rate_bps ?? 0), 10000n);
      subtotal += amount;
      taxTotal += tax;
      return { description: l.description, quantity_milli: String(Math.round(Number(l.quantity) * 1000)), unit_price: l.unit_price, tax_rate_bps: l.tax_rate_bps ?? 0, product_id: null, amount: Number(amount), tax: Number(tax) };
    });
    const id = randomUUID();
    const created_at = new Date().toISOString();
    const issue = created_at.slice(0, 10);
    const view = {
      object: 'invoice', id: publicId('inv', id), created_at, client_id: b.client_id, number: null, currency: b.currency, issue_date: issue, due_date: null, status: 'open',
      line_items: lines.map((l) => ({ ...l, quantity: Number(l.quantity_milli) / 1000, quantity_milli: undefined })),
      subtotal: Number(subtotal), tax_total: Number(taxTotal), total: Number(subtotal + taxTotal), amount_paid: 0, amount_due: Number(subtotal + taxTotal), notes: null,
    };
    // The number is taken last, in the statement that writes everything: the counter row stays
    // locked only for this statement and the commit.
    const { rows } = await invoices.query(
      `WITH ref AS (SELECT 1 FROM invoices.known_objects WHERE kind = 'client' AND id = $6 AND organization_id = $1),
       n AS (
         INSERT INTO invoices.invoice_number_counters AS c (organization_id, last_value) SELECT $1, 1 FROM ref
         ON CONFLICT (organization_id) DO UPDATE SET last_value = c.last_value + 1 RETURNING 'INV-' || lpad(last_value::text, 6, '0') AS number),
       k AS (
         INSERT INTO invoices.idempotency_keys (organization_id, key, request_hash, state, response_status, response_body, response_location, claimed_until)
         SELECT $1, $2, $3, 'done', 201, jsonb_set($4::jsonb, '{number}', to_jsonb(n.number)), $5, now() FROM n ON CONFLICT DO NOTHING RETURNING response_body),
       r AS (
         INSERT INTO invoices.invoices (id, organization_id, client_id, number, currency, issue_date, line_items, subtotal, tax_total, total, created_at)
         SELECT $7, $1, $6, k.response_body->>'number', $8, $9, $10, $11, $12, $13, $14 FROM k RETURNING number),
       o AS (
         INSERT INTO invoices.outbox (id, topic, message_key, payload, created_at)
         SELECT $15, 'invoicing.domain.v1', $16, jsonb_set($17::jsonb, '{data,object,number}', to_jsonb(r.number)), now() FROM r RETURNING 1)
       SELECT (SELECT number FROM r) AS number, (SELECT count(*) FROM o)::int AS created`,
      [org.uuid, key, hash(b), JSON.stringify(view), `/api/v1/invoices/${view.id}`, client, id, b.currency, issue, JSON.stringify(lines),
        String(subtotal), String(taxTotal), String(subtotal + taxTotal), created_at,
        randomUUID(), view.id, JSON.stringify(event('invoice-service', 'invoicing.invoices.invoice_created.v1', view, org.id))],
    );
    if (rows[0].created !== 1) return reply.code(409).send({ status: 409 });
    return reply.code(201).header('location', `/api/v1/invoices/${view.id}`).send({ ...view, number: rows[0].number });
  });
}

await app.listen({ port, host: '127.0.0.1' });
process.stdout.write(`READY ${JSON.stringify({ port })}\n`);
process.on('SIGTERM', () => void app.close().then(() => process.exit(0)));

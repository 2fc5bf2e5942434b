/**
 * Creates, the write path integrations push their nightly syncs through: every resource created
 * with a distinct body and Idempotency-Key per request (as the SDK sends them), 16 connections, in one
 * organization and across 16, beside hand-written create floors (peers/baseline-server.mjs
 * MODE=create) in the same run, with the commits Postgres counted per create
 * (`pg_stat_database.xact_commit`, the idle rate subtracted). Prints through the Report; asserts
 * nothing.
 */
import { ALL_SCOPES, DOMAIN_OBJECT_KINDS, DomainObjectKind, idPrefixOf, RESOURCE_MANIFEST, Resource, RESOURCES } from '@invoicing/contracts';
import { randomUUID } from 'node:crypto';
import { Client } from 'pg';
import { Figure, load } from './load';
import type { Report } from './report';
import { call, exchange, SettingsAccount } from './platform';

/** One organization of the load: a token with every scope, and objects its creates may reference. */
export interface CreateOrganization {
  token: string;
  /** Ids of seeded objects by kind: the first client, product; several invoices (payments spread over them). */
  refs: Record<DomainObjectKind, string[]>;
}

const PLACEHOLDER = /^([a-z]{3})_\.\.\.$/;
const KIND_OF_PREFIX = new Map<string, DomainObjectKind>(DOMAIN_OBJECT_KINDS.map((k) => [idPrefixOf(k), k]));

/** Objects of each referenced kind per organization. */
const SEEDED = 16;

/**
 * The manifest's sample body of a resource, made distinct for the `n`th request: its references point
 * at the organization's seeded objects, its free-text fields (no format, pattern or enum; a SKU
 * among them, unique per organization) carry the request's number, and its lists hold two items.
 */
export function createBody(resource: Resource, n: number, org: CreateOrganization, tag = ''): Record<string, unknown> {
  const entry = RESOURCE_MANIFEST[resource];
  const properties = entry.createSchema.properties as Record<string, { type?: string; format?: string; pattern?: string; enum?: unknown; maxLength?: number }>;
  const body: Record<string, unknown> = {};
  for (const [field, value] of Object.entries(entry.sample.create as Record<string, unknown>)) {
    const placeholder = typeof value === 'string' ? PLACEHOLDER.exec(value) : null;
    const kind = placeholder ? KIND_OF_PREFIX.get(placeholder[1]) : undefined;
    const schema = properties[field] ?? {};
    if (kind) {
      const ids = org.refs[kind];
      body[field] = ids[n % ids.length];
    } else if (typeof value === 'string' && schema.type === 'string' && !schema.format && !schema.pattern && !schema.enum && (schema.maxLength ?? 0) >= 20) {
      body[field] = `${value} ${tag}${n}`;
    } else if (Array.isArray(value) && value.length > 0) {
      // Two items where the sample has one (an invoice of two lines): a create that computes per item.
      body[field] = [value[0], ...value];
    } else {
      body[field] = value;
    }
  }
  return body;
}

/**
 * A settings account per organization, a key with every scope, and `SEEDED` objects of every kind
 * some resource references (made with the same sample bodies, those referenced first), so that creates
 * spread their references: one invoice's payments, for one, are serialised by its running sum.
 */
export async function createOrganizations(count: number, base: (resource: Resource) => string): Promise<CreateOrganization[]> {
  const referenced = new Set(RESOURCES.flatMap((r) => RESOURCE_MANIFEST[r].references as readonly DomainObjectKind[]));
  // Kinds whose own references are seeded before them.
  const order: Resource[] = [];
  const pending = RESOURCES.filter((r) => referenced.has(RESOURCE_MANIFEST[r].kind));
  while (pending.length > 0) {
    const ready = pending.findIndex((r) => (RESOURCE_MANIFEST[r].references as readonly DomainObjectKind[]).every((k) => order.some((o) => RESOURCE_MANIFEST[o].kind === k)));
    if (ready < 0) throw new Error('the manifest has a cycle of references');
    order.push(...pending.splice(ready, 1));
  }
  return Promise.all(
    Array.from({ length: count }, async () => {
      const account = await SettingsAccount.signUp();
      const { access_token: token } = await exchange(await account.createKey([...ALL_SCOPES]));
      const org: CreateOrganization = { token, refs: {} as Record<DomainObjectKind, string[]> };
      for (const resource of order) {
        const ids: string[] = [];
        for (let i = 0; i < SEEDED; i++) {
          const r = await call(`${base(resource)}/api/v1/${resource}`, { method: 'POST', headers: { authorization: `Bearer ${token}` }, body: createBody(resource, i, org) });
          if (r.status !== 201) throw new Error(`seeding ${resource}: ${r.status} ${JSON.stringify(r.body)}`);
          ids.push(r.body.id as string);
        }
        org.refs[RESOURCE_MANIFEST[resource].kind] = ids;
      }
      return org;
    }),
  );
}

/** Commits of the platform's database, as Postgres counts them. */
export class CommitCounter {
  private constructor(private readonly db: Client) {}

  static async open(url = process.env.BENCH_DATABASE_URL ?? 'postgres://postgres@127.0.0.1:5432/invoicing'): Promise<CommitCounter> {
    const db = new Client({ connectionString: url });
    await db.connect();
    return new CommitCounter(db);
  }

  /** Transactions committed so far; waits out the statistics' flush interval first (about a second). */
  async commits(): Promise<number> {
    await new Promise((resolve) => setTimeout(resolve, 1500));
    const { rows } = await this.db.query<{ n: string }>(`SELECT xact_commit AS n FROM pg_stat_database WHERE datname = current_database()`);
    return Number(rows[0].n);
  }

  /** Commits a second with no load (the relays' polls, the services' readiness checks...). */
  async idleRate(seconds = 3): Promise<number> {
    const before = await this.commits();
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    return ((await this.commits()) - before) / (seconds + 1.5);
  }

  close(): Promise<void> {
    return this.db.end();
  }
}

export interface CreateFigure extends Figure {
  /** Commits per create, the idle rate subtracted. */
  commitsPerCreate: number;
}

/**
 * Loads `POST url` with a new body and Idempotency-Key per request, each from the next organization
 * of `orgs` in turn, and counts the commits it caused.
 */
export async function loadCreates(
  options: { url: string; resource: Resource; orgs: CreateOrganization[]; seconds: number; warmupSeconds: number; connections?: number },
  commits: CommitCounter,
  idlePerSecond: number,
): Promise<CreateFigure> {
  let n = 0;
  const run = randomUUID().slice(0, 8);
  const next = () => {
    const i = n++;
    const org = options.orgs[i % options.orgs.length];
    return {
      body: JSON.stringify(createBody(options.resource, i, org, `${run}-`)),
      headers: { 'content-type': 'application/json', authorization: `Bearer ${org.token}`, 'idempotency-key': `bench-${run}-${i}` },
    };
  };
  const base = { url: options.url, method: 'POST' as const, expect: 201, connections: options.connections ?? 16, next };
  if (options.warmupSeconds) await load({ ...base, seconds: options.warmupSeconds });
  const before = await commits.commits();
  const startedAt = Date.now();
  const figure = await load({ ...base, seconds: options.seconds });
  const after = await commits.commits();
  const idle = (idlePerSecond * (Date.now() - startedAt)) / 1000;
  const created = figure.total - figure.unexpected;
  return { ...figure, commitsPerCreate: created > 0 ? Math.max(0, after - before - idle) / created : 0 };
}

/**
 * Every resource's creates in one organization and across 16, and the hand-written floors (client and
 * invoice creates, at `floor`) under the same loads, into `report`. `base` is where each resource is
 * created: instances with the per-key rate limit lifted, so that the code path is measured.
 */
export async function measureCreates(
  report: Report,
  base: (resource: Resource) => string,
  floor: string | null,
  measure: { seconds: number; warmupSeconds: number },
  step: (s: string) => void,
): Promise<CreateOrganization[]> {
  step('creates: 16 organizations with a key and 16 objects of each kind others reference');
  const orgs = await createOrganizations(16, base);
  const commits = await CommitCounter.open();
  try {
    const idle = await commits.idleRate();
    report.note(`creates: ${idle.toFixed(1)} commits a second with no load, subtracted from the commits per create`);
    const one = orgs.slice(0, 1);
    for (const resource of RESOURCES) {
      step(`creates: ${resource}`);
      report.create(`POST /api/v1/${resource}, one organization`, `create:${resource}:one`, await loadCreates({ url: `${base(resource)}/api/v1/${resource}`, resource, orgs: one, ...measure }, commits, idle));
      report.create(`POST /api/v1/${resource}, 16 organizations`, `create:${resource}:many`, await loadCreates({ url: `${base(resource)}/api/v1/${resource}`, resource, orgs, ...measure }, commits, idle));
    }
    step('creates: payment to invoice balance while payments are created at full rate');
    report.lag('payment → its invoice\'s amount_paid, during a full-rate payment load (16 organizations)', await paymentLag(base, orgs, measure.seconds));
    if (floor) {
      step('creates: the hand-written floors');
      for (const resource of FLOOR_RESOURCES) {
        report.create(`floor: POST /api/v1/${resource} by hand, one organization`, `floorCreate:${resource}:one`, await loadCreates({ url: `${floor}/api/v1/${resource}`, resource, orgs: one, ...measure }, commits, idle));
        report.create(`floor: POST /api/v1/${resource} by hand, 16 organizations`, `floorCreate:${resource}:many`, await loadCreates({ url: `${floor}/api/v1/${resource}`, resource, orgs, ...measure }, commits, idle));
      }
    }
  } finally {
    await commits.close();
  }
  return orgs;
}

/**
 * Milliseconds from a payment's 201 until its invoice shows it (`amount_paid` grew), sampled one at a
 * time on an organization of its own while the 16 organizations create payments at full rate.
 */
async function paymentLag(base: (resource: Resource) => string, orgs: CreateOrganization[], seconds: number): Promise<number[]> {
  const [probe] = await createOrganizations(1, base);
  const auth = { authorization: `Bearer ${probe.token}` };
  const invoice = probe.refs.invoice[0];
  const paid = async () => Number((await call(`${base('invoices')}/api/v1/invoices/${invoice}`, { headers: auth })).body.amount_paid);
  const commits = await CommitCounter.open();
  const samples: number[] = [];
  let loading = true;
  const load = loadCreates({ url: `${base('payments')}/api/v1/payments`, resource: 'payments', orgs, seconds, warmupSeconds: 0 }, commits, 0).finally(() => {
    loading = false;
  });
  while (loading) {
    const before = await paid();
    const created = await call(`${base('payments')}/api/v1/payments`, { method: 'POST', headers: auth, body: { invoice_id: invoice, amount: 1, currency: 'EUR' } });
    if (created.status !== 201) throw new Error(`payment: ${created.status} ${JSON.stringify(created.body)}`);
    const at = performance.now();
    while ((await paid()) <= before) {
      if (performance.now() - at > 10_000) throw new Error('a payment did not reach its invoice within 10 s');
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    samples.push(performance.now() - at);
  }
  await load;
  await commits.close();
  return samples;
}

/** The resources the create floor (baseline-server.mjs MODE=create) implements. */
export const FLOOR_RESOURCES: Resource[] = RESOURCES.filter((r) => r === 'clients' || r === 'invoices');

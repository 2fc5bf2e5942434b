import { newId, parsePublicId } from '@invoicing/contracts';
import { call, ResourceTestApp, startResourceTestApp } from '@invoicing/resource-api/testing';
import { getDataSourceToken } from '@nestjs/typeorm';
import { monitorEventLoopDelay, performance } from 'node:perf_hooks';
import { Worker } from 'node:worker_threads';
import type { DataSource } from 'typeorm';
import { INVOICE_SERVICE } from '../invoice-service.definition';

/**
 * One organization's large invoices must not slow another organization's lists (an outside probe:
 * 100 invoices of 500 line items with 1,000-character descriptions made `?limit=100` answer 56 MB in
 * 1.07 s, and 8 such lists in flight took another organization's small list from 3.7 / 6.2 ms to
 * 168 / 2,973 ms, median / max). The service runs with its default limits.
 */

const HEAVY_INVOICES = 100;
const HEAVY_LINES = 500;
const HEAVY_LOOPS = 8;
const IDLE_SAMPLES = 100;
const LOADED_MS = 10_000;
const PACE_MS = 10;

/** Nearest-rank percentile of a list of milliseconds. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

const ms = (n: number) => Math.round(n * 10) / 10;

/**
 * The heavy organization's clients, on their own thread: a loop of `GET url` per token, each reading
 * its whole answer (without parsing it), until told to stop; then the count of each status. Each
 * token is its own API key, so the per-key rate limit does not hold them back (the organization's
 * limits do). On another thread, so the client's own work on 0.5 MB (or, unbounded, 56 MB) answers
 * is not charged to the service's event loop, which this jest process shares.
 */
const HEAVY_CLIENT = `
  const { parentPort, workerData } = require('node:worker_threads');
  const { url, tokens } = workerData;
  let stop = false;
  let started = false;
  const statuses = {};
  let bytes = 0;
  parentPort.on('message', () => { stop = true; });
  async function loop(token) {
    while (!stop) {
      const r = await fetch(url, { headers: { authorization: 'Bearer ' + token } });
      bytes += (await r.arrayBuffer()).byteLength;
      statuses[r.status] = (statuses[r.status] || 0) + 1;
      if (!started) parentPort.postMessage({ started: (started = true) });
      // A refused client waits before asking again (Retry-After says 1 s; a tenth keeps the pressure on).
      if (r.status === 429) await new Promise((res) => setTimeout(res, 100));
    }
  }
  Promise.all(tokens.map(loop)).then(() => parentPort.postMessage({ statuses, bytes }));
`;

describe('list fairness between organizations', () => {
  let app: ResourceTestApp;
  let db: DataSource;
  const heavyOrg = newId('org');
  const lightOrg = newId('org');
  /** The heavy organization's invoices, newest first (public ids). */
  let heavyIds: string[];
  const url = (query = '') => `${app.baseUrl}/api/v1/invoices${query}`;

  /** Invoices straight into the table (the API would take ~100 x 0.5 MB of validation first). */
  async function seed(organizationPublicId: string, count: number, lines: number, descriptionLength: number): Promise<string[]> {
    const ids = Array.from({ length: count }, () => newId('inv'));
    await db.query(
      `INSERT INTO invoices.invoices (id, organization_id, client_id, number, currency, issue_date, line_items, subtotal, tax_total, total)
       SELECT k.id, $2, $3, 'INV-' || lpad(k.n::text, 6, '0'), 'EUR', current_date, items.line_items, $4::bigint * 100, 0, $4::bigint * 100
       FROM unnest($1::uuid[]) WITH ORDINALITY AS k(id, n),
       LATERAL (
         SELECT jsonb_agg(jsonb_build_object(
           'description', left(repeat(md5(k.n || '-' || g), 1 + $5 / 32), $5), 'quantity_milli', '1000', 'unit_price', 100,
           'tax_rate_bps', 0, 'product_id', NULL, 'amount', 100, 'tax', 0) ORDER BY g) AS line_items
         FROM generate_series(1, $4) g
       ) items`,
      [ids.map((id) => parsePublicId('inv', id)), parsePublicId('org', organizationPublicId), parsePublicId('cli', newId('cli')), lines, descriptionLength],
    );
    return ids.reverse();
  }

  /** Sequential small lists of the light organization, `count` of them or for `ms`: latencies in ms (all 200). */
  async function lightLists({ count = Infinity, ms: duration = Infinity }: { count?: number; ms?: number }): Promise<number[]> {
    const token = app.token({ organizationPublicId: lightOrg });
    const latencies: number[] = [];
    const deadline = performance.now() + duration;
    for (let i = 0; i < count && performance.now() < deadline; i++) {
      const started = performance.now();
      const r = await call('GET', url(), { token });
      latencies.push(performance.now() - started);
      expect(r.status).toBe(200);
      expect(r.body.data).toHaveLength(5);
      // Paced under the per-key rate limit (100/s), like a client that is not the one under test.
      await new Promise((resolve) => setTimeout(resolve, PACE_MS));
    }
    return latencies;
  }

  beforeAll(async () => {
    app = await startResourceTestApp(INVOICE_SERVICE);
    db = app.service.app.get<DataSource>(getDataSourceToken());
    const started = performance.now();
    heavyIds = await seed(heavyOrg, HEAVY_INVOICES, HEAVY_LINES, 1000);
    await seed(lightOrg, 5, 1, 20);
    console.log(`seeded ${HEAVY_INVOICES} invoices of ${HEAVY_LINES} x 1,000-character lines in ${Math.round(performance.now() - started)} ms`);
  });

  afterAll(async () => {
    // 56 MB of line items: not left behind in the shared database.
    await db?.query('DELETE FROM invoices.invoices WHERE organization_id = ANY($1::uuid[])', [[heavyOrg, lightOrg].map((o) => parsePublicId('org', o))]);
    await app?.close();
  });

  it("keeps another organization's small list fast while the heavy one runs 8 list loops of limit=100", async () => {
    await lightLists({ count: 10 }); // warm-up: prepared statements, connections
    const idle = await lightLists({ count: IDLE_SAMPLES });

    const worker = new Worker(HEAVY_CLIENT, {
      eval: true,
      workerData: { url: url('?limit=100'), tokens: Array.from({ length: HEAVY_LOOPS }, () => app.token({ organizationPublicId: heavyOrg })) },
    });
    const done = new Promise<{ statuses: Record<string, number>; bytes: number }>((resolve, reject) => {
      worker.on('message', (m: { statuses?: Record<string, number>; bytes?: number }) => {
        if (m.statuses) resolve({ statuses: m.statuses, bytes: m.bytes ?? 0 });
      });
      worker.on('error', reject);
    });
    // The service's event loop (this process's): how long work waited behind the heavy lists.
    const lag = monitorEventLoopDelay({ resolution: 1 });
    let loaded: number[];
    let heavy: Awaited<typeof done>;
    try {
      // Measure once the heavy lists are flowing (first answer in), over a window of several heavy
      // pages: a handful of samples can fall between two pages (unbounded, a 56 MB page spends seconds
      // in Postgres, leaving the event loop idle, then blocks it to parse and serialize).
      await new Promise<void>((resolve) => worker.once('message', () => resolve()));
      lag.enable();
      loaded = await lightLists({ ms: LOADED_MS });
      lag.disable();
    } finally {
      worker.postMessage('stop');
      heavy = await done.finally(() => worker.terminate());
    }

    const figures = {
      idle: { median: ms(percentile(idle, 50)), p99: ms(percentile(idle, 99)), max: ms(Math.max(...idle)), samples: idle.length },
      loaded: { median: ms(percentile(loaded, 50)), p99: ms(percentile(loaded, 99)), max: ms(Math.max(...loaded)), samples: loaded.length },
      eventLoopDelay: { p99: ms(lag.percentile(99) / 1e6), max: ms(lag.max / 1e6) },
      heavy: { statuses: heavy.statuses, megabytes: Math.round(heavy.bytes / 1e6) },
    };
    console.log(`light organization's list latency, ms: ${JSON.stringify(figures)}`);
    // Without the limits the light organization's p99 is 1.1-1.6 s against ~5 ms idle; with them,
    // 19-36 ms here. The bound sits far from both, so a busy CI machine (a GC pause, a neighbour's
    // build) cannot fail it while a return of the unbounded page still does. The figures above are
    // the measurement; this line only tells the two regimes apart.
    expect(figures.loaded.p99).toBeLessThanOrEqual(figures.idle.p99 + 400);
    // The heavy organization was served, not merely refused.
    expect(heavy.statuses['200']).toBeGreaterThan(0);
  }, 120_000);

  it('bounds each page by LIST_PAGE_MAX_BYTES (plus at most one invoice) and still walks every invoice exactly once', async () => {
    const token = app.token({ organizationPublicId: heavyOrg });
    const budget = app.config.LIST_PAGE_MAX_BYTES;
    const seen: string[] = [];
    const pageBytes: number[] = [];
    let after: string | undefined;
    for (;;) {
      const page = await call('GET', url(`?limit=100${after ? `&starting_after=${after}` : ''}`), { token });
      expect(page.status).toBe(200);
      const data = page.body.data as Array<{ id: string }>;
      expect(data.length).toBeGreaterThan(0);
      const sizes = data.map((invoice) => Buffer.byteLength(JSON.stringify(invoice)));
      // All but the last invoice of a page fit under the budget; the last one may cross it.
      expect(sizes.slice(0, -1).reduce((a, b) => a + b, 0)).toBeLessThan(budget);
      pageBytes.push(Buffer.byteLength(page.text));
      seen.push(...data.map((d) => d.id));
      if (!page.body.has_more) break;
      after = data[data.length - 1].id;
    }
    const largest = Math.max(...pageBytes);
    console.log(`walked ${seen.length} invoices in ${pageBytes.length} pages; largest page ${largest} bytes (budget ${budget})`);
    expect(seen).toEqual(heavyIds);
    const oneInvoice = Buffer.byteLength(JSON.stringify((await call('GET', url(`/${heavyIds[0]}`), { token })).body));
    expect(largest).toBeLessThanOrEqual(budget + oneInvoice + 100);
  });

  it("answers 429 with Retry-After: 1 past the organization's concurrent lists and queue, for that organization only", async () => {
    const heavy = app.token({ organizationPublicId: heavyOrg });
    const admitted = app.config.LIST_CONCURRENCY_PER_ORGANIZATION + app.config.LIST_QUEUE_PER_ORGANIZATION;
    // Hold the lists in Postgres (a lock that conflicts with SELECT) so all of them are in flight at once.
    const runner = db.createQueryRunner();
    await runner.connect();
    await runner.startTransaction();
    let answers: Array<{ status: number; retryAfter: string | null; type: string | null }>;
    let other: Promise<number>;
    try {
      await runner.query('LOCK TABLE invoices.invoices IN ACCESS EXCLUSIVE MODE');
      let settled = 0;
      const pending = Array.from({ length: admitted + 2 }, () =>
        call('GET', url('?limit=1'), { token: heavy }).then((r) => {
          settled += 1;
          return { status: r.status, retryAfter: r.headers.get('retry-after'), type: r.headers.get('content-type') };
        }),
      );
      // The two past the limit are answered at once; the others wait for the lock.
      const deadline = Date.now() + 10_000;
      while (settled < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
      await new Promise((r) => setTimeout(r, 200));
      other = call('GET', url(), { token: app.token({ organizationPublicId: lightOrg }) }).then((r) => r.status);
      await new Promise((r) => setTimeout(r, 100));
      await runner.commitTransaction();
      answers = await Promise.all(pending);
    } finally {
      if (runner.isTransactionActive) await runner.rollbackTransaction();
      await runner.release();
    }
    const refused = answers.filter((a) => a.status === 429);
    expect(answers.filter((a) => a.status === 200)).toHaveLength(admitted);
    expect(refused).toHaveLength(2);
    for (const r of refused) {
      expect(r.retryAfter).toBe('1');
      expect(r.type).toContain('application/problem+json');
    }
    // Another organization is never refused or queued because of this one.
    expect(await other).toBe(200);
  });
});

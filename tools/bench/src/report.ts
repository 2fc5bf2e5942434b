import { type Resource, RESOURCES } from '@invoicing/contracts';
import type { Figure } from './load';
import type { CreateFigure } from './creates';

type Spread = Record<Resource, { p50: number; p99: number; max: number }>;

interface Check {
  what: string;
  value: number | null;
  target: string;
  met: boolean | null;
}

/** A ratio target: figure `num` over figure `den` must be at least `min`. */
const RATIOS: Array<{ what: string; num: string; den: string; min: number }> = [
  { what: 'token exchange / oidc-provider', num: 'token', den: 'oidc', min: 2 },
  { what: 'token exchange / Keycloak', num: 'token', den: 'keycloak', min: 4 },
  { what: 'exchange on a busy key / on a fresh key', num: 'tokenBusy', den: 'tokenFresh', min: 0.9 },
  { what: 'refresh rotation / oidc-provider', num: 'refresh', den: 'oidc', min: 2 },
  { what: '401 path / bare Fastify', num: 'unauthorized', den: 'hello', min: 0.5 },
  { what: 'token exchange through the gateway / direct', num: 'tokenGateway', den: 'token', min: 0.9 },
  { what: 'GET products/{id} through the gateway / direct', num: 'getGateway', den: 'get:products', min: 0.9 },
  // Tracing on (spans exported) against the same path with it off, as shipped (the gateway's default
  // share of sampled requests): at most 10 % dearer. With every request sampled: shown, no target.
  { what: 'token exchange, tracing on (default sampling) / off', num: 'tokenSampled', den: 'tokenGateway', min: 0.9 },
  { what: 'GET products/{id}, tracing on (default sampling) / off', num: 'getSampled', den: 'getGateway', min: 0.9 },
  { what: 'token exchange, tracing on (every request) / off', num: 'tokenTraced', den: 'tokenGateway', min: 0 },
  { what: 'GET products/{id}, tracing on (every request) / off', num: 'getTraced', den: 'getGateway', min: 0 },
  // On a Redis Cluster with one replica per primary, every session write waiting for its replica
  // (REDIS_WAIT_REPLICAS=1, ADR 0030) against the same cluster without the wait: shown, no target.
  { what: 'token exchange, Redis Cluster, WAIT for a replica / no WAIT', num: 'tokenClusterWait', den: 'tokenCluster', min: 0 },
  { what: 'refresh rotation, Redis Cluster, WAIT for a replica / no WAIT', num: 'refreshClusterWait', den: 'refreshCluster', min: 0 },
  { what: 'token exchange, Redis Cluster (no WAIT) / one Redis', num: 'tokenCluster', den: 'token', min: 0 },
  // The hand-written floors: the same work with nothing but the libraries underneath.
  { what: 'token exchange / its hand-written floor', num: 'token', den: 'floorToken', min: 0.75 },
  { what: 'refresh rotation / the token floor', num: 'refresh', den: 'floorToken', min: 0.75 },
  { what: 'GET products/{id} / its hand-written floor', num: 'get:products', den: 'floorGet', min: 1 },
  { what: 'GET products list of 20 / its hand-written floor', num: 'list:products', den: 'floorList', min: 1 },
  { what: 'GET products list of 20, 16 organizations / its floor', num: 'list:products:many', den: 'floorList:products:many', min: 0.9 },
  { what: 'GET invoices list of 20, 16 organizations / its floor', num: 'list:invoices:many', den: 'floorList:invoices:many', min: 0.9 },
  // Creates (creates.ts): ours over the hand-written floor under the same load.
  { what: 'client create, one organization / its hand-written floor', num: 'create:clients:one', den: 'floorCreate:clients:one', min: 0.5 },
  { what: 'client create, 16 organizations / its hand-written floor', num: 'create:clients:many', den: 'floorCreate:clients:many', min: 0.5 },
  { what: 'invoice create (2 lines), 16 organizations / its floor (numbered too)', num: 'create:invoices:many', den: 'floorCreate:invoices:many', min: 0.4 },
  { what: 'invoice create (2 lines), one organization / its floor (numbered too)', num: 'create:invoices:one', den: 'floorCreate:invoices:one', min: 0 },
  ...RESOURCES.flatMap((r) => [
    { what: `GET ${r}/{id} / Fastify + fast-jwt`, num: `get:${r}`, den: 'jwt', min: 0.4 },
    { what: `GET ${r} list of 20 / Fastify + fast-jwt`, num: `list:${r}`, den: 'jwt', min: 0.25 },
  ]),
];

const pad = (s: string, n: number) => (s.length >= n ? s : s + ' '.repeat(n - s.length));
const lpad = (s: string, n: number) => (s.length >= n ? s : ' '.repeat(n - s.length) + s);

/** Collects the figures of one run and prints them with the ratios the targets are stated in. */
export class Report {
  private readonly loads: Array<{ label: string; id: string; figure: Figure }> = [];
  private readonly notes: string[] = [];
  private readonly revocations: Array<{ label: string; spread: Spread }> = [];
  private readonly rss: Array<{ service: string; mb: number }> = [];
  private readonly commitsPerCreate: Array<{ id: string; value: number }> = [];
  private readonly lags: Array<{ label: string; p50: number; p99: number; max: number; n: number }> = [];

  load(label: string, id: string, figure: Figure): void {
    this.loads.push({ label, id, figure });
    process.stderr.write(`bench:   ${label}: ${Math.round(figure.rps)}/s p50 ${figure.p50} ms p99 ${figure.p99} ms${figure.unexpected ? ` (${figure.unexpected} unexpected statuses)` : ''}\n`);
  }
  /** A create load: its figure, and the commits Postgres counted per create. */
  create(label: string, id: string, figure: CreateFigure): void {
    this.load(`${label} (${figure.commitsPerCreate.toFixed(2)} commits/create)`, id, figure);
    this.commitsPerCreate.push({ id, value: figure.commitsPerCreate });
  }
  /** Delays of something that follows a write (ms), as p50, p99 and max. */
  lag(label: string, samples: number[]): void {
    const sorted = [...samples].sort((a, b) => a - b);
    const at = (p: number) => Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] ?? 0);
    const entry = { label, p50: at(50), p99: at(99), max: Math.round(sorted[sorted.length - 1] ?? 0), n: sorted.length };
    this.lags.push(entry);
    process.stderr.write(`bench:   ${label}: p50 ${entry.p50} ms p99 ${entry.p99} ms max ${entry.max} ms (${entry.n} samples)\n`);
  }
  note(text: string): void {
    this.notes.push(text);
  }
  revocation(label: string, spread: Spread): void {
    this.revocations.push({ label, spread });
  }
  memory(service: string, mb: number): void {
    this.rss.push({ service, mb });
  }

  private rps(id: string): number | null {
    return this.loads.find((l) => l.id === id)?.figure.rps ?? null;
  }

  checks(): Check[] {
    const out: Check[] = RATIOS.map((r) => {
      const num = this.rps(r.num);
      const den = this.rps(r.den);
      const value = num !== null && den ? num / den : null;
      // min 0: a figure shown for what it is, with no target.
      if (r.min === 0) return { what: r.what, value, target: 'none', met: null };
      return { what: r.what, value, target: `>= ${r.min.toFixed(2)}x`, met: value === null ? null : value >= r.min };
    });
    for (const { id, value } of this.commitsPerCreate) {
      // The create's own commit, and the relay's share: one batch marks many events sent.
      // Against 1.2: the floors, which commit exactly once a create, read 0.93 to 1.22 (the idle rate moves).
      if (!id.startsWith('floor')) out.push({ what: `commits per create, ${id.slice('create:'.length)}`, value, target: '<= 1.20', met: value <= 1.2 });
    }
    for (const { label, p99 } of this.lags) out.push({ what: `${label}: p99 (ms)`, value: p99, target: '<= 1000 ms', met: p99 <= 1000 });
    const refresh = this.loads.find((l) => l.id === 'refresh');
    if (refresh) out.push({ what: 'refresh p99 (ms)', value: refresh.figure.p99, target: '<= 10 ms', met: refresh.figure.p99 <= 10 });
    for (const { label, spread } of this.revocations) {
      const p50 = Math.max(...Object.values(spread).map((s) => s.p50));
      const p99 = Math.max(...Object.values(spread).map((s) => s.p99));
      out.push({ what: `${label}: worst service p50 (ms)`, value: p50, target: '<= 25 ms', met: p50 <= 25 });
      out.push({ what: `${label}: worst service p99 (ms)`, value: p99, target: '<= 100 ms', met: p99 <= 100 });
    }
    for (const { service, mb } of this.rss) {
      out.push({ what: `idle RSS ${service} (MB)`, value: mb, target: '<= 150 MB', met: mb <= 150 });
    }
    return out;
  }

  render(): string {
    const lines: string[] = [];
    for (const n of this.notes) lines.push(`# ${n}`);
    lines.push('', `${pad('what', 66)} ${lpad('req/s', 8)} ${lpad('p50 ms', 7)} ${lpad('p99 ms', 7)} ${lpad('bad', 5)}`);
    for (const { label, figure: f } of this.loads) {
      lines.push(`${pad(label, 66)} ${lpad(Math.round(f.rps).toLocaleString('en'), 8)} ${lpad(String(f.p50), 7)} ${lpad(String(f.p99), 7)} ${lpad(String(f.unexpected + f.errors), 5)}`);
    }
    for (const { label, p50, p99, max, n } of this.lags) lines.push('', `${label}: p50 ${p50} ms, p99 ${p99} ms, max ${max} ms (${n} samples)`);
    for (const { label, spread } of this.revocations) {
      lines.push('', `revocation after ${label}: ms from the revoking response until the service refused the token`);
      for (const [resource, s] of Object.entries(spread)) {
        lines.push(`  ${pad(resource, 10)} p50 ${lpad(s.p50.toFixed(1), 6)}  p99 ${lpad(s.p99.toFixed(1), 6)}  max ${lpad(s.max.toFixed(1), 6)}`);
      }
    }
    lines.push('', `${pad('target', 58)} ${lpad('value', 9)} ${pad('  goal', 12)} met`);
    for (const c of this.checks()) {
      const value = c.value === null ? 'n/a' : c.value.toFixed(2);
      lines.push(`${pad(c.what, 58)} ${lpad(value, 9)}   ${pad(c.target, 10)} ${c.met === null ? '-' : c.met ? 'yes' : 'NO'}`);
    }
    return `${lines.join('\n')}\n`;
  }

  toJson(): unknown {
    return {
      at: new Date().toISOString(),
      notes: this.notes,
      loads: this.loads,
      revocations: this.revocations,
      rss: this.rss,
      commitsPerCreate: this.commitsPerCreate,
      lags: this.lags,
      checks: this.checks(),
    };
  }
}

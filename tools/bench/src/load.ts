import autocannon from 'autocannon';

/** One measured load: what the table prints for it. */
export interface Figure {
  /** Requests per second over the measured time. */
  rps: number;
  /** Latency percentiles in ms, over every response of the measured time. */
  p50: number;
  p99: number;
  /** Responses whose status was not the expected one: a figure with any is suspect. */
  unexpected: number;
  /** Socket errors and timeouts. */
  errors: number;
  total: number;
}

/** State of one request chain (one connection): what its next request sends. */
export interface Chain {
  body(): string;
  /** Sees each response; a chain that cannot go on throws. */
  onResponse(status: number, body: string): void;
}

export interface LoadOptions {
  url: string;
  method?: 'GET' | 'POST';
  headers?: Record<string, string>;
  body?: string;
  /** The status every response should have (200 unless said). */
  expect?: number;
  connections?: number;
  seconds: number;
  /** Seconds of the same load before measuring (JIT, pools, caches). */
  warmupSeconds?: number;
  /**
   * One chain per connection (refresh rotation: each request presents what the last response of
   * its own connection carried). autocannon's `requests` share one request object between
   * connections and reset the context after each request, so each chain gets its own autocannon
   * instance with one connection.
   */
  chain?: () => Chain;
  /** Stop after this many requests instead of after `seconds` (seeding). */
  amount?: number;
  /**
   * A new request each time (creates: every one with its own body and Idempotency-Key), shared by the
   * connections: autocannon asks it before each request it sends.
   */
  next?: () => { body: string; headers: Record<string, string> };
}

interface Run {
  instance: autocannon.Instance;
  done: Promise<autocannon.Result>;
}

function start(options: autocannon.Options, onResponse: (status: number, ms: number) => void): Run {
  const instance = autocannon(options, () => undefined);
  instance.on('response', (_client: unknown, status: number, _bytes: number, ms: number) => onResponse(status, ms));
  return { instance, done: new Promise((resolve) => instance.on('done', resolve)) };
}

function percentile(sorted: Float64Array, p: number): number {
  if (sorted.length === 0) return 0;
  return Math.round(sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] * 10) / 10;
}

async function once(o: LoadOptions, seconds: number, amount?: number): Promise<Figure> {
  const expectStatus = o.expect ?? 200;
  const connections = o.connections ?? 16;
  const latencies: number[] = [];
  let unexpected = 0;
  const record = (status: number, ms: number) => {
    latencies.push(ms);
    if (status !== expectStatus) unexpected += 1;
  };
  const base = { url: o.url, method: o.method ?? 'GET', headers: o.headers, pipelining: 1, duration: seconds, amount } as const;
  const started = performance.now();
  const runs: Run[] = o.chain
    ? Array.from({ length: connections }, () => {
        const chain = o.chain!();
        return start(
          {
            ...base,
            connections: 1,
            requests: [
              {
                method: o.method ?? 'POST',
                headers: o.headers,
                setupRequest: (request) => ({ ...request, body: chain.body() }),
                onResponse: (status, body) => chain.onResponse(status, body),
              },
            ],
          },
          record,
        );
      })
    : o.next
      ? [
          start(
            {
              ...base,
              connections,
              requests: [
                {
                  method: o.method ?? 'POST',
                  setupRequest: (request) => {
                    const { body, headers } = o.next!();
                    return { ...request, body, headers: { ...request.headers, ...headers } };
                  },
                },
              ],
            },
            record,
          ),
        ]
      : [start({ ...base, body: o.body, connections }, record)];
  const results = await Promise.all(runs.map((r) => r.done));
  const elapsed = (performance.now() - started) / 1000;
  const sorted = Float64Array.from(latencies).sort();
  const total = results.reduce((n, r) => n + r.requests.total, 0);
  return {
    rps: total / Math.max(0.001, elapsed),
    p50: percentile(sorted, 50),
    p99: percentile(sorted, 99),
    unexpected,
    errors: results.reduce((n, r) => n + r.errors + r.timeouts, 0),
    total,
  };
}

/** Loads one endpoint with autocannon (16 connections unless said) and returns its figure. */
export async function load(o: LoadOptions): Promise<Figure> {
  if (o.warmupSeconds) await once(o, o.warmupSeconds);
  return once(o, o.seconds, o.amount);
}

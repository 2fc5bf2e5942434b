// Revocation delivery, before and after, in the same trials: both copies of a resource service
// (tools/bench/ab.sh revocation) consume the same revocation feed, and each trial measures, on both at
// once, how long after a refresh-token reuse (which revokes the session, ADR 0003) each copy refuses
// the session's access token. Polled every 2 ms per copy; prints per-side median, p95 and max.
//
//   node tools/bench/revocation-ab.mjs AUTH_URL BEFORE_URL AFTER_URL "Basic ..." TRIALS
const [auth, before, after, basic, trialsArg] = process.argv.slice(2);
const trials = Number(trialsArg ?? 30);
const sides = { before, after };

async function post(path, body, headers = {}) {
  const r = await fetch(`${auth}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });
  return { status: r.status, body: await r.json() };
}
const statusOf = async (base, token) => (await fetch(`${base}/api/v1/products?limit=1`, { headers: { authorization: `Bearer ${token}` } })).status;

async function refusedAfter(base, token, since, timeoutMs = 10_000) {
  for (;;) {
    if ((await statusOf(base, token)) === 401) return performance.now() - since;
    if (performance.now() - since > timeoutMs) throw new Error(`${base} still accepts a revoked token after ${timeoutMs} ms`);
    await new Promise((r) => setTimeout(r, 2));
  }
}

const ms = { before: [], after: [] };
for (let i = 0; i < trials; i++) {
  const first = await post('/api/v1/auth/token', { grant_type: 'client_credentials' }, { authorization: basic });
  if (first.status !== 200) throw new Error(`token: ${first.status} ${JSON.stringify(first.body)}`);
  const rotated = await post('/api/v1/auth/refresh', { refresh_token: first.body.refresh_token });
  if (rotated.status !== 200) throw new Error(`refresh: ${rotated.status} ${JSON.stringify(rotated.body)}`);
  const token = rotated.body.access_token;
  for (const base of Object.values(sides)) if ((await statusOf(base, token)) !== 200) throw new Error(`${base} refuses a fresh token`);
  const since = performance.now();
  const reuse = await post('/api/v1/auth/refresh', { refresh_token: first.body.refresh_token });
  if (reuse.status !== 400) throw new Error(`reuse: expected 400, got ${reuse.status}`);
  const [b, a] = await Promise.all([refusedAfter(before, token, since), refusedAfter(after, token, since)]);
  ms.before.push(b);
  ms.after.push(a);
}
const q = (xs, p) => [...xs].sort((x, y) => x - y)[Math.min(xs.length - 1, Math.floor(p * xs.length))];
for (const side of ['before', 'after']) {
  console.log(`revocation ${side.padEnd(6)} median ${q(ms[side], 0.5).toFixed(1)} ms, p95 ${q(ms[side], 0.95).toFixed(1)} ms, max ${Math.max(...ms[side]).toFixed(1)} ms (${trials} trials)`);
}
console.log(`after / before: median ${(q(ms.after, 0.5) / q(ms.before, 0.5)).toFixed(2)}x, p95 ${(q(ms.after, 0.95) / q(ms.before, 0.95)).toFixed(2)}x`);

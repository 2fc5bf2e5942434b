// Refresh-token rotation under load, for ab.sh's `refresh` mode: autocannon repeats one request,
// but every refresh spends its token and answers the next one. 16 chains, each exchanging once for a
// pair and then refreshing with the token each answer hands back, until COUNT refreshes are done.
// Prints {"requests":{"average":<refreshes per second>}} like autocannon -j, so ab.sh reads both alike.
//
//   node tools/bench/refresh-load.mjs BASE_URL COUNT 'Basic <client credentials>'
const [base, countText, basic] = process.argv.slice(2);
const count = Number(countText);
const CHAINS = 16;

async function post(path, body, headers = {}) {
  const response = await fetch(`${base}${path}`, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...headers }, body });
  const json = await response.json();
  if (response.status !== 200) throw new Error(`${path}: ${response.status} ${JSON.stringify(json)}`);
  return json;
}

const tokens = await Promise.all(Array.from({ length: CHAINS }, () => post('/api/v1/auth/token', 'grant_type=client_credentials', { authorization: basic })));
let left = count;
const started = process.hrtime.bigint();
await Promise.all(
  tokens.map(async (pair) => {
    let refresh = pair.refresh_token;
    while (left > 0) {
      left -= 1;
      refresh = (await post('/api/v1/auth/refresh', `refresh_token=${encodeURIComponent(refresh)}`)).refresh_token;
    }
  }),
);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ requests: { average: Math.round(count / seconds) } })}\n`);

// Creates under load, for ab.sh's `create` mode: autocannon repeats one request, but every create
// carries its own body and Idempotency-Key (as the SDK sends them). 16 connections post products
// until COUNT are created; each request's key and name are new.
// Prints {"requests":{"average":<creates per second>}} like autocannon -j, so ab.sh reads both alike.
//
//   node tools/bench/create-load.mjs BASE_URL COUNT ACCESS_TOKEN [CLIENT_ID]
//
// With CLIENT_ID: invoices of two lines for that client instead of products.
import { randomUUID } from 'node:crypto';

const [base, countText, token, clientId] = process.argv.slice(2);
const invoice = (n) => ({
  client_id: clientId,
  currency: 'EUR',
  line_items: [
    { description: `ab ${run} ${n}`, quantity: 1, unit_price: 100 + (n % 1000) },
    { description: 'hosting', quantity: 2, unit_price: 250, tax_rate_bps: 1900 },
  ],
});
const count = Number(countText);
const run = randomUUID().slice(0, 8);
let next = 0;
const started = process.hrtime.bigint();
await Promise.all(
  Array.from({ length: 16 }, async () => {
    while (next < count) {
      const n = next++;
      const response = await fetch(`${base}/api/v1/${clientId ? 'invoices' : 'products'}`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}`, 'idempotency-key': `ab-${run}-${n}` },
        body: JSON.stringify(clientId ? invoice(n) : { name: `ab ${run} ${n}`, unit_price: 100 + (n % 1000), currency: 'EUR' }),
      });
      await response.arrayBuffer();
      if (response.status !== 201) throw new Error(`create ${n}: ${response.status}`);
    }
  }),
);
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
process.stdout.write(`${JSON.stringify({ requests: { average: Math.round(count / seconds) } })}\n`);

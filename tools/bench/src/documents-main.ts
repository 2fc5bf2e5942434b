/**
 * An invoice as a document (docs/api.md section 7), against the stack of tools/stack/start.sh:
 * what a PDF and an e-invoice cost to render (1, 50 and 500 lines, the 500 at every field's maximum
 * in several scripts), the invoice service's memory, and what one organization downloading
 * 500-line PDFs back to back does to another organization's reads of the same instance.
 *
 *   npx nx run bench:documents                          # about a minute
 *   npx nx run bench:documents --args="--renders 10 --seconds 10"
 */
import 'reflect-metadata';
import { exchange, numberArg, requireStack, serviceUrl, SettingsAccount, stackPid } from './platform';
import { rssMb, runBench } from './processes';
import { percentile } from './revocation';

const INVOICES = `${serviceUrl('invoice-service')}/api/v1/invoices`;
const SCOPES = ['read:invoices', 'write:invoices', 'read:clients', 'write:clients'];

async function organization(profile: boolean): Promise<{ token: string; client: string }> {
  const account = await SettingsAccount.signUp();
  if (profile) {
    await account.updateOrganization({
      legal_name: 'Nordlicht Software GmbH',
      address: { line1: 'Friedrichstraße 123', city: 'Berlin', postal_code: '10117', country: 'DE' },
      vat_id: 'DE123456789',
      iban: 'DE89370400440532013000',
      payment_terms: 'Payable within 30 days.',
    });
  }
  const { access_token: token } = await exchange(await account.createKey(SCOPES));
  const client = await post(`${serviceUrl('client-service')}/api/v1/clients`, token, {
    name: 'Globex Corporation',
    address: { line1: '1 Rue de la Paix', city: 'Paris', postal_code: '75002', country: 'FR' },
  });
  return { token, client };
}

async function post(url: string, token: string, body: unknown): Promise<string> {
  const r = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify(body) });
  const json = (await r.json()) as { id?: string };
  if (r.status !== 201 || !json.id) throw new Error(`POST ${url}: ${r.status} ${JSON.stringify(json)}`);
  return json.id;
}

/** An invoice of `lines` lines; `widest`: each description 1,000 characters of Latin, Arabic, Hebrew and Greek, 5,000 of notes. */
function invoiceBody(client: string, lines: number, widest: boolean) {
  const text = (i: number) => (widest ? `Line ${i} ${'Beratung, مرحبا بالعالم, שלום עולם, Καλημέρα. '.repeat(40)}`.slice(0, 1000) : `Consulting ${i}`);
  return {
    client_id: client,
    currency: 'EUR',
    due_date: '2099-01-31',
    ...(widest ? { notes: 'N'.repeat(5000) } : {}),
    line_items: Array.from({ length: lines }, (_, i) => ({ description: text(i), quantity: '1.5', unit_price: 12345 + i, tax_rate_bps: i % 3 === 0 ? 1900 : 700 })),
  };
}

/** Peak resident memory of the stack's invoice-service process so far (its worker threads included), in MB. */
async function peakRssMb(): Promise<number | null> {
  const pid = await stackPid('invoice-service');
  const mb = pid === null ? null : await rssMb(pid, true);
  return mb === null ? null : Math.round(mb);
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const renders = numberArg(argv, '--renders', 5);
  const seconds = numberArg(argv, '--seconds', 8);
  await requireStack('invoice-service');
  const seller = await organization(true);
  const neighbour = await organization(false);
  // The profile reaches the invoice service through Kafka: an invoice created a moment after the
  // change may not have it yet (its e-invoice answers 422); the first one that does comes first.
  let first = '';
  for (let attempt = 0; attempt < 50; attempt++) {
    first = await post(INVOICES, seller.token, invoiceBody(seller.client, 1, false));
    if ((await fetch(`${INVOICES}/${first}`, { headers: { authorization: `Bearer ${seller.token}`, accept: 'application/xml' } })).status === 200) break;
    await new Promise((r) => setTimeout(r, 200));
  }
  const invoices = {
    '1 line': first,
    '50 lines': await post(INVOICES, seller.token, invoiceBody(seller.client, 50, false)),
    '500 lines, every field at its maximum': await post(INVOICES, seller.token, invoiceBody(seller.client, 500, true)),
  };
  const neighbourInvoice = await post(INVOICES, neighbour.token, invoiceBody(neighbour.client, 1, false));
  const rssBefore = await peakRssMb();

  const lines: string[] = ['| document | renders | p50 ms | max ms | bytes |', '|---|---|---|---|---|'];
  for (const [name, id] of Object.entries(invoices)) {
    for (const [accept, label] of [['application/pdf', 'PDF'], ['application/xml', 'CII'], ['application/xml;ubl', 'UBL']] as const) {
      const times: number[] = [];
      let bytes = 0;
      for (let i = 0; i < renders + 1; i++) {
        const started = performance.now();
        const r = await fetch(`${INVOICES}/${id}${accept.endsWith(';ubl') ? '?syntax=ubl' : ''}`, { headers: { authorization: `Bearer ${seller.token}`, accept: accept.replace(';ubl', '') } });
        const body = Buffer.from(await r.arrayBuffer());
        if (r.status !== 200) throw new Error(`${label} of ${name}: ${r.status} ${body.toString('utf8').slice(0, 300)}`);
        // The first render of each also starts the worker (fonts, modules): not counted.
        if (i > 0) times.push(performance.now() - started);
        bytes = body.length;
      }
      times.sort((a, b) => a - b);
      lines.push(`| ${label}, ${name} | ${renders} | ${percentile(times, 50).toFixed(0)} | ${times[times.length - 1].toFixed(0)} | ${bytes.toLocaleString('en')} |`);
    }
  }
  const rssAfter = await peakRssMb();

  // The neighbour's reads of the same instance, alone and while the seller downloads 500-line PDFs
  // two at a time (one renders, one waits: its organization's gate): a GET every 20 ms (50 a second,
  // within the key's rate limit), each timed on its own, so a stalled event loop shows in the tail.
  const read = async () => {
    const times: number[] = [];
    let unexpected = 0;
    const until = performance.now() + seconds * 1000;
    const pending: Array<Promise<void>> = [];
    while (performance.now() < until) {
      pending.push(
        (async () => {
          const started = performance.now();
          const r = await fetch(`${INVOICES}/${neighbourInvoice}`, { headers: { authorization: `Bearer ${neighbour.token}` } });
          await r.arrayBuffer();
          times.push(performance.now() - started);
          if (r.status !== 200) unexpected += 1;
        })(),
      );
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    await Promise.all(pending);
    times.sort((a, b) => a - b);
    return { n: times.length, p50: percentile(times, 50), p99: percentile(times, 99), max: times[times.length - 1], unexpected };
  };
  const alone = await read();
  let downloading = true;
  let downloaded = 0;
  const downloader = async () => {
    while (downloading) {
      const r = await fetch(`${INVOICES}/${invoices['500 lines, every field at its maximum']}`, { headers: { authorization: `Bearer ${seller.token}`, accept: 'application/pdf' } });
      await r.arrayBuffer();
      if (r.status === 200) downloaded += 1;
    }
  };
  const downloaders = [downloader(), downloader()];
  const busy = await read();
  downloading = false;
  await Promise.all(downloaders);

  process.stdout.write(
    [
      '## Documents (GET /api/v1/invoices/{id} with Accept), one invoice service instance',
      '',
      ...lines,
      '',
      `invoice-service peak RSS: ${rssBefore ?? '?'} MB before the renders, ${rssAfter ?? '?'} MB after`,
      '',
      "## Another organization's GET of one invoice (JSON, one every 20 ms), alone and while 500-line PDFs are downloaded two at a time",
      '',
      '| while | requests | p50 ms | p99 ms | max ms | not 200 |',
      '|---|---|---|---|---|---|',
      `| alone | ${alone.n} | ${alone.p50.toFixed(1)} | ${alone.p99.toFixed(1)} | ${alone.max.toFixed(1)} | ${alone.unexpected} |`,
      `| PDFs rendering (${downloaded} done in ${seconds} s) | ${busy.n} | ${busy.p50.toFixed(1)} | ${busy.p99.toFixed(1)} | ${busy.max.toFixed(1)} | ${busy.unexpected} |`,
      '',
    ].join('\n'),
  );
}

runBench(main);

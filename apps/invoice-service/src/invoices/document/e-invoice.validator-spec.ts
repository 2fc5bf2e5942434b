import { spawnSync } from 'node:child_process';
import { mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { eInvoiceCorpus } from '../../testing/invoice-documents';
import { renderEInvoice } from './e-invoice';

/**
 * The validator tier (`npx nx run invoice-service:test-validator`): a corpus of invoices written in
 * both syntaxes and checked by the Mustang project's EN 16931 validator (XSD and CEN schematron) on
 * the JVM, through tools/einvoice-validator/validate.sh, plus a broken control file it must reject.
 * The files and the validator's JSON stay in tmp/einvoice-validator/corpus/ to read after a failure.
 */
const ROOT = join(__dirname, '..', '..', '..', '..', '..');
const CORPUS = join(ROOT, 'tmp', 'einvoice-validator', 'corpus');
const REPORT = join(ROOT, 'tmp', 'einvoice-validator', 'report.json');

interface Verdict {
  file: string;
  valid: boolean;
  ms: number;
  messages: Array<{ severity: string; rule: string; message: string; location: string }>;
}

/**
 * Warnings the validator gives documents that are right, each with why. Any other warning fails.
 */
const KNOWN_WARNINGS: Array<{ why: string; applies: (file: string, m: Verdict['messages'][number]) => boolean }> = [
  {
    why: 'the CII schema requires ApplicableHeaderTradeDelivery, and an invoice of ours has no delivery data to put in it (Peppol rule, not EN 16931)',
    applies: (file, m) => file.startsWith('cii-') && m.severity === 'warning' && m.rule === 'PEPPOL-EN16931-R008',
  },
  {
    why: "Mustang's own re-calculation works in 2 decimals whatever the currency: a yen amount rounded to whole yen differs from it",
    applies: (file, m) => m.severity === 'warning' && m.message.startsWith('Arithmetical issue') && currencyOf(file) === 'JPY',
  },
];

function currencyOf(file: string): string {
  return /<ram:InvoiceCurrencyCode>([A-Z]{3})<|<cbc:DocumentCurrencyCode>([A-Z]{3})</.exec(readFileSync(join(CORPUS, file), 'utf8'))?.slice(1).find(Boolean) ?? '';
}

const corpus = eInvoiceCorpus();
const files = corpus.flatMap(({ name }) => [`cii-${name}.xml`, `ubl-${name}.xml`]);
const CONTROL = 'control-broken-totals.xml';
let verdicts: Map<string, Verdict>;

beforeAll(() => {
  rmSync(CORPUS, { recursive: true, force: true });
  mkdirSync(CORPUS, { recursive: true });
  for (const { name, doc } of corpus) {
    writeFileSync(join(CORPUS, `cii-${name}.xml`), renderEInvoice(doc, 'cii'));
    writeFileSync(join(CORPUS, `ubl-${name}.xml`), renderEInvoice(doc, 'ubl'));
  }
  // The control: a valid invoice whose grand total no longer adds up (BR-CO-15, BR-CO-16).
  const good = renderEInvoice(corpus[0].doc, 'cii');
  writeFileSync(join(CORPUS, CONTROL), good.replace(/<ram:GrandTotalAmount>[^<]*</, '<ram:GrandTotalAmount>1.00<'));

  rmSync(REPORT, { force: true });
  const started = Date.now();
  const run = spawnSync('bash', [join(ROOT, 'tools', 'einvoice-validator', 'validate.sh'), CORPUS, '--json', REPORT], {
    encoding: 'utf8',
    maxBuffer: 64 * 1024 * 1024,
  });
  // 0: all valid, 1: some invalid (the control is); anything else is the tool failing.
  if (run.status !== 0 && run.status !== 1) throw new Error(`validate.sh failed (${run.status}): ${run.stderr}\n${run.stdout}`);
  const summary = run.stdout.trim().split('\n').pop() ?? '';
  if (!/^einvoice-validator: \d+ files/.test(summary)) throw new Error(`validate.sh ended without its summary (${run.status}): ${run.stderr}\n${run.stdout}`);
  console.log(`${summary}; ${((Date.now() - started) / 1000).toFixed(1)} s with the JVM's start`);
  verdicts = new Map((JSON.parse(readFileSync(REPORT, 'utf8')) as Verdict[]).map((v) => [v.file, v]));
});

describe('EN 16931 e-invoices through the Mustang validator', () => {
  it.each(files)('%s is valid: no error, and no warning but the known ones', (file) => {
    const verdict = verdicts.get(file);
    if (!verdict) throw new Error(`the validator did not report ${file}`);
    const problems = verdict.messages
      .filter((m) => m.severity !== 'notice' && !KNOWN_WARNINGS.some((known) => known.applies(file, m)))
      .map((m) => `${m.severity} ${m.rule} ${m.message}`);
    expect(problems).toEqual([]);
    expect(verdict.valid).toBe(true);
  });

  it('finds the broken control file invalid, naming the totals rule', () => {
    const verdict = verdicts.get(CONTROL);
    expect(verdict?.valid).toBe(false);
    expect(verdict?.messages.map((m) => m.rule)).toEqual(expect.arrayContaining(['BR-CO-15']));
  });
});

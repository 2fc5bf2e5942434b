/**
 * The ratios against the hand-written floors, interleaved: each pair (ours, its floor) is loaded in
 * alternating rounds (ours then floor, floor then ours, ...) so that whatever else the two-core
 * machine does falls on both sides alike, and the ratio is taken per round pair. Loads taken minutes
 * apart in `bench:run` moved by more than the gaps they measured (docs/perf.md). An A/A pair (the
 * floor against itself, same alternation) gives the noise band of the moment. Prints figures,
 * asserts nothing.
 *
 *   npx nx run bench:ratios                                  # about 6 minutes
 *   npx nx run bench:ratios --args="--rounds 8 --seconds 4 --warmup 8 --only list"
 */
import 'reflect-metadata';
import { ALL_SCOPES } from '@invoicing/contracts';
import { join } from 'node:path';
import { createOrganizations } from './creates';
import { startSecondInstances, startTokenAndReadFloors } from './instances';
import { LoadOptions, load } from './load';
import { exchangeBody, numberArg, refreshChains, requireStack, RESOURCES, ROOT, serviceUrl, SettingsAccount } from './platform';
import { runBench, stopAll } from './processes';

/** As in bench:run: the resource with small rows, and the one with large ones behind the per-organization gate. */
const LIST_ACROSS = RESOURCES.filter((r) => r === 'products' || r === 'invoices');

interface Pair {
  name: string;
  /** Each load, made when it starts (a refresh load brings chains of fresh tokens). */
  ours: () => LoadOptions | Promise<LoadOptions>;
  floor: () => LoadOptions | Promise<LoadOptions>;
}

function median(values: number[]): number {
  const s = [...values].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string, fallback: number) => numberArg(argv, name, fallback);
  const only = argv.includes('--only') ? argv[argv.indexOf('--only') + 1].split(',') : null;
  const rounds = arg('--rounds', 6);
  const seconds = arg('--seconds', 4);
  // Our services reach their speed only after several seconds of load (JIT): a short warm-up
  // measured the invoice list at 0.72x of its floor in its first 6 s and 1.03-1.10x after.
  const warmup = arg('--warmup', 8);
  const step = (s: string) => process.stderr.write(`bench: ${s}\n`);
  await requireStack();
  const logs = join(ROOT, 'tmp', 'bench');

  step('keys, floors, second instances, 16 organizations');
  const account = await SettingsAccount.signUp();
  const [keyOurs, keyRefresh, keyFloor] = await Promise.all(Array.from({ length: 3 }, () => account.createKey([...ALL_SCOPES])));
  const { second } = await startSecondInstances(logs);
  const floors = await startTokenAndReadFloors(logs, keyFloor);
  const orgs = await createOrganizations(16, (resource) => second[resource]);
  const acrossOrganizations = () => {
    let n = 0;
    return () => ({ body: '', headers: { authorization: `Bearer ${orgs[n++ % orgs.length].token}` } });
  };

  const json = { 'content-type': 'application/json' };
  const tokenPath = '/api/v1/auth/token';
  const floorToken = (): LoadOptions => ({ url: `${floors.token}${tokenPath}`, method: 'POST', headers: json, body: exchangeBody(keyFloor), seconds });
  const pairs: Pair[] = [
    // A/A first: the same floor on both sides, the noise band of this run.
    { name: 'A/A: exchange floor / exchange floor', ours: floorToken, floor: floorToken },
    { name: 'token exchange / exchange floor', ours: () => ({ ...floorToken(), url: serviceUrl('auth-service') + tokenPath, body: exchangeBody(keyOurs) }), floor: floorToken },
    { name: 'refresh (16 chains) / exchange floor', ours: () => refreshChains(keyRefresh, serviceUrl('auth-service'), { seconds }), floor: floorToken },
    ...LIST_ACROSS.map((resource) => ({
      name: `list of 20 ${resource}, 16 organizations / its floor`,
      ours: (): LoadOptions => ({ url: `${second[resource]}/api/v1/${resource}`, method: 'GET', next: acrossOrganizations(), seconds }),
      floor: (): LoadOptions => ({ url: `${floors.read}/api/v1/${resource}`, method: 'GET', next: acrossOrganizations(), seconds }),
    })),
  ];

  const lines: string[] = [];
  for (const pair of pairs) {
    if (only && !only.some((o) => pair.name.includes(o))) continue;
    step(pair.name);
    // Warm-up of both sides.
    await load({ ...(await pair.ours()), seconds: warmup });
    await load({ ...(await pair.floor()), seconds: warmup });
    const ratios: number[] = [];
    const ours: number[] = [];
    const floors: number[] = [];
    let unexpected = 0;
    const rps = async (side: Pair['ours']) => {
      const f = await load(await side());
      unexpected += f.unexpected + f.errors;
      return f.rps;
    };
    for (let r = 0; r < rounds; r++) {
      // ABBA: even rounds ours first, odd rounds the floor first.
      let a: number;
      let b: number;
      if (r % 2 === 0) {
        a = await rps(pair.ours);
        b = await rps(pair.floor);
      } else {
        b = await rps(pair.floor);
        a = await rps(pair.ours);
      }
      ours.push(a);
      floors.push(b);
      ratios.push(a / b);
    }
    const line =
      `${pair.name.padEnd(52)} ratio median ${median(ratios).toFixed(2)}x (rounds ${ratios.map((x) => x.toFixed(2)).join(' ')}); ` +
      `ours ${Math.round(median(ours))}/s, floor ${Math.round(median(floors))}/s` +
      (unexpected ? `; ${unexpected} unexpected answers or errors` : '');
    step(line);
    lines.push(line);
  }
  await stopAll();
  process.stdout.write(`interleaved ratios, ${rounds} rounds of ${seconds} s per side, 16 connections:\n${lines.join('\n')}\n`);
}

runBench(main);

/**
 * The creates alone (creates.ts), for working on the write path: second instances of the resource
 * services (rate limit lifted) and the create floor beside the stack of tools/stack/start.sh.
 *
 *   npx nx run bench:creates                          # about 4 minutes
 *   npx nx run bench:creates --args="--seconds 5"
 */
import 'reflect-metadata';
import { join } from 'node:path';
import { measureCreates } from './creates';
import { startCreateFloor, startSecondInstances } from './instances';
import { numberArg, requireStack, ROOT } from './platform';
import { runBench, stopAll } from './processes';
import { Report } from './report';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const measure = {
    seconds: numberArg(argv, '--seconds', Number(process.env.BENCH_SECONDS ?? 10)),
    warmupSeconds: numberArg(argv, '--warmup', Number(process.env.BENCH_WARMUP_SECONDS ?? 3)),
  };
  await requireStack();
  const step = (s: string) => process.stderr.write(`bench: ${s}\n`);
  const logs = join(ROOT, 'tmp', 'bench');
  const report = new Report();
  const { second } = await startSecondInstances(logs);
  const floor = await startCreateFloor(logs);
  await measureCreates(report, (resource) => second[resource], floor, measure, step);
  await stopAll();
  process.stdout.write(report.render());
}

runBench(main);

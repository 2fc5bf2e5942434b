/**
 * Webhook delivery alone (webhooks.ts), against the stack of tools/stack/start.sh:
 *
 *   npx nx run bench:webhooks                                   # about a minute
 *   npx nx run bench:webhooks --args="--rate 100 --seconds 10 --count 20000"
 */
import 'reflect-metadata';
import { numberArg, requireStack } from './platform';
import { runBench } from './processes';
import { Report } from './report';
import { measureWebhooks } from './webhooks';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string, fallback: number) => numberArg(argv, name, fallback);
  await requireStack('webhook-service');
  const report = new Report();
  await measureWebhooks(report, { rate: arg('--rate', 50), seconds: arg('--seconds', 10), count: arg('--count', 10000) }, (s) => process.stderr.write(`bench: ${s}\n`));
  process.stdout.write(report.render());
}

runBench(main);

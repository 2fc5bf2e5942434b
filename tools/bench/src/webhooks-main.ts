/**
 * Webhook delivery alone (webhooks.ts), against the stack of tools/stack/start.sh:
 *
 *   npx nx run bench:webhooks                                   # about a minute
 *   npx nx run bench:webhooks --args="--rate 100 --seconds 10 --count 20000"
 */
import 'reflect-metadata';
import { serviceUrl } from './platform';
import { runBench } from './processes';
import { Report } from './report';
import { measureWebhooks } from './webhooks';

async function main(): Promise<void> {
  const argv = process.argv.slice(2);
  const arg = (name: string, fallback: number) => {
    const i = argv.indexOf(name);
    return i >= 0 ? Number(argv[i + 1]) : fallback;
  };
  const ready = await fetch(`${serviceUrl('webhook-service')}/health/ready`).catch(() => null);
  if (ready?.status !== 200) throw new Error('the stack (with its webhook service) is not running: start it with `bash tools/stack/start.sh`');
  const report = new Report();
  await measureWebhooks(report, { rate: arg('--rate', 50), seconds: arg('--seconds', 10), count: arg('--count', 10000) }, (s) => process.stderr.write(`bench: ${s}\n`));
  process.stdout.write(report.render());
}

runBench(main);

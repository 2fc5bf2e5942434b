import { appendFileSync, mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from '../../support/processes';

const FILE = join(ROOT, 'tmp', 'resilience', 'figures.jsonl');

/**
 * Prints one figure of the resilience tier and appends it to tmp/resilience/figures.jsonl, the
 * source of the tables in docs/resilience.md. `item` is the numbered item of docs/resilience.md it
 * answers.
 */
export function figure(item: string, name: string, value: string | number, detail: Record<string, unknown> = {}): void {
  mkdirSync(join(ROOT, 'tmp', 'resilience'), { recursive: true });
  const line = { at: new Date().toISOString(), item, name, value, ...detail };
  appendFileSync(FILE, `${JSON.stringify(line)}\n`);
  console.log(`resilience [${item}] ${name}: ${value}${Object.keys(detail).length ? ` ${JSON.stringify(detail)}` : ''}`);
}

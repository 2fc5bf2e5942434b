import { execFileSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The repository explains itself: what the API promises is written in its own docs (docs/api.md,
 * the OpenAPI and AsyncAPI documents), and no file points a reader at documents outside it (a
 * specification or contract kept next to the repository, an issue tracker's item numbers).
 */
const ROOT = join(__dirname, '../../../..');
const OUTSIDE = [/\.\.\/shared\b/, /\bservice-spec\.md\b/, /(?<![\w/-])contract\.md\b/, /\bSTYLE\.md\b/, /\bNOTES\.md\b/, /\b[Ii]ssue #?\d+\b/];

describe('the repository stands alone', () => {
  it('names no document outside itself in any tracked file', () => {
    const files = execFileSync('git', ['ls-files', '-co', '--exclude-standard'], { cwd: ROOT, encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && !f.startsWith('docs/perf-runs/') && !/\.(png|jpg|ico|lock)$/.test(f) && f !== 'package-lock.json');
    const found: string[] = [];
    for (const file of files) {
      let text: string;
      try {
        text = readFileSync(join(ROOT, file), 'utf8');
      } catch {
        continue; // deleted in the working tree
      }
      text.split('\n').forEach((line, i) => {
        if (file === 'tools/nx-plugin/src/workspace/stands-alone.spec.ts') return;
        for (const pattern of OUTSIDE) if (pattern.test(line)) found.push(`${file}:${i + 1}: ${line.trim().slice(0, 120)}`);
      });
    }
    expect(found).toEqual([]);
  });
});

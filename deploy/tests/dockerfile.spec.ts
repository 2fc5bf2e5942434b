import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { ROOT } from './support/platform';

/** Instructions of each stage of the Dockerfile, continuation lines joined. */
function stages(text: string): Map<string, string[]> {
  const lines = text
    .replace(/\\\n\s*/g, ' ')
    .split('\n')
    .map((l) => l.trim())
    .filter((l) => l && !l.startsWith('#'));
  const result = new Map<string, string[]>();
  let current: string[] | undefined;
  for (const line of lines) {
    const from = /^FROM\s+(\S+)(?:\s+AS\s+(\S+))?/i.exec(line);
    if (from) {
      current = [line];
      result.set(from[2] ?? from[1], current);
    } else current?.push(line);
  }
  return result;
}

describe('Dockerfile (one image per app, chosen with APP)', () => {
  const text = readFileSync(join(ROOT, 'Dockerfile'), 'utf8');
  const byStage = stages(text);

  it('builds from node:20-bookworm-slim in two stages: build, then runtime', () => {
    expect(text).toMatch(/^ARG NODE_IMAGE=node:20-bookworm-slim$/m);
    expect([...byStage.keys()]).toEqual(['build', 'runtime']);
    for (const stage of byStage.values()) expect(stage[0]).toMatch(/^FROM \$\{NODE_IMAGE\} AS /);
  });

  it('installs every dependency and builds every app in the build stage, which reads no build argument', () => {
    const build = byStage.get('build') ?? [];
    const joined = build.join('\n');
    expect(joined).toMatch(/^RUN npm ci\b(?!.*--omit).*&& test -x node_modules\/\.bin\/nx$/m);
    expect(joined).toMatch(/^RUN npx nx run-many -t build --projects=tag:type:app\b/m);
    // The same layers for all seven images: one install and one build, whatever APP is.
    expect(build.filter((l) => /^ARG\b/.test(l) || /\$\{?APP\b/.test(l))).toEqual([]);
  });

  it('reads APP and PORT only after the runtime stage has installed its dependencies (shared layer)', () => {
    const runtime = byStage.get('runtime') ?? [];
    const install = runtime.findIndex((l) => /^RUN npm ci --omit=dev\b/.test(l));
    const firstArg = runtime.findIndex((l) => /^ARG\b/.test(l));
    expect(install).toBeGreaterThan(0);
    expect(firstArg).toBeGreaterThan(install);
    expect(runtime[install]).toMatch(/&& test -d node_modules\b/);
  });

  it('ships production dependencies and the compiled app only, as a numeric non-root user', () => {
    const runtime = byStage.get('runtime') ?? [];
    const joined = runtime.join('\n');
    expect(joined).toMatch(/^RUN npm ci --omit=dev\b/m);
    expect(joined).toMatch(/^COPY --from=build \/repo\/dist\/apps\/\$\{APP\} /m);
    expect(runtime.filter((l) => l.startsWith('COPY') && !l.startsWith('COPY --from=build'))).toEqual(['COPY package.json package-lock.json ./']);
    const user = runtime.filter((l) => l.startsWith('USER')).pop();
    expect(user).toMatch(/^USER [1-9]\d*(:[1-9]\d*)?$/);
  });

  it('checks /health/live, runs the app entry point and serves by default', () => {
    const runtime = (byStage.get('runtime') ?? []).join('\n');
    expect(runtime).toMatch(/^HEALTHCHECK .*CMD .*\/health\/live/m);
    expect(runtime).toMatch(/^ENTRYPOINT \["node", "dist\/main\.js"\]$/m);
    expect(runtime).toMatch(/^RUN ln -s "apps\/\$\{APP\}\/apps\/\$\{APP\}\/src\/main\.js" dist\/main\.js/m);
    expect(runtime).toMatch(/^CMD \["serve"\]$/m);
    expect(runtime).toMatch(/^ENV NODE_ENV=production HOST=0\.0\.0\.0/m);
  });

  it('keeps the build context small and free of local state', () => {
    expect(existsSync(join(ROOT, '.dockerignore'))).toBe(true);
    const ignored = readFileSync(join(ROOT, '.dockerignore'), 'utf8').split('\n').map((l) => l.trim());
    for (const entry of ['.git', 'node_modules', 'dist', '.infra', '.nx', 'tmp']) expect(ignored).toContain(entry);
  });
});

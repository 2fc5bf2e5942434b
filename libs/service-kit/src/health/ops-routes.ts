import type { FastifyInstance } from 'fastify';

/** A readiness check: resolves true when the dependency is usable. It must not throw. */
export type ReadinessCheck = () => Promise<boolean> | boolean;

/**
 * The probes' and the scraper's paths (`/health/*`, `/metrics`): asked every few seconds, they would
 * drown the access log and the traces, so neither records them.
 */
export function isOpsPath(url: string | undefined): boolean {
  return url !== undefined && (url.startsWith('/health/') || url === '/metrics');
}

export interface OpsState {
  shuttingDown: boolean;
}

/**
 * `/health/live`: the process serves HTTP. `/health/ready`: every check passes and the instance is
 * not draining; the body names each check so an operator sees which dependency holds it back.
 */
export function installHealthRoutes(
  fastify: FastifyInstance,
  checks: Record<string, ReadinessCheck>,
  state: OpsState,
): void {
  fastify.get('/health/live', async () => ({ status: 'ok' }));
  fastify.get('/health/ready', async (_request, reply) => {
    const entries = await Promise.all(
      Object.entries(checks).map(async ([name, check]) => {
        try {
          return [name, (await withTimeout(Promise.resolve(check()), 2000)) ? 'up' : 'down'] as const;
        } catch {
          return [name, 'down'] as const;
        }
      }),
    );
    const details = Object.fromEntries(entries);
    const ready = !state.shuttingDown && entries.every(([, s]) => s === 'up');
    void reply.status(ready ? 200 : 503).header('Cache-Control', 'no-store');
    return { status: ready ? 'ready' : state.shuttingDown ? 'draining' : 'not_ready', checks: details };
  });
}

function withTimeout<T>(p: Promise<T>, ms: number): Promise<T | false> {
  return new Promise((resolve, reject) => {
    const t = setTimeout(() => resolve(false), ms);
    p.then(
      (v) => {
        clearTimeout(t);
        resolve(v);
      },
      (e: unknown) => {
        clearTimeout(t);
        reject(e);
      },
    );
  });
}

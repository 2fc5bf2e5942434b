import type { OpsState } from '../health/ops-routes';
import { shutdownTracing } from '../tracing';

interface ShutdownLogger {
  info(fields: object, message: string): void;
  error(fields: object | string, message?: string): void;
}

/**
 * On SIGTERM/SIGINT: mark the instance draining (readiness turns 503 so the load balancer stops
 * routing), let `close` finish in-flight work, export the spans still batched (tracing on), then
 * exit; exit anyway after the grace period.
 */
export function drainOnSignals(options: {
  state: OpsState;
  logger: ShutdownLogger;
  close: () => Promise<unknown>;
  graceSeconds: number;
}): void {
  const stop = async (signal: string): Promise<void> => {
    if (options.state.shuttingDown) return;
    options.state.shuttingDown = true;
    options.logger.info({ signal }, 'shutting down');
    const force = setTimeout(() => {
      options.logger.error('shutdown grace period elapsed; exiting');
      process.exit(1);
    }, options.graceSeconds * 1000);
    force.unref();
    let status = 0;
    try {
      await options.close();
    } catch (e) {
      options.logger.error({ err: e }, 'error during shutdown');
      status = 1;
    }
    // After the close: the drained requests' and the closing consumers' spans go out too.
    await shutdownTracing().catch((e: unknown) => options.logger.error({ err: e }, 'error exporting the last spans'));
    process.exit(status);
  };
  process.once('SIGTERM', () => void stop('SIGTERM'));
  process.once('SIGINT', () => void stop('SIGINT'));
}

import { Logger, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import type { IdempotencyStore } from './idempotency';

export interface IdempotencyPurgerOptions {
  /** Between two purges; default one hour. */
  intervalMs?: number;
  /** Before the first purge after start; default one minute (start-up traffic first). */
  firstRunMs?: number;
}

/**
 * Keeps `idempotency_keys` bounded: purges keys past their 24 hours on a schedule, in bounded
 * batches (IdempotencyStore.purgeExpired). One purge at a time per instance; a failed purge (say,
 * Postgres away) is logged and the next one catches up.
 */
export class IdempotencyPurger implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly logger = new Logger(IdempotencyPurger.name);
  private timer: NodeJS.Timeout | null = null;
  private running: Promise<number> | null = null;
  private stopped = false;

  constructor(
    private readonly store: IdempotencyStore,
    private readonly options: IdempotencyPurgerOptions = {},
  ) {}

  onApplicationBootstrap(): void {
    this.schedule(this.options.firstRunMs ?? 60_000);
  }

  async onModuleDestroy(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running?.catch(() => undefined);
  }

  /** Purges now (or joins the purge already running); resolves to the rows deleted. */
  purgeNow(): Promise<number> {
    this.running ??= this.store.purgeExpired().finally(() => {
      this.running = null;
    });
    return this.running;
  }

  private schedule(delayMs: number): void {
    this.timer = setTimeout(() => {
      this.purgeNow().then(
        (deleted) => {
          if (deleted > 0) this.logger.log({ msg: 'idempotency keys purged', deleted });
        },
        (e: unknown) => this.logger.warn({ msg: 'idempotency purge failed; retrying at the next interval', error: String(e) }),
      ).finally(() => {
        if (!this.stopped) this.schedule(this.options.intervalMs ?? 3_600_000);
      });
    }, delayMs);
    this.timer.unref();
  }
}

import { Inject, Injectable, OnApplicationBootstrap, OnModuleDestroy } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { EventPublisher, OutboxRelay } from '@invoicing/event-bus';
import { DataSource } from 'typeorm';
import { EVENT_PUBLISHER, RevocationOutbox } from './revocation-outbox.service';

export { EVENT_PUBLISHER };

const SWEEP_MS = 5000;

/**
 * Runs the shared outbox relay over `auth.outbox`, woken by every enqueued revocation, and the
 * sweeper that moves revocations left pending in Redis into the outbox (ADR 0004).
 */
@Injectable()
export class RevocationRelay implements OnApplicationBootstrap, OnModuleDestroy {
  private readonly relay: OutboxRelay;
  private sweeper: NodeJS.Timeout | null = null;
  /** The sweep under way, if any (awaited on shutdown, so none is cut off half-way). */
  private sweeping: Promise<void> | null = null;

  constructor(
    @InjectDataSource() db: DataSource,
    @Inject(EVENT_PUBLISHER) publisher: EventPublisher,
    private readonly outbox: RevocationOutbox,
  ) {
    // Revocations go out at once: their delivery time is what every resource service waits on.
    this.relay = new OutboxRelay(db, 'auth', publisher, 0);
  }

  onApplicationBootstrap(): void {
    this.outbox.signals.on('enqueued', () => this.relay.kick());
    this.sweeper = setInterval(() => void this.sweep(), SWEEP_MS);
    this.sweeper.unref();
    this.relay.start();
    void this.sweep();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.sweeper) clearInterval(this.sweeper);
    await this.sweeping;
    await this.relay.stop();
  }

  private sweep(): Promise<void> {
    // One sweep at a time: a slow one (Redis or Postgres slow) must not overlap the next, which
    // would retry the same records twice and move the scan's cursor under it.
    this.sweeping ??= this.outbox
      .sweep()
      .then(
        (moved) => {
          if (moved > 0) this.relay.kick();
        },
        () => {
          // Redis or Postgres unreachable: the next sweep retries.
        },
      )
      .finally(() => {
        this.sweeping = null;
      });
    return this.sweeping;
  }
}

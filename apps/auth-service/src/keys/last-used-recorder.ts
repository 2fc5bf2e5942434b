import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

const FLUSH_MS = 5000;

/**
 * Keeps `api_keys.last_used_at` current without a write on the token path: uses are collected in
 * memory and written in one statement every few seconds (and at shutdown). A crash loses at most
 * that many seconds of "last used" precision, never a token.
 */
@Injectable()
export class LastUsedRecorder implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LastUsedRecorder.name);
  private pending = new Map<string, Date>();
  private timer: NodeJS.Timeout | null = null;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  touch(apiKeyUuid: string, at: Date): void {
    this.pending.set(apiKeyUuid, at);
  }

  onApplicationBootstrap(): void {
    this.timer = setInterval(() => void this.flush(), FLUSH_MS);
    this.timer.unref();
  }

  async onApplicationShutdown(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    await this.flush();
  }

  async flush(): Promise<void> {
    if (this.pending.size === 0) return;
    const batch = this.pending;
    this.pending = new Map();
    try {
      await this.db.query(
        `UPDATE auth.api_keys k SET last_used_at = v.at
           FROM (SELECT unnest($1::uuid[]) AS id, unnest($2::timestamptz[]) AS at) v
          WHERE k.id = v.id AND (k.last_used_at IS NULL OR k.last_used_at < v.at)`,
        [[...batch.keys()], [...batch.values()].map((d) => d.toISOString())],
      );
    } catch (e) {
      // Put them back (newer uses win) and try again at the next tick.
      for (const [id, at] of batch) if (!this.pending.has(id)) this.pending.set(id, at);
      this.logger.warn({ msg: 'could not record last use of API keys; will retry', error: String(e) });
    }
  }
}

import { Injectable, Logger, OnApplicationBootstrap, OnApplicationShutdown } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

const FLUSH_MS = 5000;

interface Use {
  apiKeyUuid: string;
  at: Date;
  /** The secret presented (its SHA-256), or null for a refresh, which presents none. */
  secretHash: Buffer | null;
}

/**
 * Keeps `api_keys.last_used_at` (and the last use of each secret) current without a write on the
 * token path: uses are collected in memory and written in one statement every few seconds (and at
 * shutdown). A crash loses at most that many seconds of "last used" precision, never a token.
 *
 * A use names the secret by its hash, and the statement credits whichever column holds that hash
 * when it runs: a use recorded just before a roll and written just after it is credited to the
 * previous secret, as it should be, not to the new one.
 */
@Injectable()
export class LastUsedRecorder implements OnApplicationBootstrap, OnApplicationShutdown {
  private readonly logger = new Logger(LastUsedRecorder.name);
  private pending = new Map<string, Use>();
  private timer: NodeJS.Timeout | null = null;

  constructor(@InjectDataSource() private readonly db: DataSource) {}

  touch(apiKeyUuid: string, at: Date, secretHash: Buffer | null = null): void {
    this.pending.set(secretHash ? `${apiKeyUuid}:${secretHash.toString('hex')}` : apiKeyUuid, { apiKeyUuid, at, secretHash });
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
      const uses = [...batch.values()];
      // One row per key (GREATEST ignores nulls), so a key used with both secrets is updated once.
      await this.db.query(
        `UPDATE auth.api_keys k
            SET last_used_at = GREATEST(k.last_used_at, v.at),
                secret_last_used_at = GREATEST(k.secret_last_used_at, v.current_at),
                previous_secret_last_used_at = GREATEST(k.previous_secret_last_used_at, v.previous_at)
           FROM (SELECT u.id, max(u.at) AS at,
                        max(u.at) FILTER (WHERE u.hash = k2.secret_hash) AS current_at,
                        max(u.at) FILTER (WHERE u.hash = k2.previous_secret_hash) AS previous_at
                   FROM unnest($1::uuid[], $2::timestamptz[], $3::bytea[]) AS u(id, at, hash)
                   JOIN auth.api_keys k2 ON k2.id = u.id
                  GROUP BY u.id) v
          WHERE k.id = v.id`,
        [uses.map((u) => u.apiKeyUuid), uses.map((u) => u.at.toISOString()), uses.map((u) => u.secretHash)],
      );
    } catch (e) {
      // Put them back (newer uses win) and try again at the next tick.
      for (const [id, use] of batch) if (!this.pending.has(id)) this.pending.set(id, use);
      this.logger.warn({ msg: 'could not record last use of API keys; will retry', error: String(e) });
    }
  }
}

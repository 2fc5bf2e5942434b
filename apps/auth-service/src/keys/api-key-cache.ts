import { Injectable } from '@nestjs/common';
import { Clock } from '../common/clock';
import { ApiKeyEntity } from './api-key.entity';
import { ApiKeysService } from './api-keys.service';

/** How long a key read from Postgres is trusted. See the class comment for why this is safe. */
export const API_KEY_CACHE_TTL_MS = 30_000;
const MAX_ENTRIES = 10_000;

interface Entry {
  key: ApiKeyEntity;
  until: number;
}

/**
 * API keys read on the token path (by Client ID on an exchange, by id on a refresh), kept in memory
 * for {@link API_KEY_CACHE_TTL_MS} so that a busy key costs no Postgres round trip per token.
 *
 * A revoked key is still refused at once on every instance: the revocation writes a `revoked` marker
 * into the key's Redis session hash before anything else, and the session scripts that every
 * exchange and refresh must pass check it atomically (a refresh finds its session deleted). The
 * marker outlives the refresh-token lifetime by a day, far longer than a cache entry, and after it
 * Postgres is read again. What the cache may serve stale is only what never changes or only changes
 * towards "revoked" (id, organization, Client ID, secret hash, scopes). This instance also forgets a
 * key the moment it revokes it. Unknown Client IDs are not cached (failures are throttled instead).
 */
@Injectable()
export class ApiKeyCache {
  private readonly byClientId = new Map<string, Entry>();
  private readonly byId = new Map<string, Entry>();
  /** One Postgres read per key at a time, however many requests miss together. */
  private readonly loading = new Map<string, Promise<ApiKeyEntity | null>>();

  constructor(
    private readonly apiKeys: ApiKeysService,
    private readonly clock: Clock,
  ) {}

  findByClientId(clientId: string): Promise<ApiKeyEntity | null> {
    return this.lookup(this.byClientId, `c:${clientId}`, clientId, () => this.apiKeys.findByClientId(clientId));
  }

  findById(id: string): Promise<ApiKeyEntity | null> {
    return this.lookup(this.byId, `i:${id}`, id, () => this.apiKeys.findById(id));
  }

  forget(key: Pick<ApiKeyEntity, 'id' | 'clientId'>): void {
    this.byId.delete(key.id);
    this.byClientId.delete(key.clientId);
  }

  private lookup(
    map: Map<string, Entry>,
    loadingKey: string,
    key: string,
    load: () => Promise<ApiKeyEntity | null>,
  ): Promise<ApiKeyEntity | null> {
    const hit = map.get(key);
    if (hit && hit.until > this.clock.now()) return Promise.resolve(hit.key);
    const inFlight = this.loading.get(loadingKey);
    if (inFlight) return inFlight;
    const promise = load()
      .then((found) => {
        if (found) this.remember(found);
        return found;
      })
      .finally(() => this.loading.delete(loadingKey));
    this.loading.set(loadingKey, promise);
    return promise;
  }

  private remember(key: ApiKeyEntity): void {
    const entry = { key, until: this.clock.now() + API_KEY_CACHE_TTL_MS };
    for (const [map, k] of [
      [this.byClientId, key.clientId],
      [this.byId, key.id],
    ] as const) {
      map.delete(k);
      map.set(k, entry);
      // Maps iterate in insertion order: the first entry is the least recently loaded.
      if (map.size > MAX_ENTRIES) map.delete(map.keys().next().value as string);
    }
  }
}

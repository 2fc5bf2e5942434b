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
 * Postgres is read again. An expiry needs no news at all: the entry carries `expires_at` and every
 * check compares it with the clock.
 *
 * What does change in place (the secrets on a roll, the allowlist, the name) is announced on a
 * Redis channel by the instance that changed it (ApiKeyChanges), and every instance forgets the key
 * at once. Entries are trusted only while that channel is subscribed: while it is down (and until
 * the first subscription after boot) every lookup reads Postgres, and each new subscription starts
 * from an empty cache, so a change announced while this instance was not listening is never served
 * stale. A load that started before a change of its key is not remembered after it. Unknown
 * Client IDs are not cached (failures are throttled instead).
 */
@Injectable()
export class ApiKeyCache {
  private readonly byClientId = new Map<string, Entry>();
  private readonly byId = new Map<string, Entry>();
  /** One Postgres read per key at a time, however many requests miss together. */
  private readonly loading = new Map<string, Promise<ApiKeyEntity | null>>();
  /** Counts forgets; a load remembers the count it began at. */
  private seq = 0;
  /** When (in `seq`) each key (uuid) was last forgotten: a load begun before may hold the old row. */
  private readonly forgottenAt = new Map<string, number>();
  /** Bumped when everything is dropped (setTrusted): no load begun before is remembered. */
  private epoch = 0;
  /** Whether changes are being heard (see the class comment); set by ApiKeyChanges. */
  private trusted = false;

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

  /**
   * Drops one key. Only that key's entries and reads in flight are touched: one tenant changing
   * its keys costs the others' cache nothing.
   */
  forget(key: Pick<ApiKeyEntity, 'id' | 'clientId'>): void {
    if (this.forgottenAt.size >= MAX_ENTRIES) {
      // Bounded: forgetting the history means no read in flight is remembered, which is safe.
      this.forgottenAt.clear();
      this.epoch += 1;
    }
    this.forgottenAt.set(key.id, ++this.seq);
    this.byId.delete(key.id);
    // Requests from now on must not join a read that began before the change.
    this.loading.delete(`i:${key.id}`);
    if (key.clientId) {
      this.byClientId.delete(key.clientId);
      this.loading.delete(`c:${key.clientId}`);
    } else {
      // The Client ID is not known here (the key was not cached): any read by Client ID may be it.
      for (const k of this.loading.keys()) if (k.startsWith('c:')) this.loading.delete(k);
    }
  }

  /** A key changed somewhere (by its uuid, as announced). */
  forgetId(id: string): void {
    const entry = this.byId.get(id);
    this.forget({ id, clientId: entry?.key.clientId ?? '' });
  }

  /**
   * Whether entries may be served: true once changes are heard, false while they may be missed.
   * Either way everything known so far is dropped.
   */
  setTrusted(trusted: boolean): void {
    this.epoch += 1;
    this.forgottenAt.clear();
    this.loading.clear();
    this.trusted = trusted;
    this.byId.clear();
    this.byClientId.clear();
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
    const epoch = this.epoch;
    const began = this.seq;
    const promise = load()
      .then((found) => {
        if (found && this.trusted && epoch === this.epoch && (this.forgottenAt.get(found.id) ?? 0) <= began) this.remember(found);
        return found;
      })
      .finally(() => {
        if (this.loading.get(loadingKey) === promise) this.loading.delete(loadingKey);
      });
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

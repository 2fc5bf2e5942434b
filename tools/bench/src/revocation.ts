import { ApiKey, exchange, refresh, RESOURCE_SERVICES, RESOURCES, SettingsAccount } from './platform';
import type { Resource } from '@invoicing/contracts';

/** Per service: the milliseconds from the revoking response until the service refused the token. */
export type Trial = Record<Resource, number>;

const GIVE_UP_MS = 10_000;

/**
 * Asks one service, back to back, whether the token still works, until it answers 401. Each probe
 * is one keep-alive request (fetch keeps connections open; well under a millisecond here), so the figure is exact to that.
 */
async function timeUntilRefused(base: string, resource: Resource, token: string, since: number): Promise<number> {
  for (;;) {
    const r = await fetch(`${base}/api/v1/${resource}?limit=1`, { headers: { authorization: `Bearer ${token}` } });
    await r.arrayBuffer();
    const elapsed = performance.now() - since;
    if (r.status === 401) return elapsed;
    if (r.status !== 200) throw new Error(`${resource}: unexpected ${r.status} while waiting for the revocation`);
    if (elapsed > GIVE_UP_MS) throw new Error(`${resource}: the revoked token was still accepted after ${GIVE_UP_MS} ms`);
  }
}

async function watchAll(bases: Record<Resource, string>, token: string, since: number): Promise<Trial> {
  const times = await Promise.all(RESOURCES.map((r) => timeUntilRefused(bases[r], r, token, since)));
  return Object.fromEntries(RESOURCES.map((r, i) => [r, times[i]])) as Trial;
}

async function accepted(bases: Record<Resource, string>, token: string): Promise<void> {
  for (const r of RESOURCES) {
    const res = await fetch(`${bases[r]}/api/v1/${r}?limit=1`, { headers: { authorization: `Bearer ${token}` } });
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`${r}: a fresh token got ${res.status}`);
  }
}

/**
 * Refresh-token reuse: exchange, refresh once, present the spent token again (400, every session
 * of the key revoked), then time each service until it refuses the first access token.
 */
export async function reuseTrials(key: ApiKey, bases: Record<Resource, string>, trials: number): Promise<Trial[]> {
  const out: Trial[] = [];
  for (let i = 0; i < trials; i++) {
    const pair = await exchange(key);
    await accepted(bases, pair.access_token);
    const first = await refresh(pair.refresh_token);
    if (first.status !== 200) throw new Error(`refresh failed: ${first.status}`);
    const reuse = await refresh(pair.refresh_token);
    const since = performance.now();
    if (reuse.status !== 400) throw new Error(`reuse answered ${reuse.status}, not 400`);
    out.push(await watchAll(bases, pair.access_token, since));
  }
  return out;
}

/** Key revocation in the settings area: a new key each trial, revoked, then timed the same way. */
export async function keyRevokeTrials(account: SettingsAccount, scopes: string[], bases: Record<Resource, string>, trials: number): Promise<Trial[]> {
  const out: Trial[] = [];
  for (let i = 0; i < trials; i++) {
    const key = await account.createKey(scopes);
    const pair = await exchange(key);
    await accepted(bases, pair.access_token);
    await account.revokeKey(key.id);
    const since = performance.now();
    out.push(await watchAll(bases, pair.access_token, since));
  }
  return out;
}

export function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)];
}

export function summarize(trials: Trial[]): Record<Resource, { p50: number; p99: number; max: number }> {
  return Object.fromEntries(
    RESOURCES.map((r) => {
      const v = trials.map((t) => t[r]);
      return [r, { p50: percentile(v, 50), p99: percentile(v, 99), max: Math.max(...v) }];
    }),
  ) as Record<Resource, { p50: number; p99: number; max: number }>;
}

export { RESOURCE_SERVICES };

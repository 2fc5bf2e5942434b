import { Resource, RESOURCES } from './manifest';

// Each resource of the manifest has a `read:` and a `write:` scope (docs/api.md section 5), and so
// do the webhook endpoints an integration may register for itself.

export const SCOPE_ACTIONS = ['read', 'write'] as const;
export type ScopeAction = (typeof SCOPE_ACTIONS)[number];

/** What a scope grants access to besides the resources: an organization's webhook endpoints. */
export const WEBHOOK_ENDPOINTS = 'webhook_endpoints';

export type Scope = `${ScopeAction}:${Resource | typeof WEBHOOK_ENDPOINTS}`;

/** Every scope a key may carry, in a stable display order (grouped by resource, webhook endpoints last). */
export const ALL_SCOPES: readonly Scope[] = [...RESOURCES, WEBHOOK_ENDPOINTS].flatMap((r) =>
  SCOPE_ACTIONS.map((a) => `${a}:${r}` as Scope),
);

const SCOPE_SET: ReadonlySet<string> = new Set(ALL_SCOPES);

export function isScope(value: unknown): value is Scope {
  return typeof value === 'string' && SCOPE_SET.has(value);
}

/**
 * Splits an RFC 6749 scope string (space-delimited). Returns null when it is malformed
 * (empty tokens from double spaces, or characters outside the RFC's scope-token grammar).
 */
export function splitScopeString(value: string): string[] | null {
  if (value.length === 0) return [];
  const parts = value.split(' ');
  // RFC 6749 section 3.3: scope-token = 1*( %x21 / %x23-5B / %x5D-7E )
  if (parts.some((p) => !/^[\x21\x23-\x5b\x5d-\x7e]+$/.test(p))) return null;
  return parts;
}

/** Canonical scope string: unique, in ALL_SCOPES order, single spaces. */
export function formatScopes(scopes: Iterable<string>): string {
  const wanted = new Set(scopes);
  return ALL_SCOPES.filter((s) => wanted.has(s)).join(' ');
}

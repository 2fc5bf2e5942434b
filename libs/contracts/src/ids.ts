import { uuidv7 } from 'uuidv7';
import { DomainObjectKind, RESOURCE_MANIFEST, RESOURCES } from './manifest';

type Manifest = typeof RESOURCE_MANIFEST;
type ResourcePrefixes = { [R in keyof Manifest as Manifest[R]['kind']]: Manifest[R]['idPrefix'] };

/**
 * Prefixes of the objects that are not resources: the auth service's, then the webhook service's
 * (the resources' come from the manifest; the resource generator reads this block to avoid them).
 */
const AUTH_ID_PREFIXES = {
  organization: 'org',
  apiKey: 'key',
  session: 'ses',
  user: 'usr',
  event: 'evt',
  webhookEndpoint: 'wep',
  webhookEvent: 'wev',
  webhookAttempt: 'wat',
} as const;

/**
 * Object id prefixes (docs/api.md section 2). Ids are `<prefix>_<32 hex digits of a UUIDv7>`: opaque to
 * callers, time-ordered underneath so that they sort by creation and page well, and stored as a
 * native `uuid` column.
 */
export const ID_PREFIXES: typeof AUTH_ID_PREFIXES & ResourcePrefixes = {
  ...AUTH_ID_PREFIXES,
  ...(Object.fromEntries(RESOURCES.map((r) => [RESOURCE_MANIFEST[r].kind, RESOURCE_MANIFEST[r].idPrefix])) as ResourcePrefixes),
};

/** `invoice` → `inv`. */
export function idPrefixOf(kind: DomainObjectKind): IdPrefix {
  return ID_PREFIXES[kind];
}
export type IdPrefix = (typeof ID_PREFIXES)[keyof typeof ID_PREFIXES];

const HEX32 = /^[0-9a-f]{32}$/;

/** A new prefixed id, e.g. `inv_01932c...`. */
export function newId(prefix: IdPrefix): string {
  return toPublicId(prefix, uuidv7());
}

/** `inv` + `0193...-....` (uuid) → `inv_0193...` */
export function toPublicId(prefix: IdPrefix, uuid: string): string {
  return `${prefix}_${uuid.replace(/-/g, '')}`;
}

/**
 * The uuid behind a prefixed id, or null when the value is not an id of that type. Callers treat
 * null exactly like "not found" so that a malformed id and an absent one are indistinguishable.
 */
export function parsePublicId(prefix: IdPrefix, value: unknown): string | null {
  if (typeof value !== 'string' || value.length !== prefix.length + 33) return null;
  if (!value.startsWith(`${prefix}_`)) return null;
  const hex = value.slice(prefix.length + 1);
  if (!HEX32.test(hex)) return null;
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

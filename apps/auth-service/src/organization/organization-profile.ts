import {
  ORGANIZATION_PROFILE_CHANGED_V1,
  ORGANIZATION_PROFILE_FIELDS,
  OrganizationProfile,
  OrganizationProfileChangedV1,
  OrganizationProfileField,
  PostalAddress,
  toPublicId,
} from '@invoicing/contracts';
import { nameBasedEventId } from '@invoicing/event-bus';
import type { JsonObject } from '../audit/audit-chain';
import { EVENT_SOURCE } from '../revocation/revocation-events.factory';
import type { ProfilePatch, ProfileValues } from './profile-fields';

/**
 * What a change of an organization's profile is (ADR 0039), free of I/O: the profile as the API
 * answers it, which fields a PATCH changes, what the audit log records of it and the event that
 * announces it. OrganizationProfileService runs these in the transaction of the change.
 */

/** A profile as stored: its values, its version (0: never changed) and when it last changed. */
export interface StoredProfile extends ProfileValues {
  version: number;
  updatedAt: Date | null;
}

/** What an organization that never set its profile has. */
export const EMPTY_PROFILE: StoredProfile = Object.freeze({
  legal_name: null,
  address: null,
  vat_id: null,
  email: null,
  iban: null,
  bic: null,
  payment_terms: null,
  version: 0,
  updatedAt: null,
});

const ADDRESS_KEYS = ['line1', 'line2', 'city', 'postal_code', 'region', 'country'] as const;

/** An address with every key, in the API's order (jsonb gives keys back in an order of its own). */
export function addressOf(value: Partial<Record<(typeof ADDRESS_KEYS)[number], string | null>> | null): PostalAddress | null {
  if (value === null) return null;
  return Object.fromEntries(ADDRESS_KEYS.map((key) => [key, value[key] ?? null])) as unknown as PostalAddress;
}

function sameValue(a: ProfileValues[OrganizationProfileField], b: ProfileValues[OrganizationProfileField]): boolean {
  if (a === null || b === null || typeof a === 'string' || typeof b === 'string') return a === b;
  return ADDRESS_KEYS.every((key) => (a[key] ?? null) === (b[key] ?? null));
}

/** The fields `patch` gives a value other than the one `current` has, in the profile's field order. */
export function changedFields(current: ProfileValues, patch: ProfilePatch): OrganizationProfileField[] {
  return ORGANIZATION_PROFILE_FIELDS.filter((field) => patch[field] !== undefined && !sameValue(current[field], patch[field] as ProfileValues[typeof field]));
}

/** The values after the patch: those it sent, the others as they were. */
export function applyPatch(current: ProfileValues, patch: ProfilePatch): ProfileValues {
  const next = {} as Record<OrganizationProfileField, unknown>;
  for (const field of ORGANIZATION_PROFILE_FIELDS) next[field] = patch[field] === undefined ? current[field] : patch[field];
  return next as unknown as ProfileValues;
}

/** The profile as `GET /api/v1/settings/organization` answers it, of the organization (uuid). */
export function profileView(organizationId: string, stored: StoredProfile): OrganizationProfile {
  return {
    object: 'organization_profile',
    organization_id: toPublicId('org', organizationId),
    legal_name: stored.legal_name,
    address: addressOf(stored.address),
    vat_id: stored.vat_id,
    email: stored.email,
    iban: stored.iban,
    bic: stored.bic,
    payment_terms: stored.payment_terms,
    version: stored.version,
    updated_at: stored.updatedAt ? stored.updatedAt.toISOString() : null,
  };
}

/** An IBAN's last 4 characters, all of it the audit log ever holds; null for none. */
export function ibanLast4(iban: string | null): string | null {
  return iban === null ? null : iban.slice(-4);
}

/**
 * The data of an `organization.profile_updated` record: the names of the fields changed and the
 * version reached. Values are not recorded (they are the profile's, read in Settings); of an IBAN
 * changed, its last 4 characters before and after, so that a security team can tell a changed
 * payee account at a glance without the log holding an account number.
 */
export function auditDataOf(previous: ProfileValues, next: ProfileValues, changed: OrganizationProfileField[], version: number): JsonObject {
  return {
    changed_fields: changed,
    version,
    ...(changed.includes('iban') ? { iban_last4: ibanLast4(next.iban), previous_iban_last4: ibanLast4(previous.iban) } : {}),
  };
}

/**
 * The event of a change: the whole profile after it, keyed by the organization. Its id is derived
 * from the organization and the version, so the one change is the one event, however often written.
 */
export function profileChangedEvent(profile: OrganizationProfile, changed: OrganizationProfileField[]): OrganizationProfileChangedV1 {
  if (profile.updated_at === null || profile.version < 1) throw new Error('a profile that never changed has no change to announce');
  return {
    specversion: '1.0',
    id: nameBasedEventId(`organization_profile_changed/${profile.organization_id}/${profile.version}`),
    source: EVENT_SOURCE,
    type: ORGANIZATION_PROFILE_CHANGED_V1,
    subject: profile.organization_id,
    time: profile.updated_at,
    datacontenttype: 'application/json',
    data: { organization_id: profile.organization_id, version: profile.version, changed_fields: changed, profile },
  };
}

import type { FieldError } from './problem-details.js';

/**
 * Settings → Organization without DOM (unit-tested): the profile as the auth service answers it
 * (`GET /api/v1/settings/organization`, docs/api.md section 9), the form's values, the PATCH body of
 * what the person changed, and the server's field names as the form's. The page does not check or
 * normalize values (the IBAN's check digits, a BIC's shape): the server does and answers the stored
 * form, which the page then shows.
 */

/** An address as the API answers it: every key present, null where none was given. */
export interface PostalAddress {
  line1: string;
  line2: string | null;
  city: string;
  postal_code: string | null;
  region: string | null;
  country: string;
}

export interface OrganizationProfile {
  object: 'organization_profile';
  organization_id: string;
  legal_name: string | null;
  address: PostalAddress | null;
  vat_id: string | null;
  email: string | null;
  /** Normalized: upper case, no spaces. */
  iban: string | null;
  bic: string | null;
  payment_terms: string | null;
  /** How many changes the profile has had (0: never set). */
  version: number;
  updated_at: string | null;
}

/** An address as a PATCH sends it: replaced whole; keys left out are empty. */
export interface AddressInput {
  line1?: string;
  line2?: string;
  city?: string;
  postal_code?: string;
  region?: string;
  country?: string;
}

/** A PATCH body: only the fields sent change, null clears one. */
export interface ProfilePatch {
  legal_name?: string | null;
  address?: AddressInput | null;
  vat_id?: string | null;
  email?: string | null;
  iban?: string | null;
  bic?: string | null;
  payment_terms?: string | null;
}

type TextField = Exclude<keyof ProfilePatch, 'address'>;
const TEXT_FIELDS: readonly TextField[] = ['legal_name', 'vat_id', 'email', 'iban', 'bic', 'payment_terms'];

/** The address's form controls, by name, and the address key each edits (the page offers no region). */
const ADDRESS_CONTROLS = {
  address_line1: 'line1',
  address_line2: 'line2',
  address_postal_code: 'postal_code',
  address_city: 'city',
  address_country: 'country',
} as const;
type AddressControl = keyof typeof ADDRESS_CONTROLS;
type AddressKey = (typeof ADDRESS_CONTROLS)[AddressControl];

/** The form's controls (their `name`s), in the form's order. */
export type ProfileFormField = TextField | AddressControl;
export const PROFILE_FORM_FIELDS: readonly ProfileFormField[] = [
  'legal_name',
  'address_line1',
  'address_line2',
  'address_postal_code',
  'address_city',
  'address_country',
  'vat_id',
  'email',
  'iban',
  'bic',
  'payment_terms',
];

/** What each control holds, as typed. */
export type ProfileFormValues = Record<ProfileFormField, string>;

/** A value as compared and sent: line breaks as the textarea gives them (LF), no surrounding blanks. */
function clean(value: string): string {
  return value.replace(/\r\n?/g, '\n').trim();
}

/** The form's values for a profile: '' for every field not set. */
export function formValuesOf(profile: OrganizationProfile): ProfileFormValues {
  const values = {} as ProfileFormValues;
  for (const field of TEXT_FIELDS) values[field] = profile[field] ?? '';
  for (const [control, key] of Object.entries(ADDRESS_CONTROLS) as [AddressControl, AddressKey][]) values[control] = profile.address?.[key] ?? '';
  return values;
}

/** The address's lines as compared: cleaned, the country code upper-cased (`de` means DE). */
function addressParts(values: ProfileFormValues): Record<AddressKey, string> {
  const parts = {} as Record<AddressKey, string>;
  for (const [control, key] of Object.entries(ADDRESS_CONTROLS) as [AddressControl, AddressKey][]) parts[key] = clean(values[control]);
  parts.country = parts.country.toUpperCase();
  return parts;
}

/**
 * The PATCH body for what the form changes of `profile`: only the fields whose value differs, each
 * as typed (trimmed), null for one emptied. The address goes whole (the API replaces it whole) when
 * any of its lines changed: its non-empty lines, the region the page does not show kept as it was,
 * or null when every line is empty. Lines the API requires (line 1, city, country) are left out
 * when empty, so that its answer names them.
 */
export function profilePatch(profile: OrganizationProfile, values: ProfileFormValues): ProfilePatch {
  const patch: ProfilePatch = {};
  for (const field of TEXT_FIELDS) {
    const typed = clean(values[field]);
    if (typed === clean(profile[field] ?? '')) continue;
    patch[field] = typed === '' ? null : typed;
  }
  const before = addressParts(formValuesOf(profile));
  const after = addressParts(values);
  const keys = Object.keys(after) as AddressKey[];
  if (keys.some((key) => after[key] !== before[key])) {
    if (keys.every((key) => after[key] === '')) {
      patch.address = null;
    } else {
      const address: AddressInput = {};
      for (const key of keys) if (after[key] !== '') address[key] = after[key];
      if (profile.address?.region) address.region = profile.address.region;
      patch.address = address;
    }
  }
  return patch;
}

const ADDRESS_FIELD = /^[/$.]*address(?:[./]|\[)(\w+)\]?$/;

/**
 * The form's name for a field the server names: `address.city` is the `address_city` control; an
 * address key without a control of its own (`region`) belongs to the address as a whole; the rest
 * keep their names (`iban`).
 */
export function formFieldOf(field: string): string {
  const match = ADDRESS_FIELD.exec(field);
  if (!match) return field;
  const control = (Object.keys(ADDRESS_CONTROLS) as AddressControl[]).find((c) => ADDRESS_CONTROLS[c] === match[1]);
  return control ?? 'address';
}

/** The server's field errors with the form's field names ({@link formFieldOf}). */
export function formFieldErrors(errors: readonly FieldError[]): FieldError[] {
  return errors.map((error) => ({ ...error, field: formFieldOf(error.field) }));
}

/** `DE89370400440532013000` → `DE89 3704 0044 0532 0130 00`, for reading only (what is sent is what was typed). */
export function groupIban(iban: string): string {
  return iban.replace(/\s+/g, '').replace(/(.{4})(?=.)/g, '$1 ');
}

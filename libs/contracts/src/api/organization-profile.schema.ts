import { ADDRESS_OBJECT_SCHEMA, ADDRESS_SCHEMA, PostalAddress, PostalAddressInput } from './clients.schema';
import { idOf, nullable, TIMESTAMP } from './common.schema';

/**
 * Settings → Organization (docs/api.md section 9, ADR 0039): who the organization is as a seller,
 * printed on its invoices. One profile per organization, kept by the auth service, changed field by
 * field with PATCH, versioned, and announced on the domain topic
 * (`invoicing.settings.organization_profile_changed.v1`, events/domain-events.ts).
 */

/** The profile's fields, in the order the API shows them. */
export const ORGANIZATION_PROFILE_FIELDS = ['legal_name', 'address', 'vat_id', 'email', 'iban', 'bic', 'payment_terms'] as const;
export type OrganizationProfileField = (typeof ORGANIZATION_PROFILE_FIELDS)[number];

/**
 * The longest value of each text field, once normalized (IBAN, BIC and VAT id without their
 * spaces); a request may send IBAN, BIC and VAT id with spaces, up to {@link ORGANIZATION_PROFILE_INPUT_LIMITS}.
 */
export const ORGANIZATION_PROFILE_LIMITS = {
  legal_name: 200,
  vat_id: 15,
  email: 254,
  iban: 34,
  bic: 11,
  payment_terms: 1000,
} as const;

/** The longest value a request may send: room for the spaces people type into IBANs, BICs and VAT ids. */
export const ORGANIZATION_PROFILE_INPUT_LIMITS = {
  ...ORGANIZATION_PROFILE_LIMITS,
  vat_id: 32,
  iban: 48,
  bic: 16,
} as const;

/** A BIC (ISO 9362): bank (4 letters), country (2 letters), location (2), and an optional branch (3). */
export const BIC_PATTERN = '^[A-Z]{4}[A-Z]{2}[A-Z0-9]{2}([A-Z0-9]{3})?$';
/** A VAT identification number: a 2-letter prefix (the country's; EL for Greece, XI for Northern Ireland) and 2 to 13 letters or digits. */
export const VAT_ID_PATTERN = '^[A-Z]{2}[A-Z0-9]{2,13}$';
/** An IBAN's shape (ISO 13616): country, 2 check digits, then 11 to 30 letters or digits. The check digits and each country's length are checked beyond it. */
export const IBAN_PATTERN = '^[A-Z]{2}[0-9]{2}[A-Z0-9]{11,30}$';

const text = (field: keyof typeof ORGANIZATION_PROFILE_INPUT_LIMITS, description: string) => ({
  type: ['string', 'null'],
  maxLength: ORGANIZATION_PROFILE_INPUT_LIMITS[field],
  description: `${description} null clears it.`,
});

/**
 * `PATCH /api/v1/settings/organization`: only the fields sent change; `null` clears one; any other
 * field is refused (422 `unknown_field`). The schema bounds types and lengths; the rest (IBAN check
 * digits, BIC and VAT id shapes, control characters) is checked by the auth service, each fault
 * named in `errors[]`.
 */
export const UPDATE_ORGANIZATION_PROFILE_SCHEMA = {
  $id: 'UpdateOrganizationProfileRequest',
  type: 'object',
  additionalProperties: false,
  properties: {
    legal_name: text('legal_name', 'The registered name printed on invoices, 1 to 200 characters (trimmed).'),
    address: {
      ...ADDRESS_SCHEMA,
      type: ['object', 'null'],
      description: 'The registered address, replaced whole (line1, city and country required). null clears it.',
    },
    vat_id: text('vat_id', 'VAT identification number: a 2-letter prefix and 2 to 13 letters or digits (DE123456789); spaces, dots and hyphens are dropped, letters upper-cased.'),
    email: text('email', 'Billing contact email printed on invoices.'),
    iban: text(
      'iban',
      'IBAN for payments by transfer: spaces are dropped and letters upper-cased; the check digits (ISO 7064 mod 97-10) must match, and for a SEPA country the length must be that country\'s (22 for DE). Answered in full to the session; never recorded whole in the audit log.',
    ),
    bic: text('bic', 'BIC (SWIFT code) of the IBAN\'s bank: 8 or 11 letters and digits, upper-cased.'),
    payment_terms: text('payment_terms', 'Free text printed on invoices (e.g. "Payable within 30 days."), up to 1000 characters; line breaks allowed.'),
  },
} as const;

/**
 * The organization's profile as `GET` and `PATCH /api/v1/settings/organization` answer it, and as
 * the `organization_profile_changed` event carries it. An organization that never set one has every
 * field null, `version` 0 and `updated_at` null.
 */
export const ORGANIZATION_PROFILE_SCHEMA = {
  $id: 'OrganizationProfile',
  type: 'object',
  additionalProperties: false,
  required: ['object', 'organization_id', ...ORGANIZATION_PROFILE_FIELDS, 'version', 'updated_at'],
  properties: {
    object: { const: 'organization_profile' },
    organization_id: idOf('org', 'The organization the profile belongs to (one profile per organization: it has no id of its own).'),
    legal_name: nullable({ type: 'string', maxLength: ORGANIZATION_PROFILE_LIMITS.legal_name }),
    address: ADDRESS_OBJECT_SCHEMA,
    vat_id: nullable({ type: 'string', pattern: VAT_ID_PATTERN }),
    email: nullable({ type: 'string', maxLength: ORGANIZATION_PROFILE_LIMITS.email }),
    iban: nullable({ type: 'string', pattern: IBAN_PATTERN, description: 'Normalized: upper case, no spaces.' }),
    bic: nullable({ type: 'string', pattern: BIC_PATTERN }),
    payment_terms: nullable({ type: 'string', maxLength: ORGANIZATION_PROFILE_LIMITS.payment_terms }),
    version: {
      type: 'integer',
      minimum: 0,
      description: 'How many changes the profile has had: 0 before the first, then one more per PATCH that changed something.',
    },
    updated_at: nullable({ ...TIMESTAMP, description: 'When the profile last changed (RFC 3339, UTC, milliseconds); null before the first change.' }),
  },
} as const;

export interface OrganizationProfile {
  object: 'organization_profile';
  organization_id: string;
  legal_name: string | null;
  address: PostalAddress | null;
  vat_id: string | null;
  email: string | null;
  iban: string | null;
  bic: string | null;
  payment_terms: string | null;
  version: number;
  updated_at: string | null;
}

export interface UpdateOrganizationProfileRequest {
  legal_name?: string | null;
  address?: PostalAddressInput | null;
  vat_id?: string | null;
  email?: string | null;
  iban?: string | null;
  bic?: string | null;
  payment_terms?: string | null;
}

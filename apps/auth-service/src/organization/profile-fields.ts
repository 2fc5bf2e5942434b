import {
  ADDRESS_SCHEMA,
  BIC_PATTERN,
  isCountryCode,
  ORGANIZATION_PROFILE_FIELDS,
  ORGANIZATION_PROFILE_LIMITS,
  OrganizationProfileField,
  PostalAddress,
  PostalAddressInput,
  UPDATE_ORGANIZATION_PROFILE_SCHEMA,
  UpdateOrganizationProfileRequest,
  VAT_ID_PATTERN,
} from '@invoicing/contracts';
import { compileBody, FieldError, ProblemException } from '@invoicing/service-kit';

/**
 * The fields of Settings → Organization (ADR 0039), checked and normalized one by one, free of I/O.
 * The request schema has bounded types and lengths already (and refused unknown fields); what is
 * checked here is what a schema cannot say, or cannot say with a message a person can act on. Every
 * fault names its field; the whole request is refused when any field is at fault, so nothing changes.
 */

/** A field's value as stored and answered (null: cleared), or what is wrong with it. */
export type FieldCheck<T> = { ok: true; value: T } | { ok: false; error: FieldError };

/** What a PATCH changes: only the fields it sent, each normalized, null to clear. */
export type ProfilePatch = { [F in OrganizationProfileField]?: ProfileValues[F] };

/** The profile's values, as stored. */
export interface ProfileValues {
  legal_name: string | null;
  address: PostalAddress | null;
  vat_id: string | null;
  email: string | null;
  iban: string | null;
  bic: string | null;
  payment_terms: string | null;
}

/**
 * Characters no field may hold: C0 and C1 controls (tab and line breaks included: they are allowed
 * in payment terms only), the Unicode line and paragraph separators, and the bidirectional embedding,
 * override and isolate controls, which would make a legal name or an IBAN printed on an invoice read
 * otherwise than what is stored.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN = /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;
/** The same, but line feed and carriage return are allowed (a multi-line text). */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN_MULTILINE = /[\u0000-\u0009\u000b\u000c\u000e-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]/;

const fault = (field: string, code: string, message: string): { ok: false; error: FieldError } => ({ ok: false, error: { field, code, message } });

/**
 * A text field: no control characters (line breaks only when `multiline`), trimmed, not blank
 * (null clears a field, not ''), at most `max` characters.
 */
export function checkText(field: string, input: string, max: number, options: { multiline?: boolean } = {}): FieldCheck<string> {
  if ((options.multiline ? FORBIDDEN_MULTILINE : FORBIDDEN).test(input)) {
    return fault(field, 'invalid_characters', options.multiline ? 'must not contain control characters other than line breaks' : 'must not contain control characters or line breaks');
  }
  const value = input.trim();
  if (value.length === 0) return fault(field, 'required', 'must not be blank: send null to clear it');
  if (value.length > max) return fault(field, 'out_of_range', `must be at most ${max} characters`);
  return { ok: true, value };
}

/**
 * IBAN lengths of the SEPA countries (EPC list of the scheme's geographical scope; territories such
 * as the French overseas departments, Åland or Jersey use their country's IBAN format). An IBAN of
 * one of these countries must have exactly this length; one of another country 15 to 34 characters.
 */
export const SEPA_IBAN_LENGTHS: Readonly<Record<string, number>> = Object.freeze({
  AD: 24, AL: 28, AT: 20, BE: 16, BG: 22, CH: 21, CY: 28, CZ: 24, DE: 22, DK: 18, EE: 20, ES: 24, FI: 18, FR: 27,
  GB: 22, GI: 23, GR: 27, HR: 21, HU: 28, IE: 22, IS: 26, IT: 27, LI: 21, LT: 20, LU: 20, LV: 21, MC: 27, MD: 24,
  ME: 22, MK: 19, MT: 31, NL: 18, NO: 15, PL: 28, PT: 25, RO: 24, SE: 24, SI: 19, SK: 24, SM: 27, VA: 22,
});

/** The IBAN as stored: without spaces (people type it in groups of four), upper case. */
export function normalizeIban(input: string): string {
  return input.replace(/ /g, '').toUpperCase();
}

/**
 * ISO 7064 MOD 97-10 over a normalized IBAN: the first four characters moved to the end, letters
 * as numbers (A = 10 ... Z = 35), the whole number mod 97 must be 1. Computed piecewise, so that no
 * number ever exceeds what a double holds exactly.
 */
export function ibanChecksumValid(iban: string): boolean {
  const rearranged = iban.slice(4) + iban.slice(0, 4);
  let remainder = 0;
  for (const char of rearranged) {
    const code = char.charCodeAt(0);
    const digits = code >= 65 && code <= 90 ? String(code - 55) : char;
    for (const digit of digits) remainder = (remainder * 10 + Number(digit)) % 97;
  }
  return remainder === 1;
}

/** Kosovo's IBANs start with XK, a code ISO 3166 leaves to users and the IBAN registry assigns. */
const IBAN_ONLY_COUNTRIES = new Set(['XK']);

export function checkIban(input: string, field = 'iban'): FieldCheck<string> {
  if (FORBIDDEN.test(input)) return fault(field, 'invalid_characters', 'must not contain control characters or line breaks');
  const iban = normalizeIban(input.trim());
  if (iban.length === 0) return fault(field, 'required', 'must not be blank: send null to clear it');
  if (!/^[A-Z]{2}[0-9]{2}[A-Z0-9]+$/.test(iban)) {
    return fault(field, 'invalid_format', 'must be an IBAN: a 2-letter country code, 2 check digits, then the account number in letters and digits');
  }
  const country = iban.slice(0, 2);
  if (!isCountryCode(country) && !IBAN_ONLY_COUNTRIES.has(country)) return fault(field, 'invalid_country', `must start with a country code; ${country} is none`);
  const expected = SEPA_IBAN_LENGTHS[country];
  if (expected !== undefined && iban.length !== expected) {
    return fault(field, 'invalid_length', `must have ${expected} characters for ${country} (without spaces); it has ${iban.length}`);
  }
  if (iban.length < 15 || iban.length > ORGANIZATION_PROFILE_LIMITS.iban) {
    return fault(field, 'invalid_length', `must have 15 to ${ORGANIZATION_PROFILE_LIMITS.iban} characters (without spaces); it has ${iban.length}`);
  }
  if (!ibanChecksumValid(iban)) return fault(field, 'invalid_checksum', 'has check digits that do not match the rest: check it for a typo');
  return { ok: true, value: iban };
}

const BIC = new RegExp(BIC_PATTERN);

/** A BIC: spaces dropped, upper case, 8 or 11 characters (bank, country, location, optional branch). */
export function checkBic(input: string, field = 'bic'): FieldCheck<string> {
  if (FORBIDDEN.test(input)) return fault(field, 'invalid_characters', 'must not contain control characters or line breaks');
  const bic = input.replace(/ /g, '').toUpperCase();
  if (bic.length === 0) return fault(field, 'required', 'must not be blank: send null to clear it');
  if (!BIC.test(bic)) {
    return fault(field, 'invalid_format', 'must be a BIC: 8 or 11 letters and digits (bank: 4 letters, country: 2 letters, location: 2, branch: 3 optional)');
  }
  return { ok: true, value: bic };
}

const VAT_ID = new RegExp(VAT_ID_PATTERN);

/** A VAT id: spaces, dots and hyphens dropped, upper case, a 2-letter prefix and 2 to 13 letters or digits. */
export function checkVatId(input: string, field = 'vat_id'): FieldCheck<string> {
  if (FORBIDDEN.test(input)) return fault(field, 'invalid_characters', 'must not contain control characters or line breaks');
  const vatId = input.replace(/[ .-]/g, '').toUpperCase();
  if (vatId.length === 0) return fault(field, 'required', 'must not be blank: send null to clear it');
  if (!VAT_ID.test(vatId)) return fault(field, 'invalid_format', 'must be a VAT identification number: a 2-letter prefix, then 2 to 13 letters or digits (DE123456789)');
  return { ok: true, value: vatId };
}

/**
 * An email's shape: a local part of at most 64 characters without spaces, quotes or brackets, `@`,
 * and a domain of dot-separated labels (letters, digits, inner hyphens; IDNs in their `xn--` form)
 * ending in a label of letters. Whether it receives mail is not checked.
 */
const EMAIL = /^[^\s@"(),:;<>[\]\\]{1,64}@(?=.{1,253}$)(?:[A-Za-z0-9](?:[A-Za-z0-9-]{0,61}[A-Za-z0-9])?\.)+(?:[A-Za-z]{2,63}|xn--[A-Za-z0-9-]{1,59})$/;

export function checkEmail(input: string, field = 'email'): FieldCheck<string> {
  const text = checkText(field, input, ORGANIZATION_PROFILE_LIMITS.email);
  if (!text.ok) return text;
  if (!EMAIL.test(text.value)) return fault(field, 'invalid_format', 'must be an email address (name@example.com)');
  return text;
}

/**
 * An address (the request schema has checked its keys, their types and lengths, and the country
 * code): every line trimmed and free of control characters, the optional ones null when absent or
 * blank, every key present as the API answers it.
 */
export function checkAddress(input: PostalAddressInput, field = 'address'): { ok: true; value: PostalAddress } | { ok: false; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const line = (key: keyof PostalAddressInput, max: number, required: boolean): string | null => {
    const raw = input[key];
    if (raw === undefined || (!required && raw.trim() === '' && !FORBIDDEN.test(raw))) return null;
    const checked = checkText(`${field}.${key}`, raw, max);
    if (!checked.ok) {
      errors.push(checked.error);
      return null;
    }
    return checked.value;
  };
  const max = (key: keyof typeof ADDRESS_SCHEMA.properties) => (ADDRESS_SCHEMA.properties[key] as { maxLength: number }).maxLength;
  const value: PostalAddress = {
    line1: line('line1', max('line1'), true) ?? '',
    line2: line('line2', max('line2'), false),
    city: line('city', max('city'), true) ?? '',
    postal_code: line('postal_code', max('postal_code'), false),
    region: line('region', max('region'), false),
    country: input.country,
  };
  return errors.length > 0 ? { ok: false, errors } : { ok: true, value };
}

const validateBody = compileBody<UpdateOrganizationProfileRequest>(UPDATE_ORGANIZATION_PROFILE_SCHEMA);

type TextField = Exclude<OrganizationProfileField, 'address'>;

/** How each text field is checked (the address has {@link checkAddress}). */
const TEXT_CHECKS: Readonly<Record<TextField, (input: string) => FieldCheck<string>>> = {
  legal_name: (input) => checkText('legal_name', input, ORGANIZATION_PROFILE_LIMITS.legal_name),
  vat_id: (input) => checkVatId(input),
  email: (input) => checkEmail(input),
  iban: (input) => checkIban(input),
  bic: (input) => checkBic(input),
  payment_terms: (input) => checkText('payment_terms', input, ORGANIZATION_PROFILE_LIMITS.payment_terms, { multiline: true }),
};

/**
 * The PATCH body as a {@link ProfilePatch}: the fields sent, each checked and normalized (null
 * kept: it clears the field). Throws 422 naming every field at fault (an unknown one included), so
 * a request is applied whole or not at all.
 */
export function parseProfilePatch(body: unknown): ProfilePatch {
  const request = validateBody(body);
  const patch: ProfilePatch = {};
  const errors: FieldError[] = [];
  for (const field of ORGANIZATION_PROFILE_FIELDS) {
    const input = request[field];
    if (input === undefined) continue;
    if (input === null) {
      patch[field] = null;
    } else if (field === 'address') {
      const checked = checkAddress(input as PostalAddressInput);
      if (checked.ok) patch.address = checked.value;
      else errors.push(...checked.errors);
    } else {
      const checked = TEXT_CHECKS[field](input as string);
      if (checked.ok) patch[field] = checked.value;
      else errors.push(checked.error);
    }
  }
  if (errors.length > 0) throw ProblemException.validation(errors);
  return patch;
}

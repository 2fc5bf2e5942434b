import type { FieldError } from '../http/platform-error';
import { ProblemException } from '../http/problem';
import Ajv2020, { ErrorObject } from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { EARLIEST_DATE, isCalendarDate, isCountryCode, isCurrencyCode, isDateTime, LATEST_DATE } from '@invoicing/contracts';

/**
 * One Ajv instance for all request schemas. Types are never coerced ("12" is not 12) and unknown
 * fields are refused, so an integrator's typo surfaces as a 422 instead of being silently dropped.
 */
export const ajv = new Ajv2020({ allErrors: true, strict: true, allowUnionTypes: true, coerceTypes: false, useDefaults: false });
addFormats(ajv);
// The code lists and the range of dates are the contracts' (docs/api.md section 2): a syntactically
// fine `ZZZ` or `0000-01-01` is no currency or day the platform can store or print.
ajv.addFormat('currency', { type: 'string', validate: isCurrencyCode });
ajv.addFormat('country', { type: 'string', validate: isCountryCode });
ajv.addFormat('date', { type: 'string', validate: isCalendarDate });
ajv.addFormat('date-time', { type: 'string', validate: isDateTime });

/** `/line_items/0/quantity` → `line_items[0].quantity` */
function fieldOf(error: ErrorObject): string {
  const path = error.instancePath
    .split('/')
    .slice(1)
    .map((p) => p.replace(/~1/g, '/').replace(/~0/g, '~'));
  let field = '';
  for (const part of path) field += /^\d+$/.test(part) ? `[${part}]` : field ? `.${part}` : part;
  if (error.keyword === 'required') {
    const missing = (error.params as { missingProperty: string }).missingProperty;
    return field ? `${field}.${missing}` : missing;
  }
  if (error.keyword === 'additionalProperties') {
    const extra = (error.params as { additionalProperty: string }).additionalProperty;
    return field ? `${field}.${extra}` : extra;
  }
  return field || '(body)';
}

function toFieldError(error: ErrorObject): FieldError {
  switch (error.keyword) {
    case 'required':
      return { field: fieldOf(error), code: 'required', message: 'is required' };
    case 'additionalProperties':
      return { field: fieldOf(error), code: 'unknown_field', message: 'is not a field of this object' };
    case 'type':
      return { field: fieldOf(error), code: 'invalid_type', message: `must be ${(error.params as { type: string }).type}` };
    case 'enum':
      return {
        field: fieldOf(error),
        code: 'invalid_value',
        message: `must be one of ${(error.params as { allowedValues: unknown[] }).allowedValues.join(', ')}`,
      };
    case 'format':
      return { field: fieldOf(error), code: 'invalid_format', message: formatMessage((error.params as { format: string }).format) };
    case 'minimum':
    case 'maximum':
    case 'exclusiveMinimum':
    case 'exclusiveMaximum':
    case 'minLength':
    case 'maxLength':
    case 'minItems':
    case 'maxItems':
      return { field: fieldOf(error), code: 'out_of_range', message: error.message ?? 'is out of range' };
    case 'pattern':
      return { field: fieldOf(error), code: 'invalid_format', message: 'has an invalid format' };
    default:
      return { field: fieldOf(error), code: 'invalid', message: error.message ?? 'is invalid' };
  }
}

function formatMessage(format: string): string {
  switch (format) {
    case 'currency':
      return 'must be an ISO 4217 currency code in upper case, e.g. EUR';
    case 'country':
      return 'must be an ISO 3166-1 alpha-2 country code in upper case, e.g. DE';
    case 'date':
      return `must be a calendar date, YYYY-MM-DD, from ${EARLIEST_DATE} to ${LATEST_DATE}`;
    case 'date-time':
      return `must be an RFC 3339 date-time from ${EARLIEST_DATE} to ${LATEST_DATE}`;
    case 'email':
      return 'must be an email address';
    default:
      return `must be a valid ${format}`;
  }
}

/**
 * Characters no text field may hold: C0 controls other than tab, line feed and carriage return,
 * DEL, and UTF-16 surrogates without their pair. Postgres refuses U+0000 in text and unpaired
 * surrogate escapes in jsonb, and encoding an unpaired surrogate as UTF-8 silently turns it into
 * U+FFFD: all three would otherwise end as a 500 or as text other than what was sent.
 */
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const FORBIDDEN_CHARACTERS = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

/** Adds an `invalid_characters` error for every string (at any depth) holding a forbidden character. */
function collectForbiddenCharacters(value: unknown, field: string, errors: FieldError[], depth = 0): void {
  if (typeof value === 'string') {
    if (FORBIDDEN_CHARACTERS.test(value)) {
      errors.push({
        field: field || '(body)',
        code: 'invalid_characters',
        message: 'must not contain control characters (other than tab and line breaks) or unpaired UTF-16 surrogates',
      });
    }
    return;
  }
  // Bodies that deep have already failed their schema; the walk stops rather than recurse on.
  if (value === null || typeof value !== 'object' || depth > 32) return;
  if (Array.isArray(value)) {
    value.forEach((item, i) => collectForbiddenCharacters(item, `${field}[${i}]`, errors, depth + 1));
    return;
  }
  for (const [name, item] of Object.entries(value)) collectForbiddenCharacters(item, field ? `${field}.${name}` : name, errors, depth + 1);
}

export type BodyValidator<T> = (body: unknown) => T;

/**
 * Compiles a JSON Schema (draft 2020-12) into a validator that returns the typed body or throws a
 * 422 problem listing every failing field, including strings holding characters that cannot be
 * stored as sent (FORBIDDEN_CHARACTERS). The schema also feeds the OpenAPI document.
 */
export function compileBody<T>(schema: Record<string, unknown>): BodyValidator<T> {
  const validate = ajv.compile(schema);
  return (body: unknown): T => {
    if (body === null || typeof body !== 'object' || Array.isArray(body)) {
      throw ProblemException.validation([{ field: '(body)', code: 'invalid_type', message: 'must be a JSON object' }]);
    }
    const valid = validate(body);
    const characters: FieldError[] = [];
    collectForbiddenCharacters(body, '', characters);
    if (!valid || characters.length > 0) {
      const seen = new Set<string>();
      const errors = [...characters, ...(valid ? [] : (validate.errors ?? []).map(toFieldError))].filter((e) => {
        const key = `${e.field}|${e.code}`;
        if (seen.has(key)) return false;
        seen.add(key);
        return true;
      });
      throw ProblemException.validation(errors);
    }
    return body as T;
  };
}

/** Collects semantic (cross-field) errors after the schema check. */
export class FieldErrors {
  private readonly errors: FieldError[] = [];

  add(field: string, code: string, message: string): this {
    this.errors.push({ field, code, message });
    return this;
  }

  throwIfAny(): void {
    if (this.errors.length > 0) throw ProblemException.validation(this.errors);
  }
}

import { IdPrefix, parsePublicId } from '@invoicing/contracts';
import { FieldError, ProblemException } from '@invoicing/service-kit';

/**
 * The query of a settings list (the key list, the audit log): every parameter at fault is named in
 * one 400 problem+json (`errors[]`), never ignored. A parameter given twice (`?type=a&type=b`, which
 * the query parser hands over as an array) is refused (`repeated`) rather than read as absent: a
 * filter dropped silently answers more than was asked for.
 */
export class ListParams {
  private readonly errors: FieldError[] = [];

  constructor(
    private readonly query: Record<string, unknown>,
    known: readonly string[],
  ) {
    for (const name of Object.keys(query)) {
      if (!known.includes(name)) this.errors.push({ field: name, code: 'unknown_parameter', message: 'is not a parameter of this list' });
    }
  }

  /** The parameter's one value; undefined when absent or given more than once (then refused). */
  text(name: string): string | undefined {
    const value = this.query[name];
    if (value === undefined) return undefined;
    if (typeof value === 'string') return value;
    this.errors.push({ field: name, code: 'repeated', message: 'must be given once' });
    return undefined;
  }

  /** `limit`: an integer from 1 to `max`, `fallback` when absent. */
  limit(fallback: number, max = 100): number {
    const text = this.text('limit');
    if (text === undefined) return fallback;
    const limit = /^\d{1,3}$/.test(text) ? Number(text) : NaN;
    if (limit >= 1 && limit <= max) return limit;
    this.errors.push({ field: 'limit', code: 'out_of_range', message: `must be an integer from 1 to ${max}` });
    return fallback;
  }

  /** A public id of `prefix` (`starting_after`, `api_key_id`), as given. */
  id(name: string, prefix: IdPrefix, what: string): string | undefined {
    const text = this.text(name);
    if (text === undefined || parsePublicId(prefix, text)) return text;
    this.errors.push({ field: name, code: 'invalid_format', message: `must be ${what} (${prefix}_...)` });
    return undefined;
  }

  /** One of `allowed`. */
  oneOf<T extends string>(name: string, allowed: readonly T[]): T | undefined {
    const text = this.text(name);
    if (text === undefined || (allowed as readonly string[]).includes(text)) return text as T | undefined;
    this.errors.push({ field: name, code: 'invalid_value', message: `must be one of ${allowed.join(', ')}` });
    return undefined;
  }

  /** Comma-separated values of `allowed` (`status=revoked,expired`), each once at most; undefined when absent. */
  someOf<T extends string>(name: string, allowed: readonly T[]): T[] | undefined {
    const text = this.text(name);
    if (text === undefined) return undefined;
    const values = text.split(',');
    if (values.every((v) => (allowed as readonly string[]).includes(v))) return [...new Set(values as T[])];
    this.errors.push({ field: name, code: 'invalid_value', message: `must be one or more of ${allowed.join(', ')}, separated by commas` });
    return undefined;
  }

  /** Throws the 400 naming every parameter at fault, if any. */
  check(): void {
    if (this.errors.length > 0) throw new ProblemException(400, 'The query has invalid parameters.', this.errors);
  }
}

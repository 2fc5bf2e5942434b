import { isCalendarDate, isDateTime, RANGE_OPERATORS, RangeOperator } from '@invoicing/contracts';

/**
 * A filter comparing one column of the entity's table with the query's value. The column and the
 * operator are the definition's; the value is always a bound parameter.
 */
export interface ColumnFilter {
  /** Column in the entity's table. */
  column: string;
  /** `=` (the default), a range bound, or `any`: the value is a list, `column = ANY($n)`. */
  operator?: '=' | '>=' | '>' | '<=' | '<' | 'any';
  /** Postgres type the parameter is cast to (`timestamptz`, `date`, `text[]`); none: the column's. */
  cast?: 'timestamptz' | 'date' | 'text[]';
  /** Parses the query value into the parameter's value; null = 400. */
  parse(value: string): unknown;
  /** What a valid value looks like, after "must be" in the 400 (`a date YYYY-MM-DD`). */
  expected?: string;
}

/**
 * A filter choosing one of the definition's fixed conditions by the query's value (`unpaid=true`):
 * for a condition that compares columns with each other, which no parameter can stand for.
 */
export interface ChoiceFilter {
  /** Query value → SQL condition on the entity's table, written by the definition. */
  choices: Readonly<Record<string, string>>;
  expected?: string;
}

export type ListFilter = ColumnFilter | ChoiceFilter;

const isChoice = (filter: ListFilter): filter is ChoiceFilter => 'choices' in filter;

/** A column name as SQL may take it unquoted; anything else is a definition's mistake, refused at start. */
const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

const SQL_OPERATORS: Record<RangeOperator, '>=' | '>' | '<=' | '<'> = { gte: '>=', gt: '>', lte: '<=', lt: '<' };

const DATE_TIME_EXPECTED =
  'an RFC 3339 date-time with Z or an offset, from 1900-01-01 to 9999-12-31 (2026-01-01T00:00:00Z; in a URL the + of an offset is written %2B)';
const DATE_EXPECTED = 'a date YYYY-MM-DD from 1900-01-01 to 9999-12-31 (2026-01-31)';

/** The last millisecond the API keeps (created_at has millisecond precision). */
const LATEST_MS = Date.UTC(9999, 11, 31, 23, 59, 59, 999);

/**
 * The instant of an RFC 3339 date-time as an ISO string of whole milliseconds (UTC), rounded down or
 * up; null when it is no date-time the API accepts. A `created_at` is a whole millisecond (the
 * service's clock), so rounding the bound the right way keeps every operator exact for a bound
 * given in microseconds or nanoseconds: `c >= t` is `c >= ceil(t)`, `c > t` is `c > floor(t)`,
 * `c <= t` is `c <= floor(t)`, `c < t` is `c < ceil(t)`. Postgres itself would round a bound to the
 * microsecond, to the nearer one.
 */
export function instantBound(value: string, rounding: 'floor' | 'ceil'): string | null {
  if (!isDateTime(value)) return null;
  const m = /^([^.]*)(?:\.(\d+))?([Zz]|[+-]\d{2}:\d{2})$/.exec(value);
  if (!m) return null;
  const fraction = m[2] ?? '';
  const whole = Date.parse(`${m[1]}${m[3]}`.toUpperCase()) + Number(fraction.slice(0, 3).padEnd(3, '0'));
  const ms = rounding === 'ceil' && /[1-9]/.test(fraction.slice(3)) ? whole + 1 : whole;
  // Only a bound past 9999-12-31T23:59:59.999Z rounds into year 10000, which Postgres would not read.
  return ms <= LATEST_MS ? new Date(ms).toISOString() : null;
}

/**
 * The four bounds of a date-time column (`created[gte]`, `created[gt]`, `created[lte]`,
 * `created[lt]`): any offset, compared as instants; inclusive for gte and lte.
 */
export function dateTimeRange(param: string, column: string): Record<string, ColumnFilter> {
  return Object.fromEntries(
    RANGE_OPERATORS.map((op) => {
      const rounding = op === 'gte' || op === 'lt' ? 'ceil' : 'floor';
      const filter: ColumnFilter = { column, operator: SQL_OPERATORS[op], cast: 'timestamptz', parse: (v) => instantBound(v, rounding), expected: DATE_TIME_EXPECTED };
      return [`${param}[${op}]`, filter];
    }),
  );
}

/** The four bounds of a date column (`issue_date[gte]`...): real calendar days, inclusive for gte and lte. */
export function dateRange(param: string, column: string): Record<string, ColumnFilter> {
  return Object.fromEntries(
    RANGE_OPERATORS.map((op) => {
      const filter: ColumnFilter = { column, operator: SQL_OPERATORS[op], cast: 'date', parse: (v) => (isCalendarDate(v) ? v : null), expected: DATE_EXPECTED };
      return [`${param}[${op}]`, filter];
    }),
  );
}

/**
 * One or more of `allowed`, comma-separated (`status=open,paid`): rows whose column holds any of
 * them. At most as many entries as there are values (a repeated one counts once).
 */
export function anyOf(column: string, allowed: readonly string[]): ColumnFilter {
  return {
    column,
    operator: 'any',
    cast: 'text[]',
    parse: (v) => {
      const values = v.split(',');
      if (values.length > allowed.length || !values.every((x) => allowed.includes(x))) return null;
      return [...new Set(values)];
    },
    expected: `one or more of ${allowed.join(', ')}, comma-separated (at most ${allowed.length})`,
  };
}

/** `true` or `false`, each choosing the definition's condition. */
export function booleanChoice(whenTrue: string, whenFalse: string): ChoiceFilter {
  return { choices: { true: whenTrue, false: whenFalse }, expected: 'true or false' };
}

/** The filters every list has: its rows' creation time (`created_at`, every resource table's). */
export const CREATED_FILTERS: Readonly<Record<string, ColumnFilter>> = dateTimeRange('created', 'created_at');

/** How the query's value is read: the parser `parseListQuery` takes. */
export function filterParser(filter: ListFilter): { parse(value: string): unknown; expected: string } {
  const expected = filter.expected ?? 'a valid value';
  if (!isChoice(filter)) return { parse: (v) => filter.parse(v) ?? null, expected };
  return { parse: (v) => (Object.hasOwn(filter.choices, v) ? v : null), expected };
}

/**
 * What a filter's value is, in the manifest's terms (the JSON Schema of its parameter) and in the
 * service's (its definition): a service whose filter reads another kind of value than the document
 * promises refuses to start, as one with another filter name does.
 */
export type FilterShape = 'date-time' | 'date' | 'list' | 'boolean' | 'value';

export function shapeOfSchema(schema: Record<string, unknown>): FilterShape {
  if (schema.type === 'array') return 'list';
  if (schema.type === 'boolean') return 'boolean';
  if (schema.format === 'date-time') return 'date-time';
  if (schema.format === 'date') return 'date';
  return 'value';
}

export function shapeOfFilter(filter: ListFilter): FilterShape {
  if (isChoice(filter)) return Object.keys(filter.choices).sort().join(',') === 'false,true' ? 'boolean' : 'value';
  if (filter.operator === 'any') return 'list';
  if (filter.cast === 'timestamptz') return 'date-time';
  if (filter.cast === 'date') return 'date';
  return 'value';
}

/**
 * Refuses, at start, filters other than the document's (`documented`: the manifest's, LIST_FILTERS)
 * by name or by the kind of value they read, and a column that could not be written into SQL as it is.
 */
export function checkListFilters(resource: string, documented: Readonly<Record<string, Record<string, unknown>>>, filters: Readonly<Record<string, ListFilter>>): void {
  const promised = Object.entries(documented).map(([name, schema]) => `${name}:${shapeOfSchema(schema)}`).sort().join(', ');
  const implemented = Object.entries(filters).map(([name, filter]) => `${name}:${shapeOfFilter(filter)}`).sort().join(', ');
  if (promised !== implemented) throw new Error(`${resource}: filters [${implemented}] differ from LIST_FILTERS [${promised}]`);
  for (const [name, filter] of Object.entries(filters)) {
    if (!isChoice(filter) && !IDENTIFIER.test(filter.column)) throw new Error(`${resource}: the filter ${name} names the column "${filter.column}", not an identifier`);
  }
}

/**
 * The WHERE of one list page: the organization first (`$1`), then each filter given, in the
 * definition's order (one SQL text per combination, so each is one prepared statement), then the
 * cursor; ANDed. Columns, operators and conditions come from `filters` (the definition), never
 * from the request; every value is a parameter. `given` holds the parsed values by filter name.
 */
export function listWhere(
  organizationId: string,
  filters: Readonly<Record<string, ListFilter>>,
  given: Readonly<Record<string, unknown>>,
  startingAfter: string | null,
): { where: string; values: unknown[] } {
  const where = ['organization_id = $1'];
  const values: unknown[] = [organizationId];
  for (const [name, filter] of Object.entries(filters)) {
    if (!Object.hasOwn(given, name) || given[name] === undefined) continue;
    const value = given[name];
    if (isChoice(filter)) {
      const condition = Object.hasOwn(filter.choices, String(value)) ? filter.choices[String(value)] : undefined;
      if (condition === undefined) throw new Error(`the filter ${name} has no condition for ${String(value)}`);
      where.push(`(${condition})`);
      continue;
    }
    values.push(value);
    const param = `$${values.length}${filter.cast ? `::${filter.cast}` : ''}`;
    const operator = filter.operator ?? '=';
    where.push(operator === 'any' ? `"${filter.column}" = ANY(${param})` : `"${filter.column}" ${operator} ${param}`);
  }
  if (startingAfter) {
    values.push(startingAfter);
    where.push(`id < $${values.length}`);
  }
  return { where: where.join(' AND '), values };
}

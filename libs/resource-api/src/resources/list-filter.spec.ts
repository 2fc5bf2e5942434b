import {
  anyOf,
  booleanChoice,
  checkListFilters,
  CREATED_FILTERS,
  dateRange,
  dateTimeRange,
  filterParser,
  instantBound,
  ListFilter,
  listWhere,
} from './list-filter';

const ORG = '11111111-1111-7111-8111-111111111111';
const AFTER = '01930000-0000-7000-8000-000000000009';

/** The filters of an invoice-like definition, in definition order. */
const FILTERS: Record<string, ListFilter> = {
  ...CREATED_FILTERS,
  client_id: { column: 'client_id', parse: (v) => (v.startsWith('cli_') ? v.slice(4) : null) },
  status: anyOf('status', ['open', 'partially_paid', 'paid']),
  unpaid: booleanChoice('total - amount_paid > 0', 'total - amount_paid <= 0'),
  ...dateRange('issue_date', 'issue_date'),
};

/** What a query value parses to, as the service reads it (null: 400). */
const parse = (name: string, value: string) => filterParser(FILTERS[name]).parse(value);

describe(instantBound.name, () => {
  it('reads any offset as the same instant, in whole milliseconds of UTC', () => {
    for (const at of ['2026-01-01T00:00:00Z', '2026-01-01T01:00:00+01:00', '2025-12-31T19:00:00-05:00', '2026-01-01t00:00:00z', '2026-01-01T00:00:00.000Z']) {
      expect({ at, floor: instantBound(at, 'floor'), ceil: instantBound(at, 'ceil') }).toEqual({ at, floor: '2026-01-01T00:00:00.000Z', ceil: '2026-01-01T00:00:00.000Z' });
    }
    expect(instantBound('2026-01-01T00:00:00.5+00:00', 'floor')).toBe('2026-01-01T00:00:00.500Z');
  });

  it('rounds a bound finer than a millisecond down or up, so that the comparison with a created_at stays exact', () => {
    expect(instantBound('2026-01-01T00:00:00.123456Z', 'floor')).toBe('2026-01-01T00:00:00.123Z');
    expect(instantBound('2026-01-01T00:00:00.123456Z', 'ceil')).toBe('2026-01-01T00:00:00.124Z');
    expect(instantBound('2026-01-01T00:00:00.123000000Z', 'ceil')).toBe('2026-01-01T00:00:00.123Z');
    expect(instantBound('2026-01-01T00:00:00.999999999+01:00', 'ceil')).toBe('2025-12-31T23:00:01.000Z');
  });

  it('takes the accepted range to its last millisecond and nothing past it', () => {
    expect(instantBound('1900-01-01T00:00:00Z', 'floor')).toBe('1900-01-01T00:00:00.000Z');
    expect(instantBound('9999-12-31T23:59:59.999Z', 'ceil')).toBe('9999-12-31T23:59:59.999Z');
    expect(instantBound('9999-12-31T23:59:59.9991Z', 'floor')).toBe('9999-12-31T23:59:59.999Z');
    // Rounded up it would be year 10000, which Postgres does not read.
    expect(instantBound('9999-12-31T23:59:59.9991Z', 'ceil')).toBeNull();
  });

  it.each([
    ['no offset', '2026-01-01T00:00:00'],
    ['a date only', '2026-01-01'],
    ['a space for T', '2026-01-01 00:00:00Z'],
    ['a + decoded to a space (sent unescaped)', '2026-01-01T01:00:00 01:00'],
    ['no seconds', '2026-01-01T00:00Z'],
    ['an offset without colon', '2026-01-01T00:00:00+0100'],
    ['February 30th', '2026-02-30T00:00:00Z'],
    ['hour 24', '2026-01-01T24:00:00Z'],
    ['a leap second', '2026-12-31T23:59:60Z'],
    ['offset hours past 23', '2026-01-01T00:00:00+24:00'],
    ['before 1900 in UTC', '1899-12-31T23:59:59Z'],
    ['past 9999 in UTC', '9999-12-31T23:59:59-01:00'],
    ['epoch seconds', '1767225600'],
    ['an empty value', ''],
    ['SQL', "2026-01-01T00:00:00Z' OR '1'='1"],
  ])('refuses %s', (_what, value) => {
    expect(instantBound(value, 'floor')).toBeNull();
    expect(instantBound(value, 'ceil')).toBeNull();
  });
});

describe('range filters', () => {
  it('declares the four bounds of created on created_at, each as its own operator', () => {
    expect(Object.entries(CREATED_FILTERS).map(([name, f]) => [name, 'column' in f ? `${f.column} ${f.operator} ::${f.cast}` : ''])).toEqual([
      ['created[gte]', 'created_at >= ::timestamptz'],
      ['created[gt]', 'created_at > ::timestamptz'],
      ['created[lte]', 'created_at <= ::timestamptz'],
      ['created[lt]', 'created_at < ::timestamptz'],
    ]);
    expect(dateTimeRange('paid', 'paid_at')['paid[lt]']).toMatchObject({ column: 'paid_at', operator: '<' });
  });

  it('rounds the inclusive lower and the exclusive upper bound up, the others down', () => {
    const at = '2026-01-01T00:00:00.0005Z';
    expect(['created[gte]', 'created[gt]', 'created[lte]', 'created[lt]'].map((name) => parse(name, at))).toEqual([
      '2026-01-01T00:00:00.001Z',
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.000Z',
      '2026-01-01T00:00:00.001Z',
    ]);
  });

  it('takes real calendar days from 1900-01-01 to 9999-12-31 for a date range, as given', () => {
    for (const op of ['gte', 'gt', 'lte', 'lt']) {
      expect(parse(`issue_date[${op}]`, '2024-02-29')).toBe('2024-02-29');
      expect(FILTERS[`issue_date[${op}]`]).toMatchObject({ column: 'issue_date', cast: 'date' });
    }
    expect(parse('issue_date[gte]', '1900-01-01')).toBe('1900-01-01');
    expect(parse('issue_date[lte]', '9999-12-31')).toBe('9999-12-31');
    for (const bad of ['2023-02-29', '2026-13-01', '2026-1-1', '20260101', '2026-01-01T00:00:00Z', '1899-12-31', '10000-01-01', '']) {
      expect({ bad, value: parse('issue_date[gte]', bad) }).toEqual({ bad, value: null });
    }
  });

  it('says what a valid value looks like, for the 400', () => {
    expect(filterParser(FILTERS['created[gt]']).expected).toMatch(/^an RFC 3339 date-time with Z or an offset.*%2B/);
    expect(filterParser(FILTERS['issue_date[lt]']).expected).toMatch(/^a date YYYY-MM-DD/);
    expect(filterParser(FILTERS.status).expected).toBe('one or more of open, partially_paid, paid, comma-separated (at most 3)');
    expect(filterParser(FILTERS.unpaid).expected).toBe('true or false');
    expect(filterParser(FILTERS.client_id).expected).toBe('a valid value');
  });
});

describe(anyOf.name, () => {
  it('takes one or more known values, comma-separated, each once', () => {
    expect(parse('status', 'open')).toEqual(['open']);
    expect(parse('status', 'open,paid')).toEqual(['open', 'paid']);
    expect(parse('status', 'paid,partially_paid,open')).toEqual(['paid', 'partially_paid', 'open']);
    expect(parse('status', 'open,open')).toEqual(['open']);
  });

  it('refuses an unknown value, an empty entry, other separators and more entries than values', () => {
    for (const bad of ['', 'closed', 'open,', ',open', 'open,,paid', 'open paid', 'open;paid', 'OPEN', 'open,paid,open,paid']) {
      expect({ bad, value: parse('status', bad) }).toEqual({ bad, value: null });
    }
  });
});

describe(booleanChoice.name, () => {
  it('takes exactly true or false', () => {
    expect([parse('unpaid', 'true'), parse('unpaid', 'false')]).toEqual(['true', 'false']);
    for (const bad of ['1', '0', 'TRUE', 'yes', '', 'toString', '__proto__', 'constructor']) expect({ bad, value: parse('unpaid', bad) }).toEqual({ bad, value: null });
  });
});

describe(listWhere.name, () => {
  it('is the organization alone without filters or cursor', () => {
    expect(listWhere(ORG, FILTERS, {}, null)).toEqual({ where: 'organization_id = $1', values: [ORG] });
  });

  it('ANDs the organization first, each filter given in the definition order, then the cursor, every value a parameter', () => {
    const given = {
      // In another order than the definition's: the SQL text does not depend on the request.
      'issue_date[lt]': '2026-02-01',
      unpaid: 'true',
      status: ['open', 'paid'],
      'created[gte]': '2026-01-01T00:00:00.000Z',
      client_id: 'c0ffee',
      'issue_date[gte]': '2026-01-01',
      'created[lt]': '2026-01-02T00:00:00.000Z',
    };
    expect(listWhere(ORG, FILTERS, given, AFTER)).toEqual({
      where: [
        'organization_id = $1',
        '"created_at" >= $2::timestamptz',
        '"created_at" < $3::timestamptz',
        '"client_id" = $4',
        '"status" = ANY($5::text[])',
        '(total - amount_paid > 0)',
        '"issue_date" >= $6::date',
        '"issue_date" < $7::date',
        'id < $8',
      ].join(' AND '),
      values: [ORG, '2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', 'c0ffee', ['open', 'paid'], '2026-01-01', '2026-02-01', AFTER],
    });
  });

  it('writes the definition\'s condition for a choice, and no parameter', () => {
    expect(listWhere(ORG, FILTERS, { unpaid: 'false' }, null)).toEqual({ where: 'organization_id = $1 AND (total - amount_paid <= 0)', values: [ORG] });
  });

  it('never writes a name or a value of the request into the SQL', () => {
    const hostile = `x" = "x" OR 1=1 --`;
    const { where, values } = listWhere(ORG, FILTERS, { [hostile]: 'y', client_id: hostile, status: [hostile] }, null);
    expect(where).toBe('organization_id = $1 AND "client_id" = $2 AND "status" = ANY($3::text[])');
    expect(values).toEqual([ORG, hostile, [hostile]]);
    expect(() => listWhere(ORG, FILTERS, { unpaid: 'maybe' }, null)).toThrow(/no condition/);
  });
});

describe(checkListFilters.name, () => {
  const documented = {
    'created[gte]': { type: 'string', format: 'date-time' },
    'created[gt]': { type: 'string', format: 'date-time' },
    'created[lte]': { type: 'string', format: 'date-time' },
    'created[lt]': { type: 'string', format: 'date-time' },
    status: { type: 'array', items: { enum: ['open', 'paid'] } },
    unpaid: { type: 'boolean' },
  };
  const implemented = { ...CREATED_FILTERS, status: anyOf('status', ['open', 'paid']), unpaid: booleanChoice('true', 'false') };

  it('passes filters with the document\'s names and kinds of value', () => {
    expect(() => checkListFilters('invoices', documented, implemented)).not.toThrow();
  });

  it('refuses a filter missing, one too many, or one reading another kind of value', () => {
    const { unpaid: _unpaid, ...missing } = implemented;
    expect(() => checkListFilters('invoices', documented, missing)).toThrow(/invoices: filters \[.*\] differ from LIST_FILTERS/);
    expect(() => checkListFilters('invoices', documented, { ...implemented, extra: { column: 'x', parse: (v) => v } })).toThrow(/differ/);
    expect(() => checkListFilters('invoices', documented, { ...implemented, status: { column: 'status', parse: (v) => v } })).toThrow(/status:value/);
    expect(() => checkListFilters('invoices', documented, { ...implemented, ...dateRange('created', 'created_at') })).toThrow(/created\[gte\]:date,/);
  });

  it('refuses a column that is not a plain identifier', () => {
    expect(() => checkListFilters('clients', { name: {} }, { name: { column: 'name" OR "1', parse: (v) => v } })).toThrow(/not an identifier/);
  });
});

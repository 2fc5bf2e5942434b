import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { RESOURCES } from '../manifest';
import { DATE } from './common.schema';
import { DATE_TIME, range, someOf } from './list-filter.schema';
import { LIST_FILTERS, listFilterParameters } from './list-filters';

describe(range.name, () => {
  it('declares the four bounds of a field, each saying whether it is inclusive', () => {
    const created = range('created', DATE_TIME, 'created_at');
    expect(Object.keys(created)).toEqual(['created[gte]', 'created[gt]', 'created[lte]', 'created[lt]']);
    expect(created['created[gte]']).toMatchObject({ type: 'string', format: 'date-time' });
    expect(created['created[gte]'].description).toMatch(/^Only objects whose created_at is at or after this value \(inclusive\)\. RFC 3339/);
    expect(created['created[gt]'].description).toMatch(/after this value \(exclusive\)/);
    expect(created['created[lte]'].description).toMatch(/at or before this value \(inclusive\)/);
    expect(created['created[lt]'].description).toMatch(/before this value \(exclusive\)/);
    expect(range('issue_date', DATE)['issue_date[lt]']).toMatchObject({ format: 'date', description: expect.stringContaining('issue_date is before') });
  });
});

describe('LIST_FILTERS', () => {
  it('gives every list the created range', () => {
    for (const r of RESOURCES) expect({ r, created: Object.keys(LIST_FILTERS[r]).filter((n) => n.startsWith('created[')) }).toEqual({ r, created: Object.keys(range('created', DATE_TIME)) });
  });

  it('lists the filters of invoices', () => {
    expect(Object.keys(LIST_FILTERS.invoices).filter((n) => !n.startsWith('created['))).toEqual([
      'client_id',
      'status',
      'unpaid',
      'issue_date[gte]',
      'issue_date[gt]',
      'issue_date[lte]',
      'issue_date[lt]',
      'due_date[gte]',
      'due_date[gt]',
      'due_date[lte]',
      'due_date[lt]',
    ]);
  });
});

describe(listFilterParameters.name, () => {
  const invoices = Object.fromEntries(listFilterParameters('invoices').map((p) => [p.name, p]));

  it('makes each filter a query parameter carrying its description, its value schema without it', () => {
    expect(invoices['created[gte]']).toEqual({
      name: 'created[gte]',
      in: 'query',
      description: expect.stringMatching(/^Only objects whose created_at is at or after/),
      schema: { type: 'string', format: 'date-time' },
    });
    expect(invoices['due_date[lt]'].schema).toEqual({ type: 'string', format: 'date' });
    expect(invoices.unpaid.schema).toEqual({ type: 'boolean' });
  });

  it('sends status comma-separated: an array, style form, not exploded, of at most every status', () => {
    expect(invoices.status).toMatchObject({
      style: 'form',
      explode: false,
      schema: { type: 'array', items: { enum: ['open', 'partially_paid', 'paid'] }, minItems: 1, maxItems: 3 },
    });
    expect(invoices['created[gte]'].style).toBeUndefined();
  });

  it('has value schemas that take what the services take, and refuse what they refuse', () => {
    const ajv = new Ajv2020({ strict: false });
    addFormats(ajv);
    const valid = (name: string, value: unknown) => ajv.validate(invoices[name].schema, value);
    expect([valid('created[gte]', '2026-01-01T00:00:00Z'), valid('created[gte]', '2026-01-01T01:00:00+01:00'), valid('created[gte]', '2026-01-01T00:00:00')]).toEqual([true, true, false]);
    expect([valid('issue_date[lt]', '2026-01-31'), valid('issue_date[lt]', '2026-02-30'), valid('issue_date[lt]', '2026-01-31T00:00:00Z')]).toEqual([true, false, false]);
    // The query's `status=open,paid`, split at the commas as style form / explode false says.
    expect([valid('status', ['open', 'paid']), valid('status', ['open', 'closed']), valid('status', []), valid('status', ['open', 'paid', 'open', 'paid'])]).toEqual([true, false, false, false]);
  });

  it('is the created range alone for a resource without filters of its own', () => {
    expect(listFilterParameters('clients').map((p) => p.name)).toEqual(['created[gte]', 'created[gt]', 'created[lte]', 'created[lt]']);
  });

  it('bounds a list of values by their number (someOf)', () => {
    expect(someOf(['a', 'b'], 'kind')).toEqual({ type: 'array', items: { enum: ['a', 'b'] }, minItems: 1, maxItems: 2, description: expect.stringContaining('(kind=a,b)') });
  });
});

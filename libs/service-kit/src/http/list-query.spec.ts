import { newId } from '@invoicing/contracts';
import { ProblemException } from './problem';
import { parseListQuery, toPage } from './list-query';

describe('parseListQuery', () => {
  it('defaults to 20 and the first page', () => {
    expect(parseListQuery({}, 'inv')).toEqual({ limit: 20, startingAfter: null, filters: {} });
  });

  it('accepts limit 1..100 and refuses anything else with 400', () => {
    expect(parseListQuery({ limit: '100' }, 'inv').limit).toBe(100);
    for (const limit of ['0', '101', '-1', '2.5', 'ten', '']) {
      expect(() => parseListQuery({ limit }, 'inv')).toThrow(ProblemException);
    }
  });

  it('takes starting_after only as an id of the listed type', () => {
    const id = newId('inv');
    expect(parseListQuery({ starting_after: id }, 'inv').startingAfter).toMatch(/^[0-9a-f-]{36}$/);
    expect(() => parseListQuery({ starting_after: newId('cli') }, 'inv')).toThrow(ProblemException);
  });

  it('refuses unknown and repeated parameters', () => {
    expect(() => parseListQuery({ stauts: 'paid' }, 'inv')).toThrow(/Unknown query parameter stauts/);
    expect(() => parseListQuery({ limit: ['1', '2'] }, 'inv')).toThrow(/once/);
  });

  it('parses filters with their own parser', () => {
    const q = parseListQuery({ status: 'paid' }, 'inv', { status: (v: string) => (v === 'paid' ? v : null) });
    expect(q.filters).toEqual({ status: 'paid' });
    expect(() => parseListQuery({ status: 'nope' }, 'inv', { status: () => null })).toThrow(ProblemException);
  });

  /** The 400 a query answers, as the edge renders it. */
  const refusal = (query: Record<string, unknown>, filters: Parameters<typeof parseListQuery>[2]) => {
    try {
      parseListQuery(query, 'inv', filters);
    } catch (e) {
      const problem = e as ProblemException;
      return { status: problem.status, detail: problem.detail, errors: problem.errors };
    }
    throw new Error('not refused');
  };

  it('keeps each filter value as its parser answers it (a list, a bound), under the parameter name as sent', () => {
    const q = parseListQuery<string, unknown>({ 'created[gte]': '2026-01-01T00:00:00Z', status: 'open,paid', limit: '5' }, 'inv', {
      'created[gte]': { parse: (v: string) => new Date(v).toISOString(), expected: 'a date-time' },
      status: { parse: (v: string) => v.split(','), expected: 'statuses' },
    });
    expect(q).toEqual({ limit: 5, startingAfter: null, filters: { 'created[gte]': '2026-01-01T00:00:00.000Z', status: ['open', 'paid'] } });
  });

  it('names the parameter at fault and what it must be, in the detail and in errors', () => {
    const filters = { 'created[gte]': { parse: () => null, expected: 'an RFC 3339 date-time' } };
    expect(refusal({ 'created[gte]': 'yesterday' }, filters)).toEqual({
      status: 400,
      detail: 'The query parameter created[gte] must be an RFC 3339 date-time.',
      errors: [{ field: 'created[gte]', code: 'invalid_value', message: 'must be an RFC 3339 date-time' }],
    });
    expect(refusal({ status: 'x' }, { status: () => null })).toMatchObject({ status: 400, errors: [{ field: 'status', code: 'invalid_value' }] });
  });

  it('still refuses an unknown parameter (a bracket operator the list lacks among them) and a filter given twice', () => {
    const filters = { 'created[gte]': { parse: (v: string) => v, expected: 'x' } };
    expect(refusal({ 'created[gte]': 'a', 'created[eq]': 'b' }, filters)).toMatchObject({ status: 400, detail: 'Unknown query parameter created[eq].' });
    expect(refusal({ created: 'a' }, filters)).toMatchObject({ status: 400, detail: 'Unknown query parameter created.' });
    expect(refusal({ 'created[gte]': ['a', 'b'] }, filters)).toMatchObject({ status: 400, detail: 'The query parameter created[gte] must be given once.' });
  });
});

describe('toPage', () => {
  it('reports has_more from the extra row', () => {
    expect(toPage([1, 2, 3], 2, (n) => n * 10)).toEqual({ object: 'list', data: [10, 20], has_more: true });
    expect(toPage([1, 2], 2, (n) => n)).toEqual({ object: 'list', data: [1, 2], has_more: false });
  });
});

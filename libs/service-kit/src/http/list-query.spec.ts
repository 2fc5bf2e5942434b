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
});

describe('toPage', () => {
  it('reports has_more from the extra row', () => {
    expect(toPage([1, 2, 3], 2, (n) => n * 10)).toEqual({ object: 'list', data: [10, 20], has_more: true });
    expect(toPage([1, 2], 2, (n) => n)).toEqual({ object: 'list', data: [1, 2], has_more: false });
  });
});

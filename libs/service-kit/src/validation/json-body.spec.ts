import { ProblemException } from '../http/problem';
import { compileBody } from './json-body';

const validate = compileBody<{ name: string; items: Array<{ qty: number }> }>({
  type: 'object',
  additionalProperties: false,
  required: ['name', 'items'],
  properties: {
    name: { type: 'string', minLength: 1 },
    currency: { type: 'string', format: 'currency' },
    items: { type: 'array', items: { type: 'object', required: ['qty'], properties: { qty: { type: 'integer' } } } },
  },
});

function errorsOf(body: unknown) {
  try {
    validate(body);
  } catch (e) {
    expect(e).toBeInstanceOf(ProblemException);
    return { status: (e as ProblemException).status, errors: (e as ProblemException).errors };
  }
  throw new Error('expected a validation error');
}

describe('compileBody', () => {
  it('returns a valid body unchanged', () => {
    expect(validate({ name: 'a', items: [] })).toEqual({ name: 'a', items: [] });
  });

  it('names every failing field with a path a client can use', () => {
    const { status, errors } = errorsOf({ items: [{ qty: '1' }, {}], extra: true, currency: 'eur' });
    expect(status).toBe(422);
    expect(errors).toEqual(
      expect.arrayContaining([
        { field: 'name', code: 'required', message: 'is required' },
        { field: 'extra', code: 'unknown_field', message: expect.any(String) },
        { field: 'items[0].qty', code: 'invalid_type', message: 'must be integer' },
        { field: 'items[1].qty', code: 'required', message: 'is required' },
        { field: 'currency', code: 'invalid_format', message: expect.stringContaining('ISO 4217') },
      ]),
    );
  });

  it('refuses control characters and unpaired surrogates in any string, naming the field', () => {
    for (const bad of ['a\u0000b', '\u0001', 'a\u001bb', 'x\u007f', 'a\ud800b', 'a\udc00b', '\udc00\ud800']) {
      const { status, errors } = errorsOf({ name: 'ok', items: [{ qty: 1, note: bad }] });
      expect({ bad, status }).toEqual({ bad, status: 422 });
      expect(errors).toContainEqual({ field: 'items[0].note', code: 'invalid_characters', message: expect.any(String) });
    }
    // Reported together with the schema's own errors.
    expect((errorsOf({ name: 'a\u0000', extra: 1 }).errors ?? []).map((e) => `${e.field} ${e.code}`).sort()).toEqual([
      'extra unknown_field',
      'items required',
      'name invalid_characters',
    ]);
  });

  it('takes tab, line breaks, emoji (a paired surrogate) and combining marks as they are', () => {
    expect(validate({ name: 'a\tb\r\nc 🧾 e\u0301', items: [] })).toEqual({ name: 'a\tb\r\nc 🧾 e\u0301', items: [] });
  });

  it('refuses a body that is not an object', () => {
    expect(errorsOf([1, 2]).errors).toEqual([{ field: '(body)', code: 'invalid_type', message: 'must be a JSON object' }]);
  });
});

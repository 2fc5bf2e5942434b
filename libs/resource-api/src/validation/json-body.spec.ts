import { ProblemException } from '@invoicing/service-kit';
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

  it('refuses a body that is not an object', () => {
    expect(errorsOf([1, 2]).errors).toEqual([{ field: '(body)', code: 'invalid_type', message: 'must be a JSON object' }]);
  });
});

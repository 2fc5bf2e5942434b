import { fieldNameOf, fieldSentence, parseRetryAfter, problemMessage, toProblem } from './problem-details';

describe('toProblem', () => {
  it('keeps the detail, request id and field errors of a problem+json body', () => {
    const problem = toProblem(422, {
      type: 'https://docs.invoicing.example/problems/validation-failed',
      title: 'Validation failed',
      status: 422,
      detail: 'The request body has invalid fields.',
      request_id: 'req-1',
      errors: [{ field: 'password', code: 'too_short', message: 'Use at least 12 characters.' }],
    });
    expect(problem).toEqual({
      status: 422,
      title: 'Validation failed',
      detail: 'The request body has invalid fields.',
      request_id: 'req-1',
      errors: [{ field: 'password', code: 'too_short', message: 'Use at least 12 characters.' }],
    });
  });

  it('gives a readable sentence when the body is not a problem (a proxy error page, empty body)', () => {
    expect(toProblem(502, null).detail).toBe('The service is not reachable right now. Try again in a moment.');
    expect(toProblem(500, '<html>').detail).toMatch(/went wrong on our side/);
    expect(toProblem(418, {}).detail).toBe('The request failed.');
    expect(toProblem(422, { detail: '   ' }).detail).toBe('Some fields are not valid.');
  });

  it('drops malformed field errors instead of failing', () => {
    expect(toProblem(422, { errors: ['x', { field: 'name' }] }).errors).toEqual([{ field: 'name', code: 'invalid', message: 'This value is not valid.' }]);
    expect(toProblem(422, { errors: 'nope' }).errors).toEqual([]);
  });
});

describe('fieldNameOf', () => {
  it.each([
    ['password', 'password'],
    ['scopes[1]', 'scopes'],
    ['scopes.1', 'scopes'],
    ['/scopes/1', 'scopes'],
    ['$.organization_name', 'organization_name'],
    ['', ''],
  ])('maps %p to the form field %p', (field, name) => {
    expect(fieldNameOf(field)).toBe(name);
  });
});

describe('parseRetryAfter', () => {
  it('reads delta-seconds and HTTP dates', () => {
    expect(parseRetryAfter('30')).toBe(30);
    expect(parseRetryAfter('Wed, 21 Oct 2015 07:28:10 GMT', Date.parse('Wed, 21 Oct 2015 07:28:00 GMT'))).toBe(10);
    expect(parseRetryAfter(null)).toBeNull();
    expect(parseRetryAfter('soon')).toBeNull();
  });
});

describe('problemMessage', () => {
  it('tells how long to wait when throttled', () => {
    expect(problemMessage(toProblem(429, { detail: 'Too many login attempts.' }), 30)).toBe('Too many login attempts. Try again in 30 seconds.');
    expect(problemMessage(toProblem(429, { detail: 'Too many login attempts.' }), 1)).toBe('Too many login attempts. Try again in 1 second.');
  });

  it('adds the request id to server faults only', () => {
    expect(problemMessage(toProblem(503, { detail: 'Down.', request_id: 'req-9' }))).toBe('Down. (Reference: req-9)');
    expect(problemMessage(toProblem(401, { detail: 'Wrong email or password.', request_id: 'req-9' }))).toBe('Wrong email or password.');
  });
});

describe('fieldSentence', () => {
  it('completes the server fragments with the field label', () => {
    expect(fieldSentence('Email', 'must be an email address')).toBe('Email must be an email address.');
    expect(fieldSentence('Email', 'is already registered')).toBe('Email is already registered.');
    expect(fieldSentence('Password', 'must NOT have fewer than 12 characters')).toBe('Password must NOT have fewer than 12 characters.');
  });

  it('leaves whole sentences whole and capitalises imperative fragments', () => {
    expect(fieldSentence('Scopes', 'choose at least one scope')).toBe('Choose at least one scope.');
    expect(fieldSentence('Scopes', 'unknown scopes: read:cats')).toBe('Unknown scopes: read:cats.');
    expect(fieldSentence('Name', 'Enter a name for the key.')).toBe('Enter a name for the key.');
    expect(fieldSentence('Name', '')).toBe('Name is not valid.');
  });

  it('does not repeat a wait the server already stated', () => {
    expect(problemMessage(toProblem(429, { detail: 'Too many failed log-ins; retry in 30 seconds.' }), 30)).toBe(
      'Too many failed log-ins; retry in 30 seconds.',
    );
  });
});

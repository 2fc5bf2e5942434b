import {
  loadCommonPasswords,
  PASSWORD_PROBLEM_MESSAGES,
  PasswordContext,
  passwordProblem,
  PasswordProblemCode,
} from './password-policy';

const context: PasswordContext = { email: 'maria.gonzalez@northwind-traders.com', organizationName: 'Northwind Traders' };

/** A seeded generator (xorshift32): the "random" passwords are the same on every run. */
function seededPasswords(count: number, length: number, seed = 0x9e3779b9): string[] {
  const alphabet = Array.from({ length: 94 }, (_, i) => String.fromCharCode(33 + i)).join(''); // printable ASCII but space
  let state = seed >>> 0;
  const next = (): number => {
    state ^= state << 13;
    state >>>= 0;
    state ^= state >>> 17;
    state ^= state << 5;
    state >>>= 0;
    return state;
  };
  return Array.from({ length: count }, () => Array.from({ length }, () => alphabet[next() % alphabet.length]).join(''));
}

describe('passwordProblem', () => {
  const refused: [label: string, password: string, code: PasswordProblemCode][] = [
    ['password1234', 'password1234', 'too_common'],
    ['twelve spaces', ' '.repeat(12), 'too_simple'],
    ['Password123!', 'Password123!', 'too_common'],
    ['qwertyuiop12', 'qwertyuiop12', 'too_simple'],
    ['qwertyuiopas', 'qwertyuiopas', 'too_simple'],
    ['123456789012', '123456789012', 'too_simple'],
    ['aaaaaaaaaaaa', 'aaaaaaaaaaaa', 'too_simple'],
    ['a tab and spaces only', '\t     \t     ', 'too_simple'],
    ['a keyboard column walk', '1qaz2wsx3edc', 'too_simple'],
    ['a shifted keyboard column walk', '!QAZ@WSX#EDC', 'too_simple'],
    ['an alphabet run', 'abcdefghijkl', 'too_simple'],
    ['a repeated pattern', 'abc!abc!abc!', 'too_simple'],
    ['a listed password with look-alikes and a year', 'P@ssw0rd2024', 'too_common'],
    ['a look-alike at the start', '$uperman2024', 'too_common'],
    ['a listed password after digits and punctuation', '2024!Password', 'too_common'],
    ['a listed password with repeated punctuation', 'dragon!!!!!!', 'too_common'],
    ['a listed password with random-looking digits', 'monkey837261', 'too_common'],
    ['a listed password with a long number sequence', 'iloveyou12345678', 'too_common'],
    ['a season and a year', 'Summer2024!!', 'too_common'],
    ['the email local part plus 1', 'maria.gonzalez1', 'too_similar'],
    ['the email local part without its dot plus 1', 'MariaGonzalez1', 'too_similar'],
    ['part of the local part plus a year and a symbol', 'Gonzalez2024!', 'too_similar'],
    ['the whole email address', 'maria.gonzalez@northwind-traders.com', 'too_similar'],
    ['the organization name plus 2024', 'Northwind Traders2024', 'too_similar'],
    ['the organization name without spaces plus 2024', 'NorthwindTraders2024', 'too_similar'],
    ['one word of the organization name plus a year', 'northwind2024!', 'too_similar'],
    ['the organization name and a listed password', 'Northwind-Password', 'too_similar'],
    ['the organization name with look-alikes', 'N0rthw1nd-Tr@ders', 'too_similar'],
  ];

  it.each(refused)('refuses %s (%#)', (_label, password, code) => {
    expect(passwordProblem(password, context)).toEqual({ code, message: PASSWORD_PROBLEM_MESSAGES[code] });
  });

  it('never puts the password (or the email) in its message', () => {
    for (const [, password] of refused) {
      const message = passwordProblem(password, context)?.message;
      expect(Object.values(PASSWORD_PROBLEM_MESSAGES)).toContain(message);
      expect(message).not.toContain(password);
      expect(message?.toLowerCase()).not.toContain(password.trim().toLowerCase() || password);
      expect(message).not.toContain(context.email);
    }
  });

  it('accepts "correct horse battery staple", which is not on the list in either form', () => {
    const list = loadCommonPasswords();
    expect(list.has('correct horse battery staple')).toBe(false);
    expect(list.has('correcthorsebatterystaple')).toBe(false);
    expect(passwordProblem('correct horse battery staple', context)).toBeNull();
    expect(passwordProblem('CorrectHorseBatteryStaple', context)).toBeNull();
  });

  it('accepts a random 16-character password, and 2,000 seeded ones', () => {
    expect(passwordProblem('kX9#mP2$vL7qR4!w', context)).toBeNull();
    const refusedRandom = seededPasswords(2000, 16).filter((p) => passwordProblem(p, context) !== null);
    expect(refusedRandom).toEqual([]);
  });

  it.each([
    ['a listed word with a long, non-trivial suffix', 'love-7391-8820-1147'],
    ['the organization name in a passphrase', 'Northwind purple elephant rides'],
    ['a passphrase that shares a short word with the organization name', 'traders of the lost umbrella'],
  ])('accepts %s', (_label, password) => {
    expect(passwordProblem(password, context)).toBeNull();
  });

  it('does not fail on an odd email or an organization name without letters', () => {
    expect(passwordProblem('kX9#mP2$vL7qR4!w', { email: 'no-at-sign', organizationName: '---' })).toBeNull();
    expect(passwordProblem('kX9#mP2$vL7qR4!w', { email: '', organizationName: '' })).toBeNull();
    expect(passwordProblem('password1234', { email: '', organizationName: '' })?.code).toBe('too_common');
  });
});

describe('loadCommonPasswords', () => {
  it('loads the shipped list once, lower case, into a Set', () => {
    const list = loadCommonPasswords();
    expect(list).toBeInstanceOf(Set);
    expect(list.size).toBeGreaterThan(40_000);
    expect(list.has('password')).toBe(true);
    expect(list.has('qwertyuiop')).toBe(true);
    expect([...list].every((entry) => entry === entry.toLowerCase())).toBe(true);
    expect(loadCommonPasswords()).toBe(list);
  });

  it('loads the package on the first check, not on import, and only once', () => {
    const list = [...Array.from({ length: 20_000 }, (_, i) => `filler${i}`), 'listedword'];
    const factory = jest.fn(() => ({ dictionary: { 'passwords-common': list } }));
    jest.isolateModules(() => {
      jest.doMock('@zxcvbn-ts/language-common', factory);
      // A fresh copy of the module, which sees the mock.
      const policy = require('./password-policy') as typeof import('./password-policy');
      expect(factory).not.toHaveBeenCalled();
      expect(policy.passwordProblem('ListedWord12', { email: '', organizationName: '' })?.code).toBe('too_common');
      policy.passwordProblem('kX9#mP2$vL7qR4!w', { email: '', organizationName: '' });
      expect(factory).toHaveBeenCalledTimes(1);
    });
    jest.dontMock('@zxcvbn-ts/language-common');
  });

  it('fails loudly when the package no longer has the list, rather than check nothing', () => {
    jest.isolateModules(() => {
      jest.doMock('@zxcvbn-ts/language-common', () => ({ dictionary: {} }));
      // A fresh copy of the module, which sees the mock.
      const policy = require('./password-policy') as typeof import('./password-policy');
      expect(() => policy.passwordProblem('kX9#mP2$vL7qR4!w', { email: '', organizationName: '' })).toThrow(/passwords-common/);
    });
    jest.dontMock('@zxcvbn-ts/language-common');
  });
});

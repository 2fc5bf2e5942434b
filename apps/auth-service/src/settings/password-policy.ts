/**
 * The settings sign-up's password policy, on top of the schema's length rule (SIGNUP_SCHEMA: 12 to
 * 128 characters, checked before this runs). A password is refused when it is
 *
 * - `too_simple`: whitespace only; fewer than 5 different characters; one short pattern repeated
 *   ("abc!abc!abc!"); or at most 3 "runs", a run being a stretch where each character repeats the
 *   one before, follows or precedes it in the alphabet or among digits, or is its neighbour on a
 *   QWERTY keyboard ("aaaaaaaaaaaa", "123456789012", "qwertyuiopas", "1qaz2wsx3edc").
 * - `too_common`: in the list of common and breached passwords that @zxcvbn-ts/language-common
 *   ships (about 49,000, lower case), compared case-insensitively (NFKC, lower case) in these forms:
 *   the password; the password without whitespace; the password without the digits and punctuation
 *   at its end, or at both ends, when what was removed is trivial (at most 6 characters, too simple
 *   by the rule above, or itself listed); and each of those with common look-alike substitutions
 *   undone (4/@ -> a, 3 -> e, 1/! -> i, 1/| -> l, 0 -> o, 5/$ -> s, 7/+ -> t, 8 -> b, 9 -> g). So
 *   "Password123!", "P@ssw0rd2024" and "dragon!!!!!!" are refused, "love-7391-8820-1147" is not.
 * - `too_similar`: mostly the email or the organization name. Both are reduced to tokens of at least
 *   3 letters or digits (lower case, other characters removed): the whole address, its local part
 *   (without a +tag), the local part's pieces between dots, dashes and the like, the domain's labels
 *   but the last, the whole organization name and each of its words. The password is reduced the
 *   same way (also with the look-alikes undone); every occurrence of every token is removed, longest
 *   first, and when something was removed and what remains is under 6 letters and digits, too simple,
 *   or too common, the password is refused. "JohnSmith2024!" for john.smith@... and "Northwind
 *   Traders 2024" for Northwind Traders are refused; "acme purple elephant rides" for Acme is not.
 *
 * The list is loaded on the first check (25 to 50 ms and 3.6 MiB of heap, once per process), not
 * when the service starts; `loadCommonPasswords()` loads it ahead of time if wanted. Messages
 * describe the rule, never the password.
 */

export type PasswordProblemCode = 'too_simple' | 'too_common' | 'too_similar';

export interface PasswordProblem {
  code: PasswordProblemCode;
  message: string;
}

export interface PasswordContext {
  email: string;
  organizationName: string;
}

export const PASSWORD_PROBLEM_MESSAGES: Readonly<Record<PasswordProblemCode, string>> = {
  too_simple: 'is too easy to guess: avoid repeated characters, repeated patterns and keyboard or alphabet sequences',
  too_common:
    'is too common: it is on lists of passwords that attackers try first, and a number or symbol added to it does not help; a few unrelated words make a strong password',
  too_similar: 'is too close to your email address or organization name',
};

/** The first problem found (too_simple, then too_similar, then too_common), or null for a good password. */
export function passwordProblem(password: string, context: PasswordContext): PasswordProblem | null {
  const code: PasswordProblemCode | null = isTooSimple(password)
    ? 'too_simple'
    : isTooSimilar(password, context)
      ? 'too_similar'
      : isTooCommon(password)
        ? 'too_common'
        : null;
  return code === null ? null : { code, message: PASSWORD_PROBLEM_MESSAGES[code] };
}

// ---- the list -------------------------------------------------------------------------------------

/** The list's package: the exact version is pinned in package.json. */
const LIST_PACKAGE = '@zxcvbn-ts/language-common';
/** Fewer entries than this means the package changed shape: fail loudly rather than check nothing. */
const LIST_MIN_SIZE = 10_000;

let commonPasswords: ReadonlySet<string> | null = null;

/** The common-password list as a Set, loaded (synchronously) on the first call and kept. */
export function loadCommonPasswords(): ReadonlySet<string> {
  if (commonPasswords === null) {
    // Required here rather than imported at the top: the package decompresses its lists when it is
    // loaded, which the service's start should not pay for.
    const { dictionary } = require(LIST_PACKAGE) as { dictionary?: Record<string, unknown> };
    const list = dictionary?.['passwords-common'];
    if (!Array.isArray(list) || list.length < LIST_MIN_SIZE) {
      throw new Error(`${LIST_PACKAGE} no longer has its 'passwords-common' list; the password policy cannot check`);
    }
    commonPasswords = new Set(list.map((entry) => fold(String(entry))));
  }
  return commonPasswords;
}

// ---- too simple -----------------------------------------------------------------------------------

const MIN_DISTINCT_CHARACTERS = 5;
const MAX_TRIVIAL_RUNS = 3;

export function isTooSimple(text: string): boolean {
  const s = fold(text);
  if (s.trim() === '') return true;
  const chars = Array.from(s);
  if (new Set(chars).size < MIN_DISTINCT_CHARACTERS) return true;
  if (isRepeatedPattern(chars)) return true;
  return countRuns(chars) <= MAX_TRIVIAL_RUNS;
}

/** Whether the characters are 2 or more copies of one shorter unit ("abc1abc1abc1"). */
function isRepeatedPattern(chars: string[]): boolean {
  const n = chars.length;
  for (let unit = 1; unit <= n / 2; unit++) {
    if (n % unit !== 0) continue;
    let repeats = true;
    for (let i = unit; i < n && repeats; i++) repeats = chars[i] === chars[i - unit];
    if (repeats) return true;
  }
  return false;
}

/** Stretches in which each character is a trivial step from the one before it. */
function countRuns(chars: string[]): number {
  if (chars.length === 0) return 0;
  let runs = 1;
  for (let i = 1; i < chars.length; i++) if (!isTrivialStep(chars[i - 1], chars[i])) runs++;
  return runs;
}

function isTrivialStep(a: string, b: string): boolean {
  if (a === b) return true;
  const alphabetic = /^[a-z]$/.test(a) && /^[a-z]$/.test(b);
  const numeric = /^[0-9]$/.test(a) && /^[0-9]$/.test(b);
  if ((alphabetic || numeric) && Math.abs(a.charCodeAt(0) - b.charCodeAt(0)) === 1) return true;
  const p = KEYBOARD.get(a);
  const q = KEYBOARD.get(b);
  if (p === undefined || q === undefined) return false;
  if (p.row === q.row) return Math.abs(p.col - q.col) === 1;
  if (Math.abs(p.row - q.row) !== 1) return false;
  // Each row sits half a key to the right of the one above: a key touches the keys below it in
  // its own column and the column before ("1qaz", "2wsx", "mju7").
  const [upper, lower] = p.row < q.row ? [p, q] : [q, p];
  return lower.col === upper.col || lower.col === upper.col - 1;
}

/** US QWERTY positions, each key unshifted and shifted (letters are compared in lower case). */
const KEYBOARD: ReadonlyMap<string, { row: number; col: number }> = (() => {
  const rows: [string, string][] = [
    ['1234567890-=', '!@#$%^&*()_+'],
    ['qwertyuiop[]', '{}'.padStart(12, ' ')],
    ["asdfghjkl;'", ':"'.padStart(11, ' ')],
    ['zxcvbnm,./', '<>?'.padStart(10, ' ')],
  ];
  const positions = new Map<string, { row: number; col: number }>();
  rows.forEach(([plain, shifted], row) => {
    for (const keys of [plain, shifted]) {
      Array.from(keys).forEach((key, col) => {
        if (key !== ' ') positions.set(key, { row, col });
      });
    }
  });
  return positions;
})();

// ---- too common -----------------------------------------------------------------------------------

const MAX_SHORT_AFFIX = 6;

export function isTooCommon(password: string): boolean {
  const list = loadCommonPasswords();
  const listed = (candidate: string): boolean =>
    candidate !== '' && (list.has(candidate) || LOOKALIKES.some((undo) => list.has(undo(candidate))));
  const folded = fold(password);
  for (const form of new Set([folded, folded.replace(/\s+/gu, '')])) {
    if (listed(form)) return true;
    const { prefix, core, suffix } = splitAtLetters(form);
    // Without what follows the last letter, then without what precedes the first letter too.
    if (suffix !== '' && isTrivialAffix(suffix, list) && listed(form.slice(0, form.length - suffix.length))) return true;
    if (prefix !== '' && isTrivialAffix(prefix + suffix, list) && listed(core)) return true;
  }
  return false;
}

/** The text before the first letter, from it to the last letter, and after that. */
function splitAtLetters(text: string): { prefix: string; core: string; suffix: string } {
  const prefix = /^\P{L}*/u.exec(text)?.[0] ?? '';
  if (prefix.length === text.length) return { prefix, core: '', suffix: '' };
  const suffix = /\P{L}*$/u.exec(text)?.[0] ?? '';
  return { prefix, core: text.slice(prefix.length, text.length - suffix.length), suffix };
}

/** What the common-password check may strip: short, too simple, or itself a listed password. */
function isTrivialAffix(affix: string, list: ReadonlySet<string>): boolean {
  return Array.from(affix).length <= MAX_SHORT_AFFIX || isTooSimple(affix) || list.has(affix);
}

/** Undoes the usual look-alike substitutions; two versions, as 1 stands for both i and l. */
const LOOKALIKE_COMMON: Record<string, string> = { '4': 'a', '@': 'a', '8': 'b', '3': 'e', '9': 'g', '!': 'i', '|': 'l', '0': 'o', '5': 's', $: 's', '7': 't', '+': 't' };
const LOOKALIKES: ((s: string) => string)[] = ['i', 'l'].map((one) => {
  const table: Record<string, string> = { ...LOOKALIKE_COMMON, '1': one };
  return (s: string) => s.replace(/[48390!|5$7+1@]/g, (c) => table[c] ?? c);
});

// ---- too similar ----------------------------------------------------------------------------------

const MIN_TOKEN_LENGTH = 3;
const MIN_REMAINDER_LENGTH = 6;

export function isTooSimilar(password: string, context: PasswordContext): boolean {
  const tokens = contextTokens(context);
  if (tokens.length === 0) return false;
  const folded = fold(password);
  const forms = new Set([alphanumeric(folded), ...LOOKALIKES.map((undo) => alphanumeric(undo(folded)))]);
  for (const form of forms) {
    let remainder = form;
    for (const token of tokens) remainder = remainder.split(token).join('');
    if (remainder === form) continue;
    if (remainder.length < MIN_REMAINDER_LENGTH || isTooSimple(remainder) || isTooCommon(remainder)) return true;
  }
  return false;
}

/** The email's and organization name's tokens, longest first. */
function contextTokens({ email, organizationName }: PasswordContext): string[] {
  const address = fold(email).trim();
  const at = address.lastIndexOf('@');
  const local = at >= 0 ? address.slice(0, at) : address;
  const domain = at >= 0 ? address.slice(at + 1) : '';
  const untagged = local.split('+')[0];
  const org = fold(organizationName);
  const candidates = [
    address,
    local,
    untagged,
    ...words(untagged),
    ...domain.split('.').slice(0, -1),
    org,
    ...words(org),
  ].map(alphanumeric);
  return [...new Set(candidates)].filter((t) => t.length >= MIN_TOKEN_LENGTH).sort((a, b) => b.length - a.length);
}

function words(text: string): string[] {
  return text.split(/[^\p{L}\p{N}]+/u);
}

// ---- shared ---------------------------------------------------------------------------------------

/** Compatibility-normalized and lower case: what every comparison here works on. */
function fold(text: string): string {
  return text.normalize('NFKC').toLowerCase();
}

function alphanumeric(text: string): string {
  return text.replace(/[^\p{L}\p{N}]+/gu, '');
}

/**
 * Identifiers that must be unique within an organization and that people type (a product's SKU):
 * two that look the same must be the same (docs/api.md section 7). A value is put in NFKC form
 * (composed, and compatibility forms folded: fullwidth `ＣＡＦÉ` is `CAFÉ`, NFD's `E` + U+0301 is
 * `É`), trimmed, and its runs of spaces made one; a value that holds a character nobody can see or
 * type (zero-width, bidi and other format characters, variation selectors, controls, line breaks,
 * unassigned code points) is refused rather than silently cleaned, so what is stored is what the
 * caller sees in the answer. Letter case is kept and compared as sent.
 */
export type NormalizedIdentifier = { ok: true; value: string } | { ok: false; code: 'invalid_characters' | 'required' | 'out_of_range'; message: string };

// Default_Ignorable_Code_Point covers the zero-width characters, bidi controls, the soft hyphen,
// variation selectors and tag characters; Cc, Cf, Zl, Zp and Cn the controls, format characters,
// separators and unassigned code points it leaves out.
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Cc}\p{Cf}\p{Zl}\p{Zp}\p{Cn}]/u;
/** Space characters other than U+0020 that survive NFKC (NFKC already folds NBSP and U+3000). */
const OTHER_SPACE = /[^\S ]/u;

export function normalizeIdentifier(input: string, maxLength: number): NormalizedIdentifier {
  const folded = input.normalize('NFKC');
  if (INVISIBLE.test(folded) || OTHER_SPACE.test(folded)) {
    return { ok: false, code: 'invalid_characters', message: 'must not contain invisible or format characters, controls or line breaks' };
  }
  const value = folded.trim().replace(/ {2,}/g, ' ');
  if (value.length === 0) return { ok: false, code: 'required', message: 'must not be blank' };
  // NFKC can lengthen a value (U+FDFA is 18 characters): the bound holds for what is stored.
  if (value.length > maxLength) return { ok: false, code: 'out_of_range', message: `must be at most ${maxLength} characters once normalized` };
  return { ok: true, value };
}

import { isCountryCode } from '@invoicing/contracts';
import { PlatformError } from '@invoicing/service-kit';
import {
  checkAddress,
  checkBic,
  checkEmail,
  checkIban,
  checkText,
  checkVatId,
  FieldCheck,
  ibanChecksumValid,
  normalizeIban,
  parseProfilePatch,
  SEPA_IBAN_LENGTHS,
} from './profile-fields';

/** The code of a refused value, or its normalized form. */
const outcome = (check: FieldCheck<string>) => (check.ok ? { value: check.value } : { field: check.error.field, code: check.error.code });

/** What parseProfilePatch refuses: status and [field, code] of each fault. */
function refusal(body: unknown): { status: number; errors: Array<[string, string]> } {
  try {
    parseProfilePatch(body);
  } catch (e) {
    if (!(e instanceof PlatformError)) throw e;
    return { status: e.status, errors: (e.errors ?? []).map((f) => [f.field, f.code]) };
  }
  throw new Error('accepted');
}

describe('IBAN', () => {
  it('is normalized: spaces removed, upper case', () => {
    expect(normalizeIban('de89 3704 0044 0532 0130 00')).toBe('DE89370400440532013000');
    expect(outcome(checkIban(' fr14 2004 1010 0505 0001 3m02 606 '))).toEqual({ value: 'FR1420041010050500013M02606' });
  });

  it('passes ISO 7064 mod 97-10 for real IBANs of SEPA countries and others, and fails a typo or a swap', () => {
    for (const iban of [
      'DE89 3704 0044 0532 0130 00',
      'GB82 WEST 1234 5698 7654 32',
      'NL91 ABNA 0417 1643 00',
      'BE68 5390 0754 7034',
      'CH93 0076 2011 6238 5295 7',
      'NO93 8601 1117 947',
      'MT84 MALT 0110 0001 2345 MTLC AST0 01S',
      'BR18 0036 0305 0000 1000 9795 493C 1',
      'SA03 8000 0000 6080 1016 7519',
      'LC55 HEMM 0001 0001 0012 0012 0002 3015',
      'XK05 1212 0123 4567 8906',
    ]) {
      expect({ iban, check: outcome(checkIban(iban)) }).toEqual({ iban, check: { value: normalizeIban(iban) } });
    }
    expect(ibanChecksumValid('DE89370400440532013000')).toBe(true);
    // One digit wrong, two digits swapped: what mod 97 exists to catch.
    expect(ibanChecksumValid('DE89370400440532013001')).toBe(false);
    expect(ibanChecksumValid('DE89370400440532010300')).toBe(false);
    expect(outcome(checkIban('DE89 3704 0044 0532 0130 01'))).toEqual({ field: 'iban', code: 'invalid_checksum' });
  });

  it('must have its SEPA country\'s exact length, checked before the check digits', () => {
    // A valid checksum over 20 characters: still not a German IBAN (22).
    expect(ibanChecksumValid('DE863704004405320130')).toBe(true);
    const short = checkIban('DE86 3704 0044 0532 0130');
    expect(outcome(short)).toEqual({ field: 'iban', code: 'invalid_length' });
    expect(short.ok ? '' : short.error.message).toContain('22 characters for DE');
    expect(outcome(checkIban('NL91ABNA04171643000'))).toEqual({ field: 'iban', code: 'invalid_length' });
    // Outside SEPA, 15 to 34 characters.
    expect(outcome(checkIban('US8412345678901234'))).toEqual({ value: 'US8412345678901234' });
    expect(outcome(checkIban('US84123456789'))).toEqual({ field: 'iban', code: 'invalid_length' });
    expect(outcome(checkIban(`US84${'1'.repeat(31)}`))).toEqual({ field: 'iban', code: 'invalid_length' });
  });

  it('refuses what is no IBAN, naming the field: a country that is none, a bad shape, blank, control characters', () => {
    expect(outcome(checkIban('ZZ1812345678901234'))).toEqual({ field: 'iban', code: 'invalid_country' });
    expect(outcome(checkIban('DEXX370400440532013000'))).toEqual({ field: 'iban', code: 'invalid_format' });
    expect(outcome(checkIban('DE89-3704-0044-0532-0130-00'))).toEqual({ field: 'iban', code: 'invalid_format' });
    expect(outcome(checkIban('1289370400440532013000'))).toEqual({ field: 'iban', code: 'invalid_format' });
    expect(outcome(checkIban('DE89 3704 0044 0532 0130 0Ä'))).toEqual({ field: 'iban', code: 'invalid_format' });
    expect(outcome(checkIban('   '))).toEqual({ field: 'iban', code: 'required' });
    expect(outcome(checkIban('DE89370400440532013000\n'))).toEqual({ field: 'iban', code: 'invalid_characters' });
    expect(outcome(checkIban('DE89\t370400440532013000'))).toEqual({ field: 'iban', code: 'invalid_characters' });
  });

  it('knows the SEPA countries: every EU and EEA member, each with a length an IBAN can have', () => {
    const eu = 'AT BE BG CY CZ DE DK EE ES FI FR GR HR HU IE IT LT LU LV MT NL PL PT RO SE SI SK'.split(' ');
    expect(Object.keys(SEPA_IBAN_LENGTHS)).toEqual(expect.arrayContaining([...eu, 'IS', 'LI', 'NO', 'CH', 'GB', 'MC', 'SM', 'VA', 'AD']));
    for (const [country, length] of Object.entries(SEPA_IBAN_LENGTHS)) {
      expect({ country, known: isCountryCode(country), length: length >= 15 && length <= 34 }).toEqual({ country, known: true, length: true });
    }
    expect(SEPA_IBAN_LENGTHS).toMatchObject({ DE: 22, FR: 27, NL: 18, BE: 16, NO: 15, MT: 31, GB: 22, CH: 21, IT: 27, ES: 24 });
  });
});

describe('BIC', () => {
  it('is 8 or 11 characters: bank, country, location, optional branch; spaces dropped, upper case', () => {
    expect(outcome(checkBic('DEUTDEFF'))).toEqual({ value: 'DEUTDEFF' });
    expect(outcome(checkBic('deut de ff 500'))).toEqual({ value: 'DEUTDEFF500' });
    expect(outcome(checkBic('PSSTFRPPPAR'))).toEqual({ value: 'PSSTFRPPPAR' });
    for (const bad of ['DEUTDEF', 'DEUTDEFF5', 'DEUTDEFF50', 'DEUTDEFF5000', '1EUTDEFF', 'DEUT1EFF', 'DEUTDEF_', 'DEUT-DE-FF']) {
      expect({ bad, check: outcome(checkBic(bad)) }).toEqual({ bad, check: { field: 'bic', code: 'invalid_format' } });
    }
    expect(outcome(checkBic(' '))).toEqual({ field: 'bic', code: 'required' });
    expect(outcome(checkBic('DEUTDEFF\u0000'))).toEqual({ field: 'bic', code: 'invalid_characters' });
  });
});

describe('VAT id', () => {
  it('is a 2-letter prefix and 2 to 13 letters or digits; spaces, dots and hyphens dropped, upper case', () => {
    expect(outcome(checkVatId('DE123456789'))).toEqual({ value: 'DE123456789' });
    expect(outcome(checkVatId('fr 40 303.265-045'))).toEqual({ value: 'FR40303265045' });
    expect(outcome(checkVatId('ATU12345678'))).toEqual({ value: 'ATU12345678' });
    expect(outcome(checkVatId('EL123456789'))).toEqual({ value: 'EL123456789' });
    expect(outcome(checkVatId('NL123456789B01'))).toEqual({ value: 'NL123456789B01' });
    expect(outcome(checkVatId(`DE${'1'.repeat(13)}`))).toEqual({ value: `DE${'1'.repeat(13)}` });
    for (const bad of ['123456789', 'D1234567', 'DE1', `DE${'1'.repeat(14)}`, 'DE12345678#', 'DÉ123456789']) {
      expect({ bad, check: outcome(checkVatId(bad)) }).toEqual({ bad, check: { field: 'vat_id', code: 'invalid_format' } });
    }
    expect(outcome(checkVatId('DE123\n456789'))).toEqual({ field: 'vat_id', code: 'invalid_characters' });
  });
});

describe('email', () => {
  it('takes an address of the usual shape, trimmed', () => {
    expect(outcome(checkEmail(' billing@acme.example '))).toEqual({ value: 'billing@acme.example' });
    expect(outcome(checkEmail('Ada.Lovelace+invoices@mail.example.co.uk'))).toEqual({ value: 'Ada.Lovelace+invoices@mail.example.co.uk' });
    expect(outcome(checkEmail('billing@xn--mnchen-3ya.xn--p1ai'))).toEqual({ value: 'billing@xn--mnchen-3ya.xn--p1ai' });
  });

  it('refuses what is not one, naming the field', () => {
    for (const bad of ['no-at-sign', 'a@b', 'a b@example.com', 'a@-example.com', 'a@example..com', 'a@example.c0m', '@example.com', 'a@@example.com', `${'a'.repeat(65)}@example.com`, 'a@exa mple.com']) {
      expect({ bad, check: outcome(checkEmail(bad)) }).toEqual({ bad, check: { field: 'email', code: 'invalid_format' } });
    }
    // 255 characters: one more than an address may have.
    const long = `a@${`${'b'.repeat(60)}.`.repeat(4)}c.example`;
    expect(long).toHaveLength(255);
    expect(outcome(checkEmail(long))).toEqual({ field: 'email', code: 'out_of_range' });
    expect(outcome(checkEmail('billing@acme.example\r\n'))).toEqual({ field: 'email', code: 'invalid_characters' });
  });
});

describe('text fields', () => {
  it('are trimmed, not blank, bounded', () => {
    expect(outcome(checkText('legal_name', '  Acme SARL  ', 200))).toEqual({ value: 'Acme SARL' });
    expect(outcome(checkText('legal_name', '   ', 200))).toEqual({ field: 'legal_name', code: 'required' });
    expect(outcome(checkText('legal_name', 'x'.repeat(201), 200))).toEqual({ field: 'legal_name', code: 'out_of_range' });
    expect(outcome(checkText('legal_name', 'x'.repeat(200), 200))).toEqual({ value: 'x'.repeat(200) });
  });

  it('hold no control characters: C0, C1, line and paragraph separators, bidi overrides; line breaks only where multi-line', () => {
    for (const bad of ['Acme\nSARL', 'Acme\tSARL', 'Acme\u0000', 'Acme\u007f', 'Acme\u0085', 'Acme\u2028', 'Acme \u202eLRAS', 'Acme \u2066x\u2069']) {
      expect({ bad, check: outcome(checkText('legal_name', bad, 200)) }).toEqual({ bad, check: { field: 'legal_name', code: 'invalid_characters' } });
    }
    expect(outcome(checkText('payment_terms', 'Payable within 30 days.\r\nLate payment: 40 EUR.', 1000, { multiline: true }))).toEqual({
      value: 'Payable within 30 days.\r\nLate payment: 40 EUR.',
    });
    for (const bad of ['a\tb', 'a\u0000b', 'a\u0085b', 'a\u202eb']) {
      expect(outcome(checkText('payment_terms', bad, 1000, { multiline: true }))).toEqual({ field: 'payment_terms', code: 'invalid_characters' });
    }
    // Letters of every script are text, not controls.
    expect(outcome(checkText('legal_name', 'Société Générale — 株式会社 — شركة', 200))).toEqual({ value: 'Société Générale — 株式会社 — شركة' });
  });
});

describe('address', () => {
  it('has every key in the API\'s order, optional lines null when absent or blank, each line checked under its own name', () => {
    expect(checkAddress({ city: ' Paris ', country: 'FR', line1: '1 rue de la Paix', region: '  ' })).toEqual({
      ok: true,
      value: { line1: '1 rue de la Paix', line2: null, city: 'Paris', postal_code: null, region: null, country: 'FR' },
    });
    const bad = checkAddress({ line1: '1 rue\nde la Paix', city: ' ', country: 'FR', line2: 'a\u0000' });
    expect(bad.ok ? [] : bad.errors.map((e) => [e.field, e.code])).toEqual([
      ['address.line1', 'invalid_characters'],
      ['address.line2', 'invalid_characters'],
      ['address.city', 'required'],
    ]);
  });
});

describe(parseProfilePatch.name, () => {
  it('keeps only the fields sent, normalized, and null to clear', () => {
    expect(parseProfilePatch({})).toEqual({});
    expect(parseProfilePatch({ legal_name: ' Acme SARL ', iban: 'fr14 2004 1010 0505 0001 3m02 606', bic: null })).toEqual({
      legal_name: 'Acme SARL',
      iban: 'FR1420041010050500013M02606',
      bic: null,
    });
    expect(parseProfilePatch({ address: { line1: '1 Main St', city: 'Springfield', country: 'US' }, payment_terms: null })).toEqual({
      address: { line1: '1 Main St', line2: null, city: 'Springfield', postal_code: null, region: null, country: 'US' },
      payment_terms: null,
    });
    expect(parseProfilePatch({ address: null })).toEqual({ address: null });
  });

  it('refuses the whole request with 422 naming every field at fault, an unknown one included', () => {
    expect(refusal({ iban: 'DE89 3704 0044 0532 0130 01', bic: 'DEUT', legal_name: 'Acme' })).toEqual({
      status: 422,
      errors: [
        ['iban', 'invalid_checksum'],
        ['bic', 'invalid_format'],
      ],
    });
    expect(refusal({ legal_name: 'Acme', logo: 'x' })).toEqual({ status: 422, errors: [['logo', 'unknown_field']] });
    expect(refusal({ legal_name: 42 })).toEqual({ status: 422, errors: [['legal_name', 'invalid_type']] });
    expect(refusal({ legal_name: 'x'.repeat(201) })).toEqual({ status: 422, errors: [['legal_name', 'out_of_range']] });
    expect(refusal({ payment_terms: 'x'.repeat(1001) })).toEqual({ status: 422, errors: [['payment_terms', 'out_of_range']] });
    expect(refusal({ legal_name: 'Acme\u0000' }).errors).toEqual([['legal_name', 'invalid_characters']]);
    expect(refusal({ address: { line1: 'x', country: 'fr' } })).toEqual({
      status: 422,
      errors: expect.arrayContaining([
        ['address.city', 'required'],
        ['address.country', 'invalid_format'],
      ]),
    });
    expect(refusal({ address: { line1: 'x', city: 'y', country: 'FR', floor: 2 } }).errors).toEqual([['address.floor', 'unknown_field']]);
    for (const notAnObject of [null, [], 'legal_name', 42]) expect(refusal(notAnObject)).toEqual({ status: 422, errors: [['(body)', 'invalid_type']] });
  });
});

import { CURRENCY_MINOR_UNITS, isCalendarDate, isCountryCode, isCurrencyCode, isDateTime } from './iso-codes';
import { normalizeIdentifier } from './identifiers';

describe('code lists and date ranges (docs/api.md section 2)', () => {
  it('knows the currencies in use with their minor units, and nothing that is no money', () => {
    expect([CURRENCY_MINOR_UNITS.EUR, CURRENCY_MINOR_UNITS.JPY, CURRENCY_MINOR_UNITS.KWD, CURRENCY_MINOR_UNITS.CLF]).toEqual([2, 0, 3, 4]);
    for (const code of ['EUR', 'USD', 'XCG', 'BGN']) expect({ code, ok: isCurrencyCode(code) }).toEqual({ code, ok: true });
    for (const code of ['ZZZ', 'XXX', 'XTS', 'XAU', 'XDR', 'eur', 'toString', '__proto__']) expect({ code, ok: isCurrencyCode(code) }).toEqual({ code, ok: false });
    expect([isCountryCode('DE'), isCountryCode('ZZ'), isCountryCode('de')]).toEqual([true, false, false]);
  });

  it('takes real days from 1900-01-01 to 9999-12-31 only', () => {
    for (const day of ['1900-01-01', '2024-02-29', '9999-12-31']) expect({ day, ok: isCalendarDate(day) }).toEqual({ day, ok: true });
    for (const day of ['0000-01-01', '0099-01-01', '1899-12-31', '2023-02-29', '2026-13-01', '10000-01-01', '+2026-01-01']) {
      expect({ day, ok: isCalendarDate(day) }).toEqual({ day, ok: false });
    }
  });

  it('takes RFC 3339 date-times whose instant is in the range, whatever the offset', () => {
    for (const at of ['2026-11-26T10:00:00Z', '2026-11-26t10:00:00.123456+01:00', '1899-12-31T23:00:00-02:00', '9999-12-31T23:59:59Z']) {
      expect({ at, ok: isDateTime(at) }).toEqual({ at, ok: true });
    }
    for (const at of ['0000-01-01T00:00:00Z', '9999-12-31T23:59:59-01:00', '2026-11-26T24:00:00Z', '2026-12-31T23:59:60Z', '2026-11-26T10:00:00', '2026-11-26T10:00:00+24:00']) {
      expect({ at, ok: isDateTime(at) }).toEqual({ at, ok: false });
    }
  });
});

describe(normalizeIdentifier.name, () => {
  it('gives look-alikes one form, and refuses what cannot be seen', () => {
    const form = (s: string) => normalizeIdentifier(s, 64);
    for (const lookAlike of ['CAFE\u0301-1', '\uff23\uff21\uff26\uff25\u0301\uff0d\uff11', ' CAF\u00c9-1 ', '\u00a0CAF\u00c9-1']) {
      expect(form(lookAlike)).toEqual({ ok: true, value: 'CAF\u00c9-1' });
    }
    expect(form('A   B')).toEqual({ ok: true, value: 'A B' });
    for (const hidden of ['A\u200bB', 'A\u200dB', '\u202eAB', 'A\u00adB', 'A\ufe0fB', 'A\tB', 'A\nB']) expect(form(hidden)).toMatchObject({ ok: false, code: 'invalid_characters' });
    expect(form('   ')).toMatchObject({ ok: false, code: 'required' });
    // NFKC can lengthen a value: the bound holds for what is stored.
    expect(normalizeIdentifier('\ufdfa', 10)).toMatchObject({ ok: false, code: 'out_of_range' });
  });
});

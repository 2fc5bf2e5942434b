import { dateInputRange, endOfLocalDay, expiresAtFor, PRESET_MARGIN_MS, toDateInputValue } from './expiry';

const DAY = 86_400_000;

describe('expiry', () => {
  const now = new Date('2025-03-10T12:00:00.000Z');

  it('sends nothing for Never and now plus the days, less the clock margin, for a preset', () => {
    expect(expiresAtFor('never', '', now)).toEqual({ ok: true, expiresAt: null });
    expect(expiresAtFor('30', '', now)).toEqual({ ok: true, expiresAt: new Date(now.getTime() + 30 * DAY - PRESET_MARGIN_MS).toISOString() });
    expect(expiresAtFor('90', '', now)).toEqual({ ok: true, expiresAt: new Date(now.getTime() + 90 * DAY - PRESET_MARGIN_MS).toISOString() });
    expect(expiresAtFor('365', '', now)).toEqual({ ok: true, expiresAt: new Date(now.getTime() + 365 * DAY - PRESET_MARGIN_MS).toISOString() });
  });

  it('sends the end of the chosen day in local time for a date, and the time in RFC 3339', () => {
    const result = expiresAtFor('date', '2025-04-30', now);
    expect(result).toEqual({ ok: true, expiresAt: new Date(2025, 3, 30, 23, 59, 59).toISOString() });
    expect(result.ok && result.expiresAt).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/);
  });

  it('leaves past and far dates to the server, which owns the rule and the clock', () => {
    expect(expiresAtFor('date', '2020-01-01', now)).toEqual({ ok: true, expiresAt: new Date(2020, 0, 1, 23, 59, 59).toISOString() });
    expect(expiresAtFor('date', '2099-01-01', now).ok).toBe(true);
  });

  it('asks for a date when there is none or it is no date', () => {
    expect(expiresAtFor('date', '', now)).toEqual({ ok: false, message: 'Choose the date the key expires.' });
    expect(expiresAtFor('date', '2025-02-30', now)).toEqual({ ok: false, message: 'Enter a date like 2030-03-31.' });
    expect(expiresAtFor('date', '31/03/2025', now).ok).toBe(false);
    expect(expiresAtFor('tomorrow', '', now).ok).toBe(false);
  });

  it('reads date input values as local calendar days', () => {
    expect(endOfLocalDay('2024-02-29')?.getDate()).toBe(29);
    expect(endOfLocalDay('2025-02-29')).toBeNull();
    expect(endOfLocalDay(' 2025-12-31 ')?.getHours()).toBe(23);
    expect(toDateInputValue(new Date(2025, 0, 5, 8))).toBe('2025-01-05');
  });

  it('offers dates from today to the last day that ends within a year', () => {
    const local = new Date(2025, 2, 10, 12);
    expect(dateInputRange(local)).toEqual({ min: '2025-03-10', max: '2026-03-09' });
    const { max } = dateInputRange(local);
    expect(endOfLocalDay(max)?.getTime()).toBeLessThanOrEqual(local.getTime() + 365 * DAY);
  });
});

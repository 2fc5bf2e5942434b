/**
 * Create key → Expires: what each choice sends as `expires_at`, and the range offered by the date
 * picker. No DOM, so it is unit-tested. The server decides what is acceptable (in the future, at most
 * one year ahead, by its own clock); the page only turns a choice into a time.
 */

const DAY_MS = 86_400_000;

/** The radio values of the Expires choice: "never", a number of days, or "date". */
export const EXPIRY_PRESET_DAYS: Readonly<Record<string, number>> = { '30': 30, '90': 90, '365': 365 };

/**
 * A preset counts from now less this margin. The server measures "at most one year ahead" with its
 * own clock, and a browser clock a little ahead of it would make "365 days" too far; five minutes off
 * a key's lifetime is not something anyone notices.
 */
export const PRESET_MARGIN_MS = 5 * 60_000;

export type ExpiryResult = { ok: true; expiresAt: string | null } | { ok: false; message: string };

/**
 * `YYYY-MM-DD` (an `<input type="date">` value) → the end of that day (23:59:59) in the reader's
 * time zone, or null for anything that is not a real calendar date. End of day, not midnight: a
 * person who picks "31 March" expects the key to work on the 31st.
 */
export function endOfLocalDay(value: string): Date | null {
  const match = /^(\d{4})-(\d{2})-(\d{2})$/.exec(value.trim());
  if (!match) return null;
  const [year, month, day] = [Number(match[1]), Number(match[2]), Number(match[3])];
  const date = new Date(year, month - 1, day, 23, 59, 59, 0);
  // The Date constructor rolls 31 February over into March: such a value was no date.
  if (date.getFullYear() !== year || date.getMonth() !== month - 1 || date.getDate() !== day) return null;
  return date;
}

/** The `expires_at` to send for a choice (null: never), or the message for the Expires field. */
export function expiresAtFor(choice: string, dateValue: string, now: Date = new Date()): ExpiryResult {
  if (choice === 'never') return { ok: true, expiresAt: null };
  const days = EXPIRY_PRESET_DAYS[choice];
  if (days !== undefined) return { ok: true, expiresAt: new Date(now.getTime() + days * DAY_MS - PRESET_MARGIN_MS).toISOString() };
  if (choice === 'date') {
    if (!dateValue.trim()) return { ok: false, message: 'Choose the date the key expires.' };
    const end = endOfLocalDay(dateValue);
    // Past dates and dates more than a year ahead are left to the server, whose 422 is shown under
    // the field: it owns the rule and the clock.
    return end ? { ok: true, expiresAt: end.toISOString() } : { ok: false, message: 'Enter a date like 2030-03-31.' };
  }
  return { ok: false, message: 'Choose when the key expires.' };
}

/** A local date as `YYYY-MM-DD`, the format of `<input type="date">` values. */
export function toDateInputValue(date: Date): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())}`;
}

/**
 * The picker's `min` and `max`: from today (whose end is still ahead) to the last day whose end is
 * less than a year away. Only a hint to the picker; typed dates still go to the server to judge.
 */
export function dateInputRange(now: Date = new Date()): { min: string; max: string } {
  return { min: toDateInputValue(now), max: toDateInputValue(new Date(now.getTime() + 364 * DAY_MS)) };
}

import { RollKeyInput } from './settings-api.client.js';

/**
 * Roll secret → "Current secret stops working": the overlap choices, as the seconds the API takes in
 * `previous_secret_expires_in` (the radio values). No DOM, so it is unit-tested.
 */
export const OVERLAP_SECONDS = {
  immediately: 0,
  oneHour: 3_600,
  oneDay: 86_400,
  sevenDays: 604_800,
} as const;

const ALLOWED: ReadonlySet<number> = new Set(Object.values(OVERLAP_SECONDS));

/**
 * The roll request for the chosen radio value and checkbox, or null for a value that is no choice.
 * Ending the sessions is for a leaked secret, which must stop at once too: the API refuses it with
 * an overlap, and the dialog selects Immediately when the box is ticked.
 */
export function rollInput(overlap: string | null, endSessions: boolean): RollKeyInput | null {
  if (endSessions) return { previous_secret_expires_in: 0, end_sessions: true };
  if (overlap === null || !/^\d+$/.test(overlap)) return null;
  const seconds = Number(overlap);
  if (!ALLOWED.has(seconds)) return null;
  // end_sessions is sent only when asked for, so a plain rotation's request says just that.
  return endSessions ? { previous_secret_expires_in: seconds, end_sessions: true } : { previous_secret_expires_in: seconds };
}

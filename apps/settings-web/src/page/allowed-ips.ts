import { FieldError, fieldSentence } from './problem-details.js';
import { ApiError } from './settings-api.client.js';

/**
 * The "Allowed IP addresses" textarea (Create key, and Edit allowed IPs on a key): one address or
 * CIDR block per line. The page does not parse addresses: the server does (IPv6 has many spellings)
 * and answers with the canonical form, or with a 422 naming the entry by index, `allowed_ips[3]`.
 */

/** The server's ceiling (422 `too_many` beyond it), checked here too to spare a round trip. */
export const MAX_ALLOWED_IPS = 100;

/** One entry as sent, with the line it was typed on (blank lines are not sent, so they differ). */
export interface AddressEntry {
  value: string;
  line: number;
}

/** Trimmed, non-empty lines; an empty list means any address. */
export function parseAddressLines(text: string): AddressEntry[] {
  return text
    .split(/\r\n|\r|\n/)
    .map((raw, i) => ({ value: raw.trim(), line: i + 1 }))
    .filter((entry) => entry.value !== '');
}

/** The textarea's text for a key's list, one entry a line. */
export function addressesText(list: readonly string[]): string {
  return list.join('\n');
}

const ENTRY_FIELD = /^[/$.]*allowed_ips(?:\[(\d+)\]|[./](\d+))$/;
const LEADING_QUOTE = /^\s*(?:"(?:[^"\\]|\\.)*"|“[^”]*”)\s*/;

/**
 * `allowed_ips[3]` errors reworded to name the entry and its line, "“10.0.0.300” (line 4) is not an IP
 * address.", so that a person finds it in a long list; the rest are returned as they are.
 */
export function nameAddressErrors(errors: readonly FieldError[], entries: readonly AddressEntry[]): FieldError[] {
  return errors.map((error) => {
    const match = ENTRY_FIELD.exec(error.field);
    const entry = match ? entries[Number(match[1] ?? match[2])] : undefined;
    if (!entry) return error;
    const subject = `“${entry.value}” (line ${entry.line})`;
    // The server echoes the entry first (`"10.0.0.300" is not …`, cut short when long): the page
    // names it itself, whole and with its line, so the echo is dropped rather than repeated.
    const sentence = fieldSentence(subject, error.message.replace(LEADING_QUOTE, ''));
    return { ...error, message: sentence.startsWith(subject) ? sentence : `${subject}: ${sentence}` };
  });
}

/** The same failure, with its entry errors named (see {@link nameAddressErrors}); anything else as it is. */
export function withNamedAddresses(error: unknown, entries: readonly AddressEntry[]): unknown {
  if (!(error instanceof ApiError) || error.problem.errors.length === 0) return error;
  return new ApiError({ ...error.problem, errors: nameAddressErrors(error.problem.errors, entries) }, error.retryAfterSeconds);
}

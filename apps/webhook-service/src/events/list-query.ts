/** An RFC 3339 date-time from 1900 to 9999, as an ISO string; null otherwise (the `created[...]` filters). */
export function parseInstant(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,9})?(Z|[+-]\d{2}:\d{2})$/i.test(value)) return null;
  const ms = Date.parse(value);
  if (Number.isNaN(ms)) return null;
  const year = new Date(ms).getUTCFullYear();
  return year >= 1900 && year <= 9999 ? new Date(ms).toISOString() : null;
}

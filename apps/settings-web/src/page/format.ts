/** Display helpers for the key list and the scope checkboxes; no DOM, so they are unit-tested. */

/** `2025-01-31T09:05:00.000Z` → "31 Jan 2025, 09:05" in the reader's locale and time zone. */
export function formatDateTime(iso: string, locale?: string, timeZone?: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(date);
}

/** `invoices` → "Invoices". */
export function resourceTitle(resource: string): string {
  return resource.charAt(0).toUpperCase() + resource.slice(1);
}

/**
 * What a scope lets an integration do, in words (contract section 5: `write` means create).
 * Unknown actions fall back to the scope itself, so a scope added on the server still shows.
 */
export function scopeDescription(scope: string): string {
  const [action, resource = ''] = scope.split(':', 2);
  switch (action) {
    case 'read':
      return `List and view ${resource}`;
    case 'write':
      return `Create ${resource}`;
    default:
      return scope;
  }
}

/** "Active" / "Revoked" for the status column; anything else is shown as sent. */
export function statusLabel(status: string): string {
  return status === 'active' ? 'Active' : status === 'revoked' ? 'Revoked' : status;
}

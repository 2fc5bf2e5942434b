/** Display helpers for the key list, the scope checkboxes and the audit log; no DOM, so they are unit-tested. */

/** `2025-01-31T09:05:00.000Z` → "31 Jan 2025, 09:05" in the reader's locale and time zone. */
export function formatDateTime(iso: string, locale?: string, timeZone?: string): string {
  const date = new Date(iso);
  if (Number.isNaN(date.getTime())) return iso;
  return new Intl.DateTimeFormat(locale, { dateStyle: 'medium', timeStyle: 'short', timeZone }).format(date);
}

/** `invoices` → "Invoices". */
export function resourceTitle(resource: string): string {
  const words = resource.replace(/_/g, ' ');
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/**
 * What a scope lets an integration do, in words (docs/api.md section 5: `write` means create).
 * Unknown actions fall back to the scope itself, so a scope added on the server still shows.
 */
export function scopeDescription(scope: string): string {
  const [action, resource = ''] = scope.split(':', 2);
  switch (action) {
    case 'read':
      return `List and view ${resource.replace(/_/g, ' ')}`;
    case 'write':
      // Webhook endpoints are also changed, rolled and deleted with it.
      return resource === 'webhook_endpoints' ? 'Create and manage webhook endpoints' : `Create ${resource}`;
    default:
      return scope;
  }
}

const STATUS_LABELS: Readonly<Record<string, string>> = { active: 'Active', revoked: 'Revoked', expired: 'Expired' };

/** "Active" / "Revoked" / "Expired" for the status row; anything else is shown as sent. */
export function statusLabel(status: string): string {
  return STATUS_LABELS[status] ?? status;
}

/**
 * The status to show: the server's, except that an active key whose expiry has passed since the list
 * was loaded is shown expired (the server already refuses it, and offering to roll it would only
 * earn a 409).
 */
export function displayStatus(key: { status: string; expires_at: string | null }, now: number = Date.now()): string {
  if (key.status === 'active' && key.expires_at !== null && Date.parse(key.expires_at) <= now) return 'expired';
  return key.status;
}

const HOUR_MS = 3_600_000;
const DAY_MS = 24 * HOUR_MS;
/** An active key that expires within this many days gets a warning badge in the list. */
export const EXPIRY_WARNING_DAYS = 7;

/**
 * "Expires in 3 days" for a key that expires within {@link EXPIRY_WARNING_DAYS}, null otherwise (no
 * expiry, further away, or already past). Rounded down: a warning never promises more time than is
 * left.
 */
export function expiresSoonLabel(expiresAt: string | null, now: number = Date.now()): string | null {
  if (expiresAt === null) return null;
  const left = Date.parse(expiresAt) - now;
  if (Number.isNaN(left) || left <= 0 || left > EXPIRY_WARNING_DAYS * DAY_MS) return null;
  if (left >= DAY_MS) return `Expires in ${plural(Math.floor(left / DAY_MS), 'day')}`;
  if (left >= HOUR_MS) return `Expires in ${plural(Math.floor(left / HOUR_MS), 'hour')}`;
  return 'Expires in less than an hour';
}

/** True while a rolled-over previous secret is still accepted. */
export function previousSecretAccepted(previousExpiresAt: string | null, now: number = Date.now()): boolean {
  return previousExpiresAt !== null && Date.parse(previousExpiresAt) > now;
}

/** "1 day", "3 days". */
export function plural(n: number, unit: string): string {
  return `${n} ${unit}${n === 1 ? '' : 's'}`;
}

/**
 * A URL from elsewhere (a secret-scanning report) that is safe to link: http or https only, and no
 * user name or password (`https://github.com@evil.example/` reads like GitHub). Returns the parsed,
 * normalized address, which is what the link shows and opens; null: show the text, link nothing.
 */
export function safeHttpUrl(value: string | null | undefined): string | null {
  if (!value) return null;
  let url: URL;
  try {
    url = new URL(value.trim());
  } catch {
    return null;
  }
  if (url.protocol !== 'https:' && url.protocol !== 'http:') return null;
  if (url.username !== '' || url.password !== '') return null;
  return url.href;
}

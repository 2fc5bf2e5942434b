import { displayStatus, expiresSoonLabel, formatDateTime, previousSecretAccepted, resourceTitle, safeHttpUrl, scopeDescription, statusLabel } from './format';

describe('format', () => {
  it('formats an RFC 3339 time in the given locale and zone, and leaves garbage as it is', () => {
    expect(formatDateTime('2025-01-31T09:05:00.000Z', 'en-GB', 'UTC')).toBe('31 Jan 2025, 09:05');
    expect(formatDateTime('not a date', 'en-GB', 'UTC')).toBe('not a date');
  });

  it('describes scopes in words (write means create, docs/api.md section 5)', () => {
    expect(scopeDescription('read:invoices')).toBe('List and view invoices');
    expect(scopeDescription('write:clients')).toBe('Create clients');
    expect(scopeDescription('read:webhook_endpoints')).toBe('List and view webhook endpoints');
    expect(scopeDescription('write:webhook_endpoints')).toBe('Create and manage webhook endpoints');
    expect(scopeDescription('admin:everything')).toBe('admin:everything');
  });

  it('titles resources and statuses', () => {
    expect(resourceTitle('invoices')).toBe('Invoices');
    expect(resourceTitle('webhook_endpoints')).toBe('Webhook endpoints');
    expect(statusLabel('active')).toBe('Active');
    expect(statusLabel('revoked')).toBe('Revoked');
    expect(statusLabel('expired')).toBe('Expired');
    expect(statusLabel('suspended')).toBe('suspended');
  });

  const now = Date.parse('2025-03-10T12:00:00.000Z');
  const inMs = (ms: number) => new Date(now + ms).toISOString();
  const HOUR = 3_600_000;
  const DAY = 24 * HOUR;

  it('warns of an expiry within 7 days, rounding the time left down', () => {
    expect(expiresSoonLabel(null, now)).toBeNull();
    expect(expiresSoonLabel(inMs(30 * DAY), now)).toBeNull();
    expect(expiresSoonLabel(inMs(7 * DAY + 1), now)).toBeNull();
    expect(expiresSoonLabel(inMs(7 * DAY), now)).toBe('Expires in 7 days');
    expect(expiresSoonLabel(inMs(2 * DAY - 1), now)).toBe('Expires in 1 day');
    expect(expiresSoonLabel(inMs(5 * HOUR + 59 * 60_000), now)).toBe('Expires in 5 hours');
    expect(expiresSoonLabel(inMs(HOUR), now)).toBe('Expires in 1 hour');
    expect(expiresSoonLabel(inMs(59 * 60_000), now)).toBe('Expires in less than an hour');
    expect(expiresSoonLabel(inMs(0), now)).toBeNull();
    expect(expiresSoonLabel('soon', now)).toBeNull();
  });

  it('shows an active key past its expiry as expired, and trusts the server otherwise', () => {
    expect(displayStatus({ status: 'active', expires_at: inMs(-1) }, now)).toBe('expired');
    expect(displayStatus({ status: 'active', expires_at: inMs(DAY) }, now)).toBe('active');
    expect(displayStatus({ status: 'active', expires_at: null }, now)).toBe('active');
    expect(displayStatus({ status: 'revoked', expires_at: inMs(-1) }, now)).toBe('revoked');
  });

  it('knows while a previous secret is still accepted', () => {
    expect(previousSecretAccepted(null, now)).toBe(false);
    expect(previousSecretAccepted(inMs(HOUR), now)).toBe(true);
    expect(previousSecretAccepted(inMs(0), now)).toBe(false);
  });

  it('links only plain http(s) URLs from a report, normalized, and nothing that hides where it goes', () => {
    expect(safeHttpUrl('https://github.com/acme/app/blob/main/.env')).toBe('https://github.com/acme/app/blob/main/.env');
    expect(safeHttpUrl('  http://EXAMPLE.com ')).toBe('http://example.com/');
    expect(safeHttpUrl('javascript:alert(1)')).toBeNull();
    expect(safeHttpUrl('JaVaScRiPt:alert(1)')).toBeNull();
    expect(safeHttpUrl('java\nscript:alert(1)')).toBeNull();
    expect(safeHttpUrl('data:text/html,<script>alert(1)</script>')).toBeNull();
    expect(safeHttpUrl('//evil.example/x')).toBeNull();
    expect(safeHttpUrl('/relative/path')).toBeNull();
    expect(safeHttpUrl('https://github.com@evil.example/')).toBeNull();
    expect(safeHttpUrl('https://user:pass@github.com/')).toBeNull();
    expect(safeHttpUrl('not a url')).toBeNull();
    expect(safeHttpUrl('')).toBeNull();
    expect(safeHttpUrl(null)).toBeNull();
  });
});

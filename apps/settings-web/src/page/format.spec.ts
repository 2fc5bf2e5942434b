import { formatDateTime, resourceTitle, scopeDescription, statusLabel } from './format';

describe('format', () => {
  it('formats an RFC 3339 time in the given locale and zone, and leaves garbage as it is', () => {
    expect(formatDateTime('2025-01-31T09:05:00.000Z', 'en-GB', 'UTC')).toBe('31 Jan 2025, 09:05');
    expect(formatDateTime('not a date', 'en-GB', 'UTC')).toBe('not a date');
  });

  it('describes scopes in words (write means create, contract section 5)', () => {
    expect(scopeDescription('read:invoices')).toBe('List and view invoices');
    expect(scopeDescription('write:clients')).toBe('Create clients');
    expect(scopeDescription('admin:everything')).toBe('admin:everything');
  });

  it('titles resources and statuses', () => {
    expect(resourceTitle('invoices')).toBe('Invoices');
    expect(statusLabel('active')).toBe('Active');
    expect(statusLabel('revoked')).toBe('Revoked');
    expect(statusLabel('suspended')).toBe('suspended');
  });
});

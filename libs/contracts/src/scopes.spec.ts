import { RESOURCES } from './manifest';
import { ALL_SCOPES, formatScopes, isScope, splitScopeString } from './scopes';

describe('scopes', () => {
  it('has a read and a write scope for each of the five resources and for webhook endpoints', () => {
    expect(ALL_SCOPES).toHaveLength(RESOURCES.length * 2 + 2);
    expect(ALL_SCOPES.slice(-2)).toEqual(['read:webhook_endpoints', 'write:webhook_endpoints']);
    expect(ALL_SCOPES).toContain('read:invoices');
    expect(ALL_SCOPES).toContain('write:expenses');
  });

  it('recognises only contract scopes', () => {
    expect(isScope('read:clients')).toBe(true);
    expect(isScope('delete:clients')).toBe(false);
    expect(isScope('read:Clients')).toBe(false);
  });

  it('splits an RFC 6749 scope string and rejects double spaces', () => {
    expect(splitScopeString('read:invoices read:clients')).toEqual(['read:invoices', 'read:clients']);
    expect(splitScopeString('read:invoices  read:clients')).toBeNull();
    expect(splitScopeString('read:"x"')).toBeNull();
  });

  it('formats scopes canonically: unique, grouped by resource, single spaces', () => {
    expect(formatScopes(['write:invoices', 'read:clients', 'read:invoices', 'read:invoices'])).toBe(
      'read:invoices write:invoices read:clients',
    );
  });
});

import {
  actorLabel,
  AUDIT_EVENT_TYPES,
  auditEventsQuery,
  eventSummary,
  filtersFromSearch,
  filtersSearch,
  keyOptionLabel,
  summaryText,
  typeOptionLabel,
} from './audit-events';

const summary = (type: string, data: Record<string, unknown>) => summaryText(eventSummary({ type, data }), (iso) => `<${iso}>`);

describe('audit log: filters and queries', () => {
  it('reads the filters from the page URL, ignoring blanks and other parameters', () => {
    expect(filtersFromSearch('')).toEqual({ type: null, apiKeyId: null });
    expect(filtersFromSearch('?type=api_key.rolled&api_key_id=key_123&utm=x')).toEqual({ type: 'api_key.rolled', apiKeyId: 'key_123' });
    expect(filtersFromSearch('?type=&api_key_id=%20')).toEqual({ type: null, apiKeyId: null });
    // Taken as sent: the API refuses what it does not know, and the page shows that beside the filter.
    expect(filtersFromSearch('?type=no.such')).toEqual({ type: 'no.such', apiKeyId: null });
  });

  it('writes the filters into the page URL, and back again', () => {
    expect(filtersSearch({ type: null, apiKeyId: null })).toBe('');
    expect(filtersSearch({ type: 'api_key.created', apiKeyId: null })).toBe('?type=api_key.created');
    expect(filtersSearch({ type: null, apiKeyId: 'key_1' })).toBe('?api_key_id=key_1');
    const both = { type: 'api_key.rolled', apiKeyId: 'key_1' };
    expect(filtersFromSearch(filtersSearch(both))).toEqual(both);
  });

  it('builds the API query: page size, filters, the cursor of "Load more", all encoded', () => {
    expect(auditEventsQuery({ type: null, apiKeyId: null })).toBe('?limit=50');
    expect(auditEventsQuery({ type: 'api_key.rolled', apiKeyId: 'key_1' }, { startingAfter: 'evt_9', limit: 10 })).toBe(
      '?limit=10&type=api_key.rolled&api_key_id=key_1&starting_after=evt_9',
    );
    expect(auditEventsQuery({ type: 'a&b=c', apiKeyId: null }, { startingAfter: null })).toBe('?limit=50&type=a%26b%3Dc');
  });
});

describe('audit log: summaries', () => {
  it('describes key events', () => {
    expect(summary('api_key.created', { name: 'ERP', scopes: ['read:invoices'], expires_at: null, allowed_ips: [] })).toBe('Key “ERP” created with read:invoices');
    expect(
      summary('api_key.created', {
        name: 'ERP',
        scopes: ['read:invoices', 'write:invoices'],
        expires_at: '2026-01-01T00:00:00.000Z',
        allowed_ips: ['203.0.113.0/24'],
      }),
    ).toBe('Key “ERP” created with read:invoices, write:invoices; expires <2026-01-01T00:00:00.000Z>; allowed IPs 203.0.113.0/24');
    expect(summary('api_key.rolled', { previous_secret_expires_at: '2025-03-10T13:00:00.000Z', end_sessions: false })).toBe(
      'Secret rolled; previous secret works until <2025-03-10T13:00:00.000Z>',
    );
    expect(summary('api_key.rolled', { previous_secret_expires_at: null, end_sessions: true })).toBe(
      'Secret rolled; previous secret stopped working at once; all sessions ended',
    );
    expect(summary('api_key.allowed_ips_changed', { allowed_ips: ['203.0.113.0/24'], previous_allowed_ips: [], version: 1 })).toBe(
      'Allowed IPs changed to 203.0.113.0/24 (was any address)',
    );
    expect(summary('api_key.allowed_ips_changed', { allowed_ips: [], previous_allowed_ips: ['192.0.2.1', '192.0.2.2'], version: 2 })).toBe(
      'Allowed IPs changed to any address (was 192.0.2.1, 192.0.2.2)',
    );
    expect(summary('api_key.revoked', { sessions_ended: 2 })).toBe('Revoked; 2 sessions ended');
    expect(summary('api_key.revoked', { sessions_ended: 1 })).toBe('Revoked; 1 session ended');
    expect(summary('api_key.revoked', { sessions_ended: 0 })).toBe('Revoked');
    expect(summary('api_key.expired', { expires_at: '2025-03-10T12:00:00.000Z' })).toBe('Expired at <2025-03-10T12:00:00.000Z>');
    expect(summary('api_key.auth_failures_alert', { failures_across_addresses: 20 })).toBe('Alert: 20 failed authentications with this key across addresses');
  });

  it('keeps a reported URL as its own part, to be linked only when it is safe', () => {
    const parts = eventSummary({ type: 'api_key.exposed', data: { sessions_ended: 3, url: 'https://github.com/o/r/blob/x/.env', source: 'commit' } });
    expect(parts).toContainEqual({ url: 'https://github.com/o/r/blob/x/.env' });
    expect(summaryText(parts)).toBe('Exposed: reported at https://github.com/o/r/blob/x/.env (commit); key revoked, 3 sessions ended');
    expect(summary('api_key.exposed', { sessions_ended: 0, url: '', source: '' })).toBe('Exposed: reported in public; key revoked');
  });

  it('describes sessions and account events', () => {
    expect(summary('refresh_token.reuse_detected', { sessions_ended: 3, session_ids: ['ses_1', 'ses_2', 'ses_3'] })).toBe('Reused refresh token: 3 sessions ended');
    expect(summary('account.signed_up', { email: 'a@example.com' })).toBe('Account created by a@example.com');
    expect(summary('account.logged_in', {})).toBe('Logged in');
    expect(summary('account.login_failed', {})).toBe('Log-in failed');
    expect(summary('account.login_failures_alert', { failures_across_addresses: 50, window_seconds: 900 })).toBe('Alert: 50 failed log-ins across addresses');
    expect(summary('account.logged_out', {})).toBe('Logged out');
  });

  it("describes a window's failures in one line, and what the ceiling held back", () => {
    const span = { window_started_at: '2026-11-24T10:00:00.000Z', window_ended_at: '2026-11-24T11:00:00.000Z' };
    expect(
      summary('account.login_failures_summary', { user_id: 'usr_1', failures: 40, address_blocks: 39, sample_addresses: ['2001:db8:0:1::/64', '198.51.100.7'], ...span }),
    ).toBe('40 failed log-ins from about 39 address blocks between <2026-11-24T10:00:00.000Z> and <2026-11-24T11:00:00.000Z>; for example 2001:db8:0:1::/64, 198.51.100.7');
    expect(summary('api_key.auth_failures_summary', { failures: 1, address_blocks: 1, sample_addresses: [], ...span })).toBe(
      '1 failed authentication with this key from about 1 address block between <2026-11-24T10:00:00.000Z> and <2026-11-24T11:00:00.000Z>',
    );
    expect(summary('api_key.auth_failures_summary', {})).toBe('Many failed authentications with this key');
    expect(summary('audit.failure_records_suppressed', { records_suppressed: 3, ceiling: 20, user_ids: ['usr_1'], api_key_ids: ['key_1', 'key_2'], ...span })).toBe(
      '3 more failure records held back (at most 20 a window) between <2026-11-24T10:00:00.000Z> and <2026-11-24T11:00:00.000Z>; for usr_1, key_1, key_2',
    );
  });

  it('describes a webhook endpoint the platform disabled, its URL as text', () => {
    const data = { endpoint_id: 'wep_1', url: 'https://erp.example.com/hooks', failing_since: '2026-11-19T09:58:12.345Z', reason: 'failing' };
    expect(summary('webhook_endpoint.disabled', data)).toBe('Webhook endpoint wep_1 (https://erp.example.com/hooks) disabled; every delivery failed since <2026-11-19T09:58:12.345Z>');
    expect(eventSummary({ type: 'webhook_endpoint.disabled', data }).some((part) => typeof part === 'object' && 'url' in part)).toBe(false);
    expect(summary('webhook_endpoint.disabled', { reason: 'failing' })).toBe('Webhook endpoint disabled; its deliveries kept failing');
    expect(summary('webhook_endpoint.disabled', { endpoint_id: 7, url: null })).toBe('Webhook endpoint disabled');
    expect(typeOptionLabel('webhook_endpoint.disabled')).toBe('Webhook endpoint disabled (webhook_endpoint.disabled)');
  });

  it('shows an unknown type verbatim, and leaves out data that is missing or of another type', () => {
    expect(summary('api_key.stolen', { name: 'x' })).toBe('api_key.stolen');
    expect(summary('api_key.renamed', { name: 'x', previous_name: 'y' })).toBe('Key renamed to “x” (was “y”)');
    expect(summary('api_key.created', {})).toBe('Key created');
    expect(summary('api_key.created', { name: 42, scopes: 'read:invoices', expires_at: 7 })).toBe('Key created');
    expect(summary('api_key.rolled', { previous_secret_expires_at: 3 })).toBe('Secret rolled; previous secret stopped working at once');
    expect(summary('api_key.allowed_ips_changed', {})).toBe('Allowed IPs changed');
    expect(summary('api_key.revoked', { sessions_ended: '2' })).toBe('Revoked');
    expect(summary('refresh_token.reuse_detected', {})).toBe('Reused refresh token: 0 sessions ended');
    expect(summary('account.signed_up', {})).toBe('Account created');
    expect(summaryText(eventSummary({ type: 'api_key.revoked', data: null as never }))).toBe('Revoked');
  });

  it('has a summary, other than the bare type, for every type the API filters by', () => {
    for (const { type } of AUDIT_EVENT_TYPES) expect(summary(type, {})).not.toBe(type);
  });
});

describe('audit log: actors and labels', () => {
  it('names the actor: you, another user, an API key, the system', () => {
    expect(actorLabel({ kind: 'user', id: 'usr_1' }, 'usr_1')).toBe('You');
    expect(actorLabel({ kind: 'user', id: 'usr_2' }, 'usr_1')).toBe('User usr_2');
    expect(actorLabel({ kind: 'user', id: null }, null)).toBe('Someone');
    expect(actorLabel({ kind: 'api_key', id: 'key_1' }, 'usr_1')).toBe('API key key_1');
    expect(actorLabel({ kind: 'api_key', id: null }, 'usr_1')).toBe('An API key');
    expect(actorLabel({ kind: 'system', id: null }, 'usr_1')).toBe('System');
    expect(actorLabel({ kind: 'robot', id: 'r_1' }, 'usr_1')).toBe('robot r_1');
    expect(actorLabel(null, 'usr_1')).toBe('Unknown');
  });

  it('labels the type options, and the key options with the status of a key that no longer works', () => {
    expect(typeOptionLabel('api_key.rolled')).toBe('Secret rolled (api_key.rolled)');
    expect(typeOptionLabel('api_key.renamed')).toBe('Key renamed (api_key.renamed)');
    expect(typeOptionLabel('api_key.stolen')).toBe('api_key.stolen');
    const now = Date.parse('2025-03-10T12:00:00.000Z');
    expect(keyOptionLabel({ id: 'key_1', name: 'ERP', status: 'active', expires_at: null }, now)).toBe('ERP (key_1)');
    expect(keyOptionLabel({ id: 'key_1', name: 'ERP', status: 'revoked', expires_at: null }, now)).toBe('ERP, Revoked (key_1)');
    expect(keyOptionLabel({ id: 'key_1', name: 'ERP', status: 'active', expires_at: '2025-03-10T11:00:00.000Z' }, now)).toBe('ERP, Expired (key_1)');
  });
});

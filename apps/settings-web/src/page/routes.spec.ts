import { needsSession, PATHS, viewFor } from './routes';

describe('routes', () => {
  it('maps every path to its view, with or without a trailing slash', () => {
    expect(viewFor('/settings')).toBe('account');
    expect(viewFor('/settings/')).toBe('account');
    expect(viewFor('/settings/api/')).toBe('api');
    expect(viewFor(PATHS.create)).toBe('create');
    expect(viewFor(PATHS.created)).toBe('created');
    expect(viewFor('/settings/audit')).toBe('audit');
    expect(viewFor('/settings/audit/')).toBe('audit');
    expect(viewFor('/settings/login')).toBe('login');
    expect(viewFor('/settings/nope')).toBe('not-found');
  });

  it('requires a session for the settings views only', () => {
    expect(['account', 'api', 'create', 'created', 'audit'].every((v) => needsSession(v as never))).toBe(true);
    expect(needsSession('login')).toBe(false);
    expect(needsSession('signup')).toBe(false);
    expect(needsSession('not-found')).toBe(false);
  });
});

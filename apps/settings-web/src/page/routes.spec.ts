import { needsSession, PATHS, viewFor } from './routes';

describe('routes', () => {
  it('maps every path to its view, with or without a trailing slash', () => {
    expect(viewFor('/settings')).toBe('account');
    expect(viewFor('/settings/')).toBe('account');
    expect(viewFor('/settings/api/')).toBe('api');
    expect(viewFor('/settings/organization')).toBe('organization');
    expect(viewFor('/settings/organization/')).toBe('organization');
    expect(viewFor(PATHS.create)).toBe('create');
    expect(viewFor(PATHS.created)).toBe('created');
    expect(viewFor('/settings/audit')).toBe('audit');
    expect(viewFor('/settings/audit/')).toBe('audit');
    expect(viewFor('/settings/webhooks')).toBe('webhooks');
    expect(viewFor('/settings/webhooks/')).toBe('webhooks');
    expect(viewFor(PATHS['webhook-create'])).toBe('webhook-create');
    expect(viewFor(PATHS['webhook-created'])).toBe('webhook-created');
    expect(viewFor('/settings/webhooks/attempts')).toBe('webhook-attempts');
    expect(viewFor('/settings/webhooks/wep_0')).toBe('not-found');
    expect(viewFor('/settings/login')).toBe('login');
    expect(viewFor('/settings/nope')).toBe('not-found');
  });

  it('requires a session for the settings views only', () => {
    const settings = ['account', 'organization', 'api', 'create', 'created', 'audit', 'webhooks', 'webhook-create', 'webhook-created', 'webhook-attempts'];
    expect(settings.every((v) => needsSession(v as never))).toBe(true);
    expect(needsSession('login')).toBe(false);
    expect(needsSession('signup')).toBe(false);
    expect(needsSession('not-found')).toBe(false);
  });
});

import { AppContext, AppState, errorMessage } from './app-context.js';
import { setupApiKeysView } from './api-keys.view.js';
import { setupAuditLogView } from './audit-log.view.js';
import { setupAuthForms } from './auth.view.js';
import { setupCreateKeyView } from './create-key.view.js';
import { announce, byId, clearAnnouncement } from './dom.js';
import { formatDateTime } from './format.js';
import { setupOrganizationView } from './organization.view.js';
import { needsSession, PATHS, TITLES, View, viewFor } from './routes.js';
import { refreshCsrfToken, Session, settingsApi } from './settings-api.client.js';
import { setupWebhookAttemptsView } from './webhook-attempts.view.js';
import { setupWebhookCreateView } from './webhook-create.view.js';
import { setupWebhooksView } from './webhooks.view.js';

/**
 * The shell: a small router over history.pushState, the signed-in header, and the view switch.
 * Each navigation shows one view, sets the document title and moves focus to the view's heading,
 * so keyboard and screen-reader users land where sighted users look.
 */

const state: AppState = { session: null, createdKey: null, createdWebhook: null, returnTo: null };
let current: View | null = null;

/** Top-level containers; the settings views share the settings layout with its navigation. */
const SECTION_OF: Record<View, string> = {
  login: 'view-login',
  signup: 'view-signup',
  account: 'view-settings',
  organization: 'view-settings',
  api: 'view-settings',
  create: 'view-settings',
  created: 'view-settings',
  audit: 'view-settings',
  webhooks: 'view-settings',
  'webhook-create': 'view-settings',
  'webhook-created': 'view-settings',
  'webhook-attempts': 'view-settings',
  'not-found': 'view-not-found',
};
const PANEL_OF: Partial<Record<View, string>> = {
  account: 'panel-account',
  organization: 'panel-organization',
  api: 'panel-api',
  create: 'panel-create',
  created: 'panel-created',
  audit: 'panel-audit',
  webhooks: 'panel-webhooks',
  'webhook-create': 'panel-webhook-create',
  'webhook-created': 'panel-webhook-created',
  'webhook-attempts': 'panel-webhook-attempts',
};
/** The settings navigation entry that is current for a view (Create key lives under API). */
const NAV_OF: Partial<Record<View, string>> = {
  account: 'account',
  organization: 'organization',
  api: 'api',
  create: 'api',
  created: 'api',
  audit: 'audit',
  webhooks: 'webhooks',
  'webhook-create': 'webhooks',
  'webhook-created': 'webhooks',
  'webhook-attempts': 'webhooks',
};

const ctx: AppContext = {
  state,
  navigate,
  async signedIn(session, message) {
    state.session = session;
    await refreshCsrfToken();
    const target = state.returnTo ?? PATHS.account;
    state.returnTo = null;
    navigate(target);
    announce(message, 'success');
  },
  sessionLost() {
    state.session = null;
    state.createdKey = null;
    state.createdWebhook = null;
    state.returnTo = current && needsSession(current) ? location.pathname + location.search : null;
    navigate(PATHS.login, { replace: true });
    announce('Your session has ended. Log in again to continue.', 'error');
  },
};

const auth = setupAuthForms(ctx);
const createKey = setupCreateKeyView(ctx);
const apiKeys = setupApiKeysView(ctx);
const auditLog = setupAuditLogView(ctx);
const organization = setupOrganizationView(ctx);
const webhooks = setupWebhooksView(ctx);
const webhookCreate = setupWebhookCreateView(ctx);
const webhookAttempts = setupWebhookAttemptsView(ctx);

/** `focus: false` keeps focus where it is (the audit log's filters change the query, not the view). */
function navigate(path: string, options: { replace?: boolean; focus?: boolean } = {}): void {
  if (options.replace) history.replaceState(null, '', path);
  else history.pushState(null, '', path);
  void render({ focus: options.focus ?? true });
}

/** Same-origin links marked `data-link` navigate in place; modified clicks open tabs as usual. */
document.addEventListener('click', (event) => {
  if (event.defaultPrevented || event.button !== 0 || event.metaKey || event.ctrlKey || event.shiftKey || event.altKey) return;
  const link = (event.target as Element | null)?.closest?.('a[data-link]');
  if (!(link instanceof HTMLAnchorElement)) return;
  event.preventDefault();
  // The query too: a link may carry a view's state (the audit log's filters).
  navigate(link.pathname + link.search);
});
window.addEventListener('popstate', () => void render({ focus: true }));

byId<HTMLButtonElement>('logout-button').addEventListener('click', () => void logout());

async function logout(): Promise<void> {
  const button = byId<HTMLButtonElement>('logout-button');
  if (button.getAttribute('aria-disabled') === 'true') return;
  button.setAttribute('aria-disabled', 'true');
  try {
    await settingsApi.logout();
    state.session = null;
    state.createdKey = null;
    state.createdWebhook = null;
    await refreshCsrfToken();
    navigate(PATHS.login);
    announce('You have logged out.', 'success');
  } catch (error) {
    announce(`You are still logged in: ${errorMessage(error)}`, 'error');
  } finally {
    button.removeAttribute('aria-disabled');
  }
}

function showSession(session: Session | null): void {
  byId('account-bar').hidden = session === null;
  byId('account-org').textContent = session?.organization.name ?? '';
  byId('account-email').textContent = session?.user.email ?? '';
  byId('account-details-org').textContent = session?.organization.name ?? '';
  byId('account-details-email').textContent = session?.user.email ?? '';
  byId('account-details-since').textContent = session ? formatDateTime(session.user.created_at) : '';
}

/** Redirects a view that does not fit the session state; returns the path to go to, or null. */
function redirectFor(view: View): string | null {
  if (needsSession(view) && !state.session) {
    state.returnTo = location.pathname + location.search;
    return PATHS.login;
  }
  if ((view === 'login' || view === 'signup') && state.session) return PATHS.account;
  // The secret exists only in memory right after creation; a reload or a bookmark finds the list.
  if (view === 'created' && !state.createdKey) return PATHS.api;
  if (view === 'webhook-created' && !state.createdWebhook) return PATHS.webhooks;
  return null;
}

async function render(options: { focus: boolean }): Promise<void> {
  let view = viewFor(location.pathname);
  const redirect = redirectFor(view);
  if (redirect) {
    history.replaceState(null, '', redirect);
    view = viewFor(redirect);
  }
  const previous = current;
  if (previous !== view) clearAnnouncement();
  if (previous === 'created' && view !== 'created') createKey.leaveCreated();
  if (previous === 'webhook-created' && view !== 'webhook-created') webhookCreate.leaveCreated();
  current = view;

  byId('view-loading').hidden = true;
  for (const id of new Set(Object.values(SECTION_OF))) byId(id).hidden = id !== SECTION_OF[view];
  for (const id of Object.values(PANEL_OF)) byId(id).hidden = id !== PANEL_OF[view];
  for (const link of document.querySelectorAll<HTMLAnchorElement>('[data-nav]')) {
    if (link.dataset.nav === NAV_OF[view]) link.setAttribute('aria-current', 'page');
    else link.removeAttribute('aria-current');
  }
  showSession(state.session);
  document.title = `${TITLES[view]} · Settings · Invoicing`;

  if (view === 'login' || view === 'signup') auth.reset(view);
  if (view === 'created') createKey.enterCreated();
  if (view === 'webhook-created') webhookCreate.enterCreated();
  if (options.focus) focusHeading(view);
  // Data loads after the focus move so the heading is announced first, the content as it arrives.
  if (view === 'organization') await organization.load();
  if (view === 'api') await apiKeys.load();
  if (view === 'create') await createKey.enterCreate();
  if (view === 'audit') await auditLog.load();
  if (view === 'webhooks') await webhooks.load();
  if (view === 'webhook-create') await webhookCreate.enterCreate();
  if (view === 'webhook-attempts') await webhookAttempts.load();
}

function focusHeading(view: View): void {
  const container = byId(PANEL_OF[view] ?? SECTION_OF[view]);
  container.querySelector<HTMLElement>('h1')?.focus();
}

async function boot(): Promise<void> {
  const [me, csrf] = await Promise.allSettled([settingsApi.me(), refreshCsrfToken()]);
  if (me.status === 'fulfilled') state.session = me.value;
  const failure = [me, csrf].find((r): r is PromiseRejectedResult => r.status === 'rejected' && !isSignedOut(r.reason));
  if (failure) {
    // Neither "signed in" nor "signed out" is known: say so instead of showing a misleading form.
    const loading = byId('view-loading');
    const retry = document.createElement('button');
    retry.type = 'button';
    retry.className = 'button';
    retry.textContent = 'Try again';
    retry.addEventListener('click', () => location.reload());
    loading.replaceChildren(`The settings could not be loaded. ${errorMessage(failure.reason)} `, retry);
    loading.setAttribute('role', 'alert');
    return;
  }
  await render({ focus: false });
}

function isSignedOut(reason: unknown): boolean {
  return typeof reason === 'object' && reason !== null && (reason as { status?: unknown }).status === 401;
}

void boot();

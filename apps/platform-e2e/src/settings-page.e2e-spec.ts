/// <reference lib="dom" />
import Ajv2020 from 'ajv/dist/2020';
import addFormats from 'ajv-formats';
import { join } from 'node:path';
import { BrowserContext, Locator, Page } from 'playwright-core';
import { http, TokenPair } from './support/api';
import { Browser, launchChromium, SCREENSHOTS } from './support/chromium';
import { Platform, STACK, startPlatform } from './support/platform';
import { ALL_SERVICES, platformPorts } from './support/ports';
import { sleep } from './support/processes';

/**
 * The settings page in a real browser (Debian's Chromium through playwright-core), against the real
 * auth and invoice services, with the gateway in front as in every deployment: one origin serves
 * /settings (settings-web) and /api/v1/... (the services).
 */


/** The services this spec starts (behind the gateway). */
const STARTED = ['auth-service', 'invoice-service', 'settings-web'] as const;
/**
 * 4111-4119 belong to this spec (the token-lifecycle spec uses 4101-4103): the gateway, the services
 * it starts, then the other services in SERVICES order. Those are not started here: the gateway
 * answers 502 for them, which this spec never asks for.
 */
const PORTS = platformPorts({
  gateway: 4111,
  first: 4112,
  services: [...STARTED, ...ALL_SERVICES.filter((s) => !(STARTED as readonly string[]).includes(s))],
});
const BASE = STACK.baseUrl ?? `http://127.0.0.1:${PORTS.gateway}`;

let platform: Platform;
let context: BrowserContext;
let page: Page;
let browser: Browser;
const pageErrors: string[] = [];

beforeAll(async () => {
  platform = await startPlatform({ label: 'settings-e2e', ports: PORTS, start: [...STARTED, 'gateway'] });

  browser = await launchChromium('settings-e2e', { width: 1280, height: 900 });
  context = browser.context;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  page = browser.page;
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    // A CSP or Trusted Types violation means the page does something its own policy forbids.
    if (/Content Security Policy|TrustedHTML|Trusted Type/i.test(message.text())) pageErrors.push(message.text());
  });
}, 180000);

afterAll(async () => {
  await browser?.close();
  await platform?.stop();
});

afterEach(() => {
  // Emptied each time so that one test's page error is reported by that test alone.
  expect(pageErrors.splice(0)).toEqual([]);
});

const heading = (name: string): Locator => page.getByRole('heading', { name, exact: true });
const focusedId = (): Promise<string> => page.evaluate(() => document.activeElement?.id ?? '');

async function waitForFocus(id: string): Promise<void> {
  await page.waitForFunction((expected) => document.activeElement?.id === expected, id, { timeout: 10000 });
}

/**
 * Presses Tab until `isFocused` (evaluated in the page) holds; fails after `max` presses. The check is
 * a function handed to Playwright, never a string: the page's CSP forbids eval.
 */
async function tabTo(description: string, isFocused: () => boolean, max = 30): Promise<void> {
  for (let i = 0; i < max; i += 1) {
    await page.keyboard.press('Tab');
    if (await page.evaluate(isFocused)) return;
  }
  throw new Error(`${description} was not reached with ${max} presses of Tab`);
}

/** The page must never scroll sideways (phone width included). */
async function expectNoHorizontalScroll(): Promise<void> {
  const { scrollWidth, clientWidth } = await page.evaluate(() => ({
    scrollWidth: document.documentElement.scrollWidth,
    clientWidth: document.documentElement.clientWidth,
  }));
  expect(scrollWidth).toBeLessThanOrEqual(clientWidth);
}

async function exchange(clientId: string, clientSecret: string) {
  return http('POST', `${BASE}/api/v1/auth/token`, {
    body: { client_id: clientId, client_secret: clientSecret, grant_type: 'client_credentials' },
  });
}

const listInvoices = (token: string) => http('GET', `${BASE}/api/v1/invoices`, { token });

const keyCard = (name: string): Locator => page.locator('.key-card').filter({ has: page.getByRole('heading', { name, exact: true }) });

const password = 'a long enough passphrase';
let accountCounter = 0;
/** The account the browser is signed in with (set by signUp). */
let signedInEmail: string | null = null;

/** Signs up a new organization through the page, starting from wherever the browser is. */
async function signUp(organization: string): Promise<string> {
  const email = `settings-e2e-${Date.now()}-${(accountCounter += 1)}@example.com`;
  await page.goto(`${BASE}/settings/signup`);
  await heading('Create your account').waitFor();
  const signup = page.locator('#view-signup');
  await signup.getByRole('textbox', { name: 'Organization name' }).fill(organization);
  await signup.getByRole('textbox', { name: 'Email' }).fill(email);
  await signup.getByLabel('Password', { exact: true }).fill(password);
  await signup.getByRole('button', { name: 'Sign up' }).click();
  await heading('Account').waitFor();
  signedInEmail = email;
  return email;
}

/** Each test can run alone: it signs up when the browser has no session yet. */
async function ensureSignedIn(): Promise<string> {
  await page.goto(`${BASE}/settings`);
  const landed = page.getByRole('heading', { level: 1 }).filter({ hasText: /^(Account|Log in)$/ });
  await landed.waitFor();
  if (signedInEmail && (await landed.innerText()) === 'Account') return signedInEmail;
  return signUp('Browser Test Ltd');
}

async function createKeyInPage(name: string, scopes: string[]): Promise<void> {
  await page.goto(`${BASE}/settings/api/keys/new`);
  await heading('Create key').waitFor();
  await page.getByRole('textbox', { name: 'Name', exact: true }).fill(name);
  for (const scope of scopes) await page.getByRole('checkbox', { name: scope, exact: true }).check();
  await page.getByRole('button', { name: 'Create key' }).click();
  await heading('Key created').waitFor();
}

describe('the settings page, in a browser, through the gateway', () => {
  it('signs up, creates a key, shows its secret once, and revokes it so that the key and its tokens stop working', async () => {
    // A first visit without a session lands on the log-in form, which links to sign-up.
    await page.goto(`${BASE}/settings`);
    await heading('Log in').waitFor();
    expect(page.url()).toBe(`${BASE}/settings/login`);
    await page.getByRole('link', { name: 'Create an account' }).click();
    await heading('Create your account').waitFor();
    const email = `settings-e2e-${Date.now()}@example.com`;
    const signup = page.locator('#view-signup');
    await signup.getByRole('textbox', { name: 'Organization name' }).fill('Browser Test Ltd');
    await signup.getByRole('textbox', { name: 'Email' }).fill(email);
    await signup.getByLabel('Password', { exact: true }).fill(password);
    await signup.getByRole('button', { name: 'Sign up' }).click();
    await heading('Account').waitFor();
    signedInEmail = email;
    expect(await page.locator('#account-bar').innerText()).toContain(email);
    expect(await page.locator('#account-details-org').innerText()).toBe('Browser Test Ltd');

    // Settings → API → Create key
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'API' }).click();
    await heading('API').waitFor();
    await page.getByRole('link', { name: 'Create key' }).click();
    await heading('Create key').waitFor();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('ERP integration');
    // One checkbox per scope, grouped by resource. The page loads the scopes from the API after the
    // heading shows: wait for them before counting (a busy machine answered after the count once).
    const invoicesGroup = page.getByRole('group', { name: 'Invoices' });
    await invoicesGroup.getByRole('checkbox').first().waitFor();
    expect(await invoicesGroup.getByRole('checkbox').count()).toBe(2);
    expect(await page.getByRole('group', { name: 'Scopes' }).getByRole('checkbox').count()).toBe(12);
    await invoicesGroup.getByRole('checkbox', { name: 'read:invoices' }).check();
    await page.getByRole('button', { name: 'Create key' }).click();

    // The result: Client ID and Secret Key, copy buttons, the warning; focus on the heading.
    await heading('Key created').waitFor();
    await waitForFocus('created-title');
    const clientId = (await page.locator('#created-client-id').textContent()) ?? '';
    const secret = (await page.locator('#created-client-secret').textContent()) ?? '';
    expect(clientId).toMatch(/^ak_live_[0-9A-Za-z]+$/);
    expect(secret).toMatch(/^sk_live_[0-9A-Za-z]+$/);
    expect(await page.locator('#created-warning').innerText()).toMatch(/will not be shown again/i);
    await page.getByRole('button', { name: 'Copy Secret Key' }).click();
    await page.locator('#created-client-secret-copied').getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await page.getByRole('button', { name: 'Copy Client ID' }).click();
    await page.locator('#created-client-id-copied').getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(clientId);
    await page.screenshot({ path: join(SCREENSHOTS, 'create-key-result.png'), fullPage: true });

    // The integration's side: exchange the credentials, list invoices with the token.
    const issued = await exchange(clientId, secret);
    expect(issued.status).toBe(200);
    const tokens = issued.body as unknown as TokenPair;
    expect(tokens.scope).toBe('read:invoices');
    expect((await listInvoices(tokens.access_token)).status).toBe(200);

    // Back to the list: the key with its details, and the secret nowhere.
    await page.getByRole('link', { name: 'Done, back to API keys' }).click();
    await heading('API').waitFor();
    const card = keyCard('ERP integration');
    await card.waitFor();
    const details = await card.innerText();
    expect(details).toContain(clientId);
    expect(details).toContain('read:invoices');
    expect(details).toMatch(/Created\s*\n?.*\d/);
    expect(details).toContain('Active');
    expect(await page.content()).not.toContain(secret);
    const listJson = await page.evaluate(() => fetch('/api/v1/settings/api-keys').then((r) => r.text()));
    expect(listJson).toContain(clientId);
    expect(listJson).not.toContain(secret);
    expect(listJson).not.toContain('client_secret');
    // Back does not bring the result view (or the secret) back: it lands on the list.
    await page.goBack();
    await heading('API').waitFor();
    expect(page.url()).toBe(`${BASE}/settings/api`);
    expect(await page.content()).not.toContain(secret);
    await page.goForward();
    await heading('API').waitFor();

    // "Last used" follows the exchange (the auth service records uses every few seconds).
    const deadline = Date.now() + 15000;
    while ((await keyCard('ERP integration').locator('.key-card__row', { hasText: 'Last used' }).innerText()).includes('Never')) {
      if (Date.now() > deadline) throw new Error('"Last used" still says Never 15 s after the exchange');
      await sleep(1000);
      await page.reload();
      await heading('API').waitFor();
      await keyCard('ERP integration').waitFor();
    }
    expect(await page.content()).not.toContain(secret);
    await page.screenshot({ path: join(SCREENSHOTS, 'key-list.png'), fullPage: true });

    // Revoke in the page, confirmed in the dialog.
    await keyCard('ERP integration').getByRole('button', { name: /^Revoke/ }).click();
    const dialog = page.getByRole('dialog', { name: 'Revoke “ERP integration”?' });
    await dialog.waitFor();
    expect(await dialog.innerText()).toContain(clientId);
    await dialog.getByRole('button', { name: 'Revoke key' }).click();
    await dialog.waitFor({ state: 'hidden' });
    await page.getByRole('status').getByText('Key “ERP integration” revoked.', { exact: false }).waitFor();
    await keyCard('ERP integration').getByText('Revoked', { exact: true }).waitFor();
    expect(await keyCard('ERP integration').getByRole('button', { name: /^Revoke/ }).count()).toBe(0);

    // The key no longer authenticates; its access token is refused by the invoice service.
    const refused = await exchange(clientId, secret);
    expect(refused.status).toBe(401);
    expect(refused.body.error).toBe('invalid_client');
    const revokedAt = Date.now();
    for (;;) {
      const status = (await listInvoices(tokens.access_token)).status;
      if (status === 401) break;
      expect(status).toBe(200);
      if (Date.now() - revokedAt > 5000) throw new Error('the revoked key\'s access token is still accepted after 5 s');
      await sleep(50);
    }
    console.log(`e2e: the invoice service refused the revoked key's token ${Date.now() - revokedAt} ms after the exchange was refused`);
  });

  it('works with the keyboard alone: focus order, visible focus, field errors, copy, and a dialog that Escape closes', async () => {
    await ensureSignedIn();
    await page.goto(`${BASE}/settings/api`);
    await heading('API').waitFor();

    await tabTo('the Create key link', () => document.activeElement?.tagName === 'A' && document.activeElement.textContent?.trim() === 'Create key');
    const outline = await page.evaluate(() => {
      const style = getComputedStyle(document.activeElement as Element);
      return { style: style.outlineStyle, width: parseFloat(style.outlineWidth) };
    });
    expect(outline.style).not.toBe('none');
    expect(outline.width).toBeGreaterThanOrEqual(2);
    await page.keyboard.press('Enter');
    await waitForFocus('create-title');
    await page.locator('#scope-groups input[type="checkbox"]').first().waitFor();

    // Submitting the empty form: messages next to the fields, wired for screen readers, focus on the first.
    await page.keyboard.press('Tab');
    expect(await focusedId()).toBe('create-name');
    await page.keyboard.press('Enter');
    await page.locator('#create-name-error').getByText('Enter a name for the key.').waitFor();
    expect(await page.locator('#create-scopes-error').innerText()).toBe('Choose at least one scope.');
    const name = page.locator('#create-name');
    expect(await name.getAttribute('aria-invalid')).toBe('true');
    expect((await name.getAttribute('aria-describedby'))?.split(' ')).toContain('create-name-error');
    expect((await page.locator('#create-scopes').getAttribute('aria-describedby'))?.split(' ')).toContain('create-scopes-error');
    expect(await focusedId()).toBe('create-name');

    await page.keyboard.type('Keyboard key');
    await page.keyboard.press('Tab');
    expect(await focusedId()).toBe('scope-read-invoices');
    await page.keyboard.press('Space');
    expect(await page.locator('#scope-read-invoices').isChecked()).toBe(true);
    await tabTo('the Create key button', () => document.activeElement instanceof HTMLButtonElement && document.activeElement.type === 'submit', 16);
    await page.keyboard.press('Enter');
    await waitForFocus('created-title');

    // Copy the secret with the keyboard.
    await tabTo('the Copy Secret Key button', () => document.activeElement?.getAttribute('data-copy') === 'created-client-secret', 5);
    const secret = (await page.locator('#created-client-secret').textContent()) ?? '';
    await page.keyboard.press('Enter');
    await page.locator('#created-client-secret-copied').getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await tabTo('the Done link', () => document.activeElement?.id === 'created-done', 3);
    await page.keyboard.press('Enter');
    await waitForFocus('api-title');

    // The revoke dialog: focus starts on Cancel, Escape closes it and focus returns to the button.
    await tabTo('the Revoke button of the new key', () => (document.activeElement?.textContent ?? '').includes('Revoke key “Keyboard key”'));
    await page.keyboard.press('Enter');
    const dialog = page.getByRole('dialog', { name: 'Revoke “Keyboard key”?' });
    await dialog.waitFor();
    expect(await focusedId()).toBe('revoke-cancel');
    await page.keyboard.press('Escape');
    await dialog.waitFor({ state: 'hidden' });
    expect(await page.evaluate(() => (document.activeElement?.textContent ?? '').includes('Revoke key “Keyboard key”'))).toBe(true);
    expect(await keyCard('Keyboard key').getByText('Active', { exact: true }).count()).toBe(1);

    await page.keyboard.press('Enter');
    await dialog.waitFor();
    await page.keyboard.press('Tab');
    expect(await focusedId()).toBe('revoke-confirm');
    await page.keyboard.press('Enter');
    await dialog.waitFor({ state: 'hidden' });
    await keyCard('Keyboard key').getByText('Revoked', { exact: true }).waitFor();
    // Focus lands on the revoked key's name, not on the top of the page.
    expect(await page.evaluate(() => document.activeElement?.classList.contains('key-card__name'))).toBe(true);
  });

  it('shows the server\'s errors where they belong: wrong password, a common password, an email already taken', async () => {
    const email = await ensureSignedIn();
    await page.getByRole('button', { name: 'Log out' }).click();
    await heading('Log in').waitFor();
    await page.getByRole('status').getByText('You have logged out.').waitFor();

    const login = page.locator('#view-login');
    await login.getByRole('textbox', { name: 'Email' }).fill(email);
    await login.getByLabel('Password', { exact: true }).fill('not the password at all');
    await login.getByRole('button', { name: 'Log in' }).click();
    await login.locator('.form-error').getByText('Email or password is incorrect.').waitFor();
    expect(await login.getByRole('alert').innerText()).toContain('Email or password is incorrect.');

    await page.getByRole('link', { name: 'Create an account' }).click();
    const signup = page.locator('#view-signup');
    await signup.getByRole('textbox', { name: 'Organization name' }).fill('Someone Else Ltd');
    await signup.getByRole('textbox', { name: 'Email' }).fill(email);
    await signup.getByLabel('Password', { exact: true }).fill('short');
    await signup.getByRole('button', { name: 'Sign up' }).click();
    // Caught in the page first (the server's rule is the same)...
    await signup.locator('#signup-password-error').getByText('Use 12 to 128 characters.').waitFor();
    expect(await signup.getByLabel('Password', { exact: true }).getAttribute('aria-invalid')).toBe('true');
    // ...then the server's password policy (422 too_common: long enough, but on the breached list)...
    await signup.getByLabel('Password', { exact: true }).fill('password1234');
    await signup.getByRole('button', { name: 'Sign up' }).click();
    await signup.locator('#signup-password-error').getByText('is too common', { exact: false }).waitFor();
    // ...then the server's 409, with its field error next to the email.
    await signup.getByLabel('Password', { exact: true }).fill(password);
    await signup.getByRole('button', { name: 'Sign up' }).click();
    await signup.locator('.form-error').getByText('An account with this email already exists.', { exact: false }).waitFor();
    expect(await signup.locator('#signup-email-error').innerText()).toBe('Email is already registered.');
    const emailInput = signup.getByRole('textbox', { name: 'Email' });
    expect(await emailInput.getAttribute('aria-invalid')).toBe('true');
    expect(await emailInput.getAttribute('aria-describedby')).toContain('signup-email-error');

    // The right password gets back in, where the person was headed.
    await signup.locator('.form-error').getByRole('link', { name: 'Log in instead.' }).click();
    await login.getByRole('textbox', { name: 'Email' }).fill(email);
    await login.getByLabel('Password', { exact: true }).fill(password);
    await login.getByRole('button', { name: 'Log in' }).click();
    await heading('Account').waitFor();
  });

  it('fits a 375 px phone screen without sideways scrolling', async () => {
    await ensureSignedIn();
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      await page.goto(`${BASE}/settings`);
      await heading('Account').waitFor();
      await expectNoHorizontalScroll();
      await createKeyInPage('Phone key with a rather long name to see it wrap nicely', ['read:invoices', 'write:invoices', 'read:clients']);
      await expectNoHorizontalScroll();
      await page.screenshot({ path: join(SCREENSHOTS, 'create-key-result-phone.png'), fullPage: true });

      await page.getByRole('link', { name: 'Done, back to API keys' }).click();
      await keyCard('Phone key with a rather long name to see it wrap nicely').waitFor();
      await expectNoHorizontalScroll();
      await page.getByRole('link', { name: 'Create key' }).click();
      await page.getByRole('checkbox', { name: 'read:invoices' }).waitFor();
      await expectNoHorizontalScroll();
      await page.goBack();
      await keyCard('Phone key with a rather long name to see it wrap nicely').waitFor();
      await page.screenshot({ path: join(SCREENSHOTS, 'key-list-phone.png'), fullPage: true });

      await keyCard('Phone key with a rather long name to see it wrap nicely').getByRole('button', { name: /^Revoke/ }).click();
      await page.getByRole('dialog').waitFor();
      await expectNoHorizontalScroll();
      await page.getByRole('dialog').getByRole('button', { name: 'Cancel' }).click();

      await page.getByRole('button', { name: 'Log out' }).click();
      await heading('Log in').waitFor();
      await expectNoHorizontalScroll();
      await page.getByRole('link', { name: 'Create an account' }).click();
      await heading('Create your account').waitFor();
      await expectNoHorizontalScroll();
      signedInEmail = null;
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });

  it('creates a key that expires in 30 days, rolls its secret with an hour of overlap, and limits it to an address block', async () => {
    await ensureSignedIn();
    const DAY_MS = 86_400_000;
    /** A row of a key card by its label (labels are unique within a card; their values are not). */
    const cardRow = (label: string): Locator =>
      keyCard('Rolling key').locator('.key-card__row').filter({ has: page.locator('dt', { hasText: new RegExp(`^${label}$`) }) });

    // Create key with a 30-day expiry.
    await page.goto(`${BASE}/settings/api/keys/new`);
    await heading('Create key').waitFor();
    await page.getByRole('textbox', { name: 'Name', exact: true }).fill('Rolling key');
    await page.getByRole('checkbox', { name: 'read:invoices', exact: true }).check();
    await page.getByRole('group', { name: 'Expires', exact: true }).getByRole('radio', { name: '30 days', exact: true }).check();
    const createdAt = Date.now();
    await page.getByRole('button', { name: 'Create key' }).click();
    await heading('Key created').waitFor();
    const clientId = (await page.locator('#created-client-id').textContent()) ?? '';
    const firstSecret = (await page.locator('#created-client-secret').textContent()) ?? '';
    expect(firstSecret).toMatch(/^sk_live_[0-9A-Za-z]+$/);
    expect(await page.locator('#created-expires').innerText()).not.toBe('Never');

    // The list shows the expiry: the server's time, about 30 days out, as the page formats dates.
    await page.getByRole('link', { name: 'Done, back to API keys' }).click();
    await heading('API').waitFor();
    await keyCard('Rolling key').waitFor();
    const expiresAt = (await cardRow('Expires').locator('time').getAttribute('datetime')) ?? '';
    expect(Math.abs(Date.parse(expiresAt) - (createdAt + 30 * DAY_MS))).toBeLessThan(15 * 60_000);
    const expiryShown = await page.evaluate(
      (iso) => new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeStyle: 'short' }).format(new Date(iso)),
      expiresAt,
    );
    expect(await cardRow('Expires').innerText()).toContain(expiryShown);
    // 30 days away is not "soon": no warning badge.
    expect(await cardRow('Expires').innerText()).not.toContain('Expires in');
    expect(await cardRow('Allowed IPs').innerText()).toContain('Any address');

    // Roll the secret, keeping the current one for an hour.
    await keyCard('Rolling key').getByRole('button', { name: /^Roll secret/ }).click();
    const rollDialog = page.getByRole('dialog', { name: 'Roll the secret of “Rolling key”' });
    await rollDialog.waitFor();
    expect(await rollDialog.innerText()).toContain(clientId);
    await rollDialog.getByRole('radio', { name: 'In 1 hour', exact: true }).check();
    expect(await rollDialog.getByRole('checkbox', { name: 'End all sessions now (for a leaked secret)' }).isChecked()).toBe(false);
    const rolledAt = Date.now();
    await rollDialog.getByRole('button', { name: 'Roll secret', exact: true }).click();

    // The new secret, once: same Client ID, the creation's warning, when the previous one stops.
    const rolled = page.getByRole('dialog', { name: 'New Secret Key for “Rolling key”' });
    await rolled.waitFor();
    await waitForFocus('roll-result-title');
    const newSecret = (await rolled.locator('#rolled-client-secret').textContent()) ?? '';
    expect(newSecret).toMatch(/^sk_live_[0-9A-Za-z]+$/);
    expect(newSecret).not.toBe(firstSecret);
    expect(await rolled.locator('#rolled-client-id').innerText()).toBe(clientId);
    expect(await rolled.locator('#rolled-warning').innerText()).toMatch(/will not be shown again/i);
    expect(await rolled.locator('#rolled-previous').innerText()).toContain('The previous secret keeps working until');
    const previousUntil = (await rolled.locator('#rolled-previous time').getAttribute('datetime')) ?? '';
    expect(Math.abs(Date.parse(previousUntil) - (rolledAt + 3_600_000))).toBeLessThan(5 * 60_000);
    await rolled.getByRole('button', { name: 'Copy Secret Key' }).click();
    await rolled.locator('#rolled-client-secret-copied').getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(newSecret);
    await page.screenshot({ path: join(SCREENSHOTS, 'roll-secret-result.png'), fullPage: true });

    // During the overlap both secrets get tokens.
    for (const secret of [firstSecret, newSecret]) {
      const issued = await exchange(clientId, secret);
      expect(issued.status).toBe(200);
      expect((issued.body as unknown as TokenPair).scope).toBe('read:invoices');
    }

    // Done: the secret leaves the page for good; focus is back on the card's Roll button.
    await rolled.getByRole('button', { name: 'Done', exact: true }).click();
    await page.locator('#roll-dialog').waitFor({ state: 'hidden' });
    await page.waitForFunction(() => document.activeElement?.getAttribute('data-action') === 'roll', undefined, { timeout: 10000 });
    expect(await page.content()).not.toContain(newSecret);
    const listJson = await page.evaluate(() => fetch('/api/v1/settings/api-keys').then((r) => r.text()));
    expect(listJson).not.toContain(newSecret);
    expect(listJson).not.toContain(firstSecret);
    expect(await cardRow('Previous secret').innerText()).toContain('Accepted until');

    // Edit allowed IPs: a bad entry is named beside the field, then the block is saved.
    await keyCard('Rolling key').getByRole('button', { name: /^Edit allowed IPs/ }).click();
    const ipsDialog = page.getByRole('dialog', { name: 'Allowed IP addresses of “Rolling key”' });
    await ipsDialog.waitFor();
    const addresses = ipsDialog.getByRole('textbox', { name: 'Allowed IP addresses' });
    expect(await addresses.inputValue()).toBe('');
    await addresses.fill('203.0.113.0/24\nnot-an-address');
    await ipsDialog.getByRole('button', { name: 'Save', exact: true }).click();
    await ipsDialog.locator('#ips-allowed-ips-error').getByText('“not-an-address” (line 2)', { exact: false }).waitFor();
    expect(await addresses.getAttribute('aria-invalid')).toBe('true');
    await addresses.fill('203.0.113.0/24');
    await ipsDialog.getByRole('button', { name: 'Save', exact: true }).click();
    await ipsDialog.waitFor({ state: 'hidden' });
    await cardRow('Allowed IPs').getByText('203.0.113.0/24', { exact: true }).waitFor();
    expect(await cardRow('Allowed IPs').innerText()).not.toContain('Any address');

    // This process calls from 127.0.0.1, outside 203.0.113.0/24: the key no longer gets tokens here.
    const refused = await exchange(clientId, newSecret);
    expect(refused.status).toBe(400);
    expect(refused.body.error).toBe('unauthorized_client');
  });

  it('records a key\'s creation and roll in the audit log, newest first, and filters the log by type and by key', async () => {
    // An organization of its own, so that its log holds only this test's records: sign out first.
    await page.goto(`${BASE}/settings`);
    const landed = page.getByRole('heading', { level: 1 }).filter({ hasText: /^(Account|Log in)$/ });
    await landed.waitFor();
    if ((await landed.innerText()) === 'Account') {
      await page.getByRole('button', { name: 'Log out' }).click();
      await heading('Log in').waitFor();
    }
    const email = await signUp('Audit Log Ltd');

    // Create a key in the page, then roll its secret (the default overlap, 24 hours).
    await createKeyInPage('Audited key', ['read:invoices']);
    await page.getByRole('link', { name: 'Done, back to API keys' }).click();
    await heading('API').waitFor();
    await keyCard('Audited key').waitFor();
    const keyId = (await keyCard('Audited key').getAttribute('data-key-id')) ?? '';
    expect(keyId).toMatch(/^key_/);
    await keyCard('Audited key').getByRole('button', { name: /^Roll secret/ }).click();
    const rollDialog = page.getByRole('dialog', { name: 'Roll the secret of “Audited key”' });
    await rollDialog.waitFor();
    await rollDialog.getByRole('button', { name: 'Roll secret', exact: true }).click();
    const rolled = page.getByRole('dialog', { name: 'New Secret Key for “Audited key”' });
    await rolled.waitFor();
    await rolled.getByRole('button', { name: 'Done', exact: true }).click();
    await page.locator('#roll-dialog').waitFor({ state: 'hidden' });

    // Settings → Audit log: focus on its heading; the records, newest first.
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Audit log' }).click();
    await heading('Audit log').waitFor();
    await waitForFocus('audit-title');
    expect(page.url()).toBe(`${BASE}/settings/audit`);
    const log = page.getByRole('table', { name: 'Events' });
    const rows = log.locator('tbody tr');
    const createdSummary = 'Key “Audited key” created with read:invoices';
    const rolledSummary = 'Secret rolled; previous secret works until';
    const signedUpSummary = `Account created by ${email}`;
    await rows.filter({ hasText: signedUpSummary }).waitFor();
    /** The rows' texts once the list is settled (no load in flight). */
    const rowTexts = async (): Promise<string[]> => {
      await page.locator('#audit-table:not([aria-busy])').waitFor();
      return rows.allInnerTexts();
    };
    const all = await rowTexts();
    const rolledAt = all.findIndex((t) => t.includes(rolledSummary));
    const createdAt = all.findIndex((t) => t.includes(createdSummary));
    const signedUpAt = all.findIndex((t) => t.includes(signedUpSummary));
    expect(rolledAt).toBeGreaterThanOrEqual(0);
    expect(rolledAt).toBeLessThan(createdAt);
    expect(createdAt).toBeLessThan(signedUpAt);
    expect(all[rolledAt]).toContain('api_key.rolled');
    expect(all[createdAt]).toContain('api_key.created');
    expect(all[signedUpAt]).toContain('account.signed_up');
    // Each row: its local time in a <time datetime>, newest first; the actor is the person signed in.
    const times = await rows.locator('th time').evaluateAll((els) => els.map((el) => el.getAttribute('datetime') ?? ''));
    expect(times.length).toBe(all.length);
    expect([...times].sort((a, b) => Date.parse(b) - Date.parse(a))).toEqual(times);
    const createdRow = rows.filter({ hasText: createdSummary });
    expect(await createdRow.getByRole('cell', { name: 'You', exact: true }).count()).toBe(1);
    expect(await createdRow.getByRole('link', { name: `All events of ${keyId}` }).count()).toBe(1);

    // Filter by type: only the roll, and the filter is in the address (Back, reload, a shared link).
    const filters = page.getByRole('search', { name: 'Filter events' });
    await filters.getByLabel('Event type').selectOption('api_key.rolled');
    await filters.getByRole('button', { name: 'Apply filters' }).click();
    await page.waitForURL(`${BASE}/settings/audit?type=api_key.rolled`);
    await page.locator('#audit-count', { hasText: /^1 event shown\.$/ }).waitFor();
    const onlyRolled = await rowTexts();
    expect(onlyRolled).toHaveLength(1);
    expect(onlyRolled[0]).toContain(rolledSummary);
    expect(onlyRolled[0]).toContain('api_key.rolled');

    // Filter by the key, from its id in the table: both of its records, none of the account's.
    await rows.filter({ hasText: rolledSummary }).getByRole('link', { name: `All events of ${keyId}` }).click();
    await page.waitForURL(`${BASE}/settings/audit?api_key_id=${keyId}`);
    await page.locator('#audit-count', { hasText: /^2 events shown\.$/ }).waitFor();
    await waitForFocus('audit-events-title');
    const ofKey = await rowTexts();
    expect(ofKey).toHaveLength(2);
    expect(ofKey[0]).toContain(rolledSummary);
    expect(ofKey[1]).toContain(createdSummary);
    expect(ofKey.join('\n')).not.toContain('account.signed_up');
    expect(await filters.getByLabel('API key').inputValue()).toBe(keyId);
    expect(await filters.getByLabel('Event type').inputValue()).toBe('');

    // Back returns to the type filter, with its list.
    await page.goBack();
    await page.waitForURL(`${BASE}/settings/audit?type=api_key.rolled`);
    await page.locator('#audit-count', { hasText: /^1 event shown\.$/ }).waitFor();
    expect(await filters.getByLabel('Event type').inputValue()).toBe('api_key.rolled');
  });

  it('shows every active key above the revoked ones, which come on request a page at a time; the settings answers are the ones the OpenAPI document declares', async () => {
    // An organization of its own: its key list holds only this test's keys.
    await page.goto(`${BASE}/settings`);
    const landed = page.getByRole('heading', { level: 1 }).filter({ hasText: /^(Account|Log in)$/ });
    await landed.waitFor();
    if ((await landed.innerText()) === 'Account') {
      await page.getByRole('button', { name: 'Log out' }).click();
      await heading('Log in').waitFor();
    }
    await signUp('Key List Ltd');

    // One key, then many keys disposed of at once, as a script (or an intruder) would: through the
    // API with the page's own session. The first key used to fall off a list of the newest keys.
    const made = await page.evaluate(async () => {
      const csrf = ((await (await fetch('/api/v1/account/csrf')).json()) as { csrf_token: string }).csrf_token;
      const headers = { 'content-type': 'application/json', 'x-csrf-token': csrf };
      const create = async (name: string) =>
        ((await (await fetch('/api/v1/settings/api-keys', { method: 'POST', headers, body: JSON.stringify({ name, scopes: ['read:invoices'] }) })).json()) as { id: string }).id;
      const live = await create('Hidden in plain sight');
      const dead: string[] = [];
      for (let i = 0; i < 25; i += 1) {
        const id = await create(`Disposed of ${i}`);
        await fetch(`/api/v1/settings/api-keys/${id}/revoke`, { method: 'POST', headers: { 'x-csrf-token': csrf } });
        dead.push(id);
      }
      return { live, dead };
    });

    await page.goto(`${BASE}/settings/api`);
    await heading('API').waitFor();
    await keyCard('Hidden in plain sight').waitFor();
    const liveCards = page.locator('#keys-list .key-card');
    expect(await liveCards.evaluateAll((els) => els.map((el) => el.getAttribute('data-key-id')))).toEqual([made.live]);

    // Revoked keys on request, newest first, 20 at a time.
    const toggle = page.getByRole('button', { name: 'Show revoked and expired keys' });
    await toggle.click();
    expect(await page.locator('#keys-inactive-toggle').getAttribute('aria-expanded')).toBe('true');
    await page.locator('#keys-inactive-count', { hasText: /^20 revoked or expired keys shown; more are available\.$/ }).waitFor();
    const inactiveIds = () => page.locator('#keys-inactive-list .key-card').evaluateAll((els) => els.map((el) => el.getAttribute('data-key-id')));
    expect(await inactiveIds()).toEqual([...made.dead].reverse().slice(0, 20));
    await page.getByRole('button', { name: 'Show more keys' }).click();
    await page.locator('#keys-inactive-count', { hasText: /^25 revoked or expired keys shown\.$/ }).waitFor();
    expect(await inactiveIds()).toEqual([...made.dead].reverse());
    expect(await page.locator('#keys-inactive-more').isHidden()).toBe(true);
    // Focus moved on to the first key the page brought, not back to the top.
    expect(await page.evaluate(() => document.activeElement?.closest('[data-key-id]')?.getAttribute('data-key-id'))).toBe(made.dead[4]);
    // None of them can be acted on; the live key still can.
    expect(await page.locator('#keys-inactive-list').getByRole('button').count()).toBe(0);
    expect(await keyCard('Hidden in plain sight').getByRole('button', { name: /^Revoke/ }).count()).toBe(1);
    await page.screenshot({ path: join(SCREENSHOTS, 'key-list-with-revoked.png'), fullPage: true });
    await page.getByRole('button', { name: 'Hide revoked and expired keys' }).click();
    expect(await page.locator('#keys-inactive').isHidden()).toBe(true);

    // Every answer of the key list, the audit log and key creation (its 429 included) is what the
    // served OpenAPI document declares for its path, method, status and media type.
    const answers = await page.evaluate(async () => {
      const csrf = ((await (await fetch('/api/v1/account/csrf')).json()) as { csrf_token: string }).csrf_token;
      const read = async (response: Response) => ({ status: response.status, type: (response.headers.get('content-type') ?? '').split(';')[0], retryAfter: response.headers.get('retry-after'), body: (await response.json()) as unknown });
      const list = async (path: string) => ({ path, method: 'get', ...(await read(await fetch(path))) });
      const got = [
        await list('/api/v1/settings/api-keys'),
        await list('/api/v1/settings/api-keys?status=revoked,expired&limit=2'),
        await list('/api/v1/settings/api-keys?limit=0&status=live'),
        await list('/api/v1/settings/api-keys?status=active&status=revoked'),
        await list('/api/v1/settings/audit-events?limit=5'),
        await list('/api/v1/settings/audit-events?type=api_key.created&type=api_key.revoked'),
      ];
      // Creations until the organization's minute is spent (100 by default; 26 made above).
      for (let i = 0; i < 110; i += 1) {
        const answer = await read(
          await fetch('/api/v1/settings/api-keys', { method: 'POST', headers: { 'content-type': 'application/json', 'x-csrf-token': csrf }, body: JSON.stringify({ name: `Burst ${i}`, scopes: ['read:invoices'] }) }),
        );
        if (i === 0 || answer.status !== 201) got.push({ path: '/api/v1/settings/api-keys', method: 'post', ...answer });
        if (answer.status !== 201) break;
      }
      return got;
    });
    const anonymous = await http('GET', `${BASE}/api/v1/settings/api-keys`);
    answers.push({ path: '/api/v1/settings/api-keys', method: 'get', status: anonymous.status, type: (anonymous.headers.get('content-type') ?? '').split(';')[0], retryAfter: null, body: anonymous.body });
    expect(answers.map((a) => `${a.method} ${a.path.split('?')[0]} ${a.status}`)).toEqual([
      'get /api/v1/settings/api-keys 200',
      'get /api/v1/settings/api-keys 200',
      'get /api/v1/settings/api-keys 400',
      'get /api/v1/settings/api-keys 400',
      'get /api/v1/settings/audit-events 200',
      'get /api/v1/settings/audit-events 400',
      'post /api/v1/settings/api-keys 201',
      'post /api/v1/settings/api-keys 429',
      'get /api/v1/settings/api-keys 401',
    ]);
    expect(Number(answers[7].retryAfter)).toBeGreaterThan(0);
    expect((answers[3].body as { errors: unknown[] }).errors).toEqual([{ field: 'status', code: 'repeated', message: 'must be given once' }]);
    expect((answers[5].body as { errors: unknown[] }).errors).toEqual([{ field: 'type', code: 'repeated', message: 'must be given once' }]);

    const doc = await http('GET', `${BASE}/api/v1/openapi.json`);
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv);
    ajv.addSchema({ ...doc.body, $id: 'openapi.json' });
    const pointer = (...parts: string[]) => parts.map((p) => p.replace(/~/g, '~0').replace(/\//g, '~1')).join('/');
    for (const a of answers) {
      const path = a.path.split('?')[0];
      const ref = `openapi.json#/${pointer('paths', path, a.method, 'responses', String(a.status), 'content', a.type, 'schema')}`;
      const validate = ajv.getSchema(ref) ?? ajv.compile({ $ref: ref });
      const call = `${a.method.toUpperCase()} ${a.path} ${a.status}`;
      expect({ call, errors: validate(a.body) ? null : validate.errors }).toEqual({ call, errors: null });
    }
  });

  it('keeps the organization\'s details: saves every field as the server normalizes it, refuses a wrong IBAN beside its field, clears a field, by keyboard too, and fits 375 px', async () => {
    // An organization of its own: its profile starts empty.
    await page.goto(`${BASE}/settings`);
    const landed = page.getByRole('heading', { level: 1 }).filter({ hasText: /^(Account|Log in)$/ });
    await landed.waitFor();
    if ((await landed.innerText()) === 'Account') {
      await page.getByRole('button', { name: 'Log out' }).click();
      await heading('Log in').waitFor();
    }
    await signUp('Organization Profile Ltd');

    /** The profile as `GET /api/v1/settings/organization` answers it, read with the page's own session. */
    type Profile = { iban: string | null; vat_id: string | null; version: number; updated_at: string | null } & Record<string, unknown>;
    const profileNow = (): Promise<Profile> => page.evaluate(async () => (await (await fetch('/api/v1/settings/organization', { cache: 'no-store' })).json()) as Profile);
    const panel = page.locator('#panel-organization');
    const form = page.locator('#organization-form');
    const field = (label: string): Locator => panel.getByRole('textbox', { name: label, exact: true });
    const savedStatus = page.locator('#organization-saved');
    const typed: Record<string, string> = {
      'Legal name': 'Organization Profile GmbH',
      'Address line 1': 'Hauptstraße 1',
      'Address line 2': 'Hinterhaus',
      'Postal code': '10115',
      City: 'Berlin',
      Country: 'DE',
      'VAT ID': 'DE123456789',
      'Billing email': 'billing@profile.example',
      IBAN: 'de89 3704 0044 0532 0130 00',
      BIC: 'COBADEFFXXX',
      'Payment terms': 'Payable within 30 days.\nBank transfer only.',
    };
    const stored = { ...typed, IBAN: 'DE89370400440532013000' };
    /** Every field's value, by label. */
    const shown = async (): Promise<Record<string, string>> => {
      const values: Record<string, string> = {};
      for (const label of Object.keys(typed)) values[label] = await field(label).inputValue();
      return values;
    };

    // Settings → Organization: focus on its heading, then the form, every field empty.
    await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Organization', exact: true }).click();
    await heading('Organization').waitFor();
    await waitForFocus('organization-title');
    expect(page.url()).toBe(`${BASE}/settings/organization`);
    await form.waitFor();
    expect(await shown()).toEqual(Object.fromEntries(Object.keys(typed).map((label) => [label, ''])));
    expect((await profileNow()).version).toBe(0);

    // Every field filled, the IBAN with spaces and in lower case; the server's form comes back.
    for (const [label, value] of Object.entries(typed)) await field(label).fill(value);
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    await savedStatus.getByText('Saved', { exact: true }).waitFor();
    expect(await savedStatus.getAttribute('role')).toBe('status');
    expect(await shown()).toEqual(stored);
    expect(await page.locator('#organization-iban-saved').innerText()).toContain('DE89 3704 0044 0532 0130 00');
    const first = await profileNow();
    expect(first).toMatchObject({
      object: 'organization_profile',
      legal_name: 'Organization Profile GmbH',
      address: { line1: 'Hauptstraße 1', line2: 'Hinterhaus', city: 'Berlin', postal_code: '10115', region: null, country: 'DE' },
      vat_id: 'DE123456789',
      email: 'billing@profile.example',
      iban: 'DE89370400440532013000',
      bic: 'COBADEFFXXX',
      payment_terms: 'Payable within 30 days.\nBank transfer only.',
      version: 1,
    });

    // A reload shows what was kept.
    await page.reload();
    await heading('Organization').waitFor();
    await form.waitFor();
    expect(await shown()).toEqual(stored);

    // A wrong check digit: the server's message beside the IBAN, wired for screen readers, focus on
    // it, what was typed kept; and nothing changed, the other fields included.
    await field('Legal name').fill('Renamed GmbH');
    await field('IBAN').fill('DE88 3704 0044 0532 0130 00');
    await panel.getByRole('button', { name: 'Save', exact: true }).click();
    const ibanError = page.locator('#organization-iban-error');
    await ibanError.getByText('check digits', { exact: false }).waitFor();
    expect(await ibanError.innerText()).toMatch(/^IBAN /);
    const iban = field('IBAN');
    expect(await iban.getAttribute('aria-invalid')).toBe('true');
    expect((await iban.getAttribute('aria-describedby'))?.split(' ')).toContain('organization-iban-error');
    await waitForFocus('organization-iban');
    expect(await iban.inputValue()).toBe('DE88 3704 0044 0532 0130 00');
    expect(await field('Legal name').inputValue()).toBe('Renamed GmbH');
    expect(await savedStatus.innerText()).toBe('');
    expect(await profileNow()).toEqual(first);

    // With the keyboard alone, from a fresh page: the navigation, the VAT ID emptied, Save.
    await page.goto(`${BASE}/settings`);
    await heading('Account').waitFor();
    await tabTo('the Organization link', () => document.activeElement?.getAttribute('data-nav') === 'organization');
    await page.keyboard.press('Enter');
    await waitForFocus('organization-title');
    await form.waitFor();
    expect(await shown()).toEqual(stored);
    await tabTo('the VAT ID field', () => document.activeElement?.id === 'organization-vat-id', 12);
    await page.keyboard.press('ControlOrMeta+A');
    await page.keyboard.press('Backspace');
    await tabTo('the Save button', () => document.activeElement instanceof HTMLButtonElement && document.activeElement.type === 'submit', 8);
    const outline = await page.evaluate(() => {
      const style = getComputedStyle(document.activeElement as Element);
      return { style: style.outlineStyle, width: parseFloat(style.outlineWidth) };
    });
    expect(outline.style).not.toBe('none');
    expect(outline.width).toBeGreaterThanOrEqual(2);
    await page.keyboard.press('Enter');
    await savedStatus.getByText('Saved', { exact: true }).waitFor();
    // Focus stays on Save rather than falling back to the top of the page.
    expect(await page.evaluate(() => document.activeElement instanceof HTMLButtonElement && document.activeElement.type === 'submit')).toBe(true);
    expect(await field('VAT ID').inputValue()).toBe('');
    const second = await profileNow();
    expect(second.vat_id).toBeNull();
    expect(second.version).toBe(2);
    expect({ ...second, vat_id: first.vat_id, version: first.version, updated_at: first.updated_at }).toEqual(first);

    // A phone: the panel, and the panel with a field error, without sideways scrolling.
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      await page.reload();
      await heading('Organization').waitFor();
      await form.waitFor();
      await expectNoHorizontalScroll();
      await field('IBAN').fill('DE88 3704 0044 0532 0130 00');
      await panel.getByRole('button', { name: 'Save', exact: true }).click();
      await ibanError.getByText('check digits', { exact: false }).waitFor();
      await expectNoHorizontalScroll();
      await page.screenshot({ path: join(SCREENSHOTS, 'organization-phone.png'), fullPage: true });
      expect(await profileNow()).toEqual(second);
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }
  });
});

/// <reference lib="dom" />
import { join } from 'node:path';
import { BrowserContext, Locator, Page } from 'playwright-core';
import { Webhook } from 'standardwebhooks';
import { Browser, launchChromium, SCREENSHOTS } from './support/chromium';
import { itWhen, Platform, STACK, startPlatform } from './support/platform';
import { ALL_SERVICES, platformPorts } from './support/ports';
import { Received, startReceiver } from './support/receiver';
import { sleep } from './support/processes';

/**
 * Settings → Webhooks in a real browser (Debian's Chromium through playwright-core), through the
 * gateway, against the real auth service, webhook service and page: the page calls only the auth
 * service's /api/v1/settings/webhook-endpoints, which forwards each call to the webhook service with
 * an access token of its own (ADR 0038). The endpoints point at a receiver this spec runs on
 * loopback, so: local mode only (a stack elsewhere could not reach it), as webhooks.e2e-spec.ts.
 */

/** The services this spec starts (behind the gateway). */
const STARTED = ['auth-service', 'webhook-service', 'settings-web'] as const;
/**
 * 4701-4709 belong to this spec: the gateway, the services it starts, then the other services in
 * SERVICES order. Those are not started: the gateway answers 502 for them, which this spec never asks for.
 */
const PORTS = platformPorts({
  gateway: 4701,
  first: 4702,
  services: [...STARTED, ...ALL_SERVICES.filter((s) => !(STARTED as readonly string[]).includes(s))],
});
const local = itWhen(!STACK.external, 'the webhook receiver runs on this machine');
/** Every attempt that fails makes an endpoint failing; one failing for this long is disabled (the third test). */
const DISABLE_AFTER_MS = 4000;

let platform: Platform;
let BASE: string;
let context: BrowserContext;
let page: Page;
let browser: Browser;
const pageErrors: string[] = [];
/** Every path under /api/ the page asked for. */
const apiCalls: string[] = [];

beforeAll(async () => {
  if (STACK.external) return;
  platform = await startPlatform({
    label: 'settings-webhooks-e2e',
    ports: PORTS,
    start: [...STARTED, 'gateway'],
    // A receiver on loopback (this spec's); two attempts 300 ms apart, so that a failure is final at once.
    env: { WEBHOOK_ALLOW_PRIVATE_URLS: 'true', WEBHOOK_RETRY_SCHEDULE: '0,300ms', WEBHOOK_POLL_MS: '100', WEBHOOK_DISABLE_AFTER_MS: String(DISABLE_AFTER_MS) },
  });
  BASE = platform.baseUrl;

  browser = await launchChromium('settings-webhooks-e2e', { width: 1280, height: 900 });
  context = browser.context;
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: BASE });
  page = browser.page;
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    // A CSP or Trusted Types violation means the page does something its own policy forbids.
    if (/Content Security Policy|TrustedHTML|Trusted Type/i.test(message.text())) pageErrors.push(message.text());
  });
  page.on('request', (request) => {
    const { pathname } = new URL(request.url());
    if (pathname.startsWith('/api/')) apiCalls.push(pathname);
  });
}, 180000);

afterAll(async () => {
  await browser?.close();
  await platform?.stop();
});

afterEach(() => {
  expect(pageErrors.splice(0)).toEqual([]);
});

const heading = (name: string): Locator => page.getByRole('heading', { name, exact: true });
const endpointCard = (url: string): Locator => page.locator('.endpoint-card').filter({ has: page.getByRole('heading', { name: url, exact: true }) });
const statusBanner = (text: string | RegExp): Locator => page.getByRole('status').filter({ hasText: text });

/** A delivery as the receiver got it, verified with `secret` by the `standardwebhooks` package (throws if forged). */
function verify(secret: string, r: Received) {
  return new Webhook(secret).verify(r.body, {
    'webhook-id': String(r.headers['webhook-id']),
    'webhook-timestamp': String(r.headers['webhook-timestamp']),
    'webhook-signature': String(r.headers['webhook-signature']),
  }) as { id: string; type: string; data: { object: Record<string, unknown> } };
}

let signedUp = false;
async function ensureSignedUp(): Promise<void> {
  if (signedUp) return;
  await page.goto(`${BASE}/settings/signup`);
  await heading('Create your account').waitFor();
  const signup = page.locator('#view-signup');
  await signup.getByRole('textbox', { name: 'Organization name' }).fill('Webhooks Browser Ltd');
  await signup.getByRole('textbox', { name: 'Email' }).fill(`settings-webhooks-${Date.now()}@example.com`);
  await signup.getByLabel('Password', { exact: true }).fill('a long enough passphrase');
  await signup.getByRole('button', { name: 'Sign up' }).click();
  await heading('Account').waitFor();
  signedUp = true;
}

async function openWebhooks(): Promise<void> {
  await page.getByRole('navigation', { name: 'Settings' }).getByRole('link', { name: 'Webhooks' }).click();
  await heading('Webhooks').waitFor();
}

/** Reloads the attempts until `ready` holds for the rows' texts (deliveries are asynchronous). */
async function attemptsUntil(description: string, ready: (rows: string[]) => boolean, timeoutMs = 20000): Promise<string[]> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    await page.getByRole('button', { name: 'Refresh', exact: true }).click();
    await page.waitForFunction(() => !document.getElementById('attempts-table')?.hasAttribute('aria-busy'));
    const rows = await page.locator('#attempts-rows tr').allInnerTexts();
    if (ready(rows)) return rows;
    if (Date.now() > deadline) throw new Error(`the attempts did not show ${description} within ${timeoutMs} ms: ${JSON.stringify(rows)}`);
    await sleep(300);
  }
}

describe('Settings → Webhooks, in a browser, through the gateway', () => {
  let receiver: Awaited<ReturnType<typeof startReceiver>>;
  /** What the receiver answers; the first test makes it fail for a while. */
  let answer = 200;
  let secret = '';
  let endpointId = '';

  beforeAll(async () => {
    if (!STACK.external) receiver = await startReceiver(() => answer);
  });
  afterAll(() => receiver?.stop());

  local('adds an endpoint, shows its secret once, sends a test event that verifies with it, lists the attempts and replays a failed delivery', async () => {
    await ensureSignedUp();
    await openWebhooks();
    await page.getByText('No webhook endpoints yet.').waitFor();

    await page.getByRole('link', { name: 'Add endpoint' }).click();
    await heading('Add endpoint').waitFor();
    await page.getByRole('textbox', { name: 'Endpoint URL' }).fill(receiver.url);
    await page.getByRole('textbox', { name: 'Description' }).fill('ERP receiver');
    // The checklist holds every type the platform can send, from the auth service's list.
    await page.getByRole('checkbox', { name: 'invoice.created', exact: true }).waitFor();
    expect(await page.locator('#webhook-event-list input[type="checkbox"]').count()).toBeGreaterThanOrEqual(11);
    await page.getByRole('checkbox', { name: 'invoice.created', exact: true }).check();
    await page.getByRole('checkbox', { name: 'invoice.paid', exact: true }).check();
    expect(await page.getByRole('radio', { name: 'v1: HMAC-SHA256' }).isChecked()).toBe(true);
    await page.getByRole('button', { name: 'Add endpoint' }).click();

    // The secret, once, with a copy button and the warning.
    await heading('Endpoint added').waitFor();
    secret = (await page.locator('#webhook-created-secret').textContent()) ?? '';
    expect(secret).toMatch(/^whsec_[A-Za-z0-9+/=]+$/);
    expect(await page.locator('#webhook-created-warning').innerText()).toMatch(/will not be shown again/i);
    expect(await page.locator('#webhook-created-url').innerText()).toBe(receiver.url);
    await page.getByRole('button', { name: 'Copy signing secret' }).click();
    await page.locator('#webhook-created-secret-copied').getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(secret);
    await page.screenshot({ path: join(SCREENSHOTS, 'webhook-endpoint-created.png'), fullPage: true });

    // The list: the endpoint with its events and status, and the secret nowhere.
    await page.getByRole('link', { name: 'Done, back to webhooks' }).click();
    await heading('Webhooks').waitFor();
    const card = endpointCard(receiver.url);
    await card.waitFor();
    const details = await card.innerText();
    expect(details).toContain('ERP receiver');
    expect(details).toContain('invoice.created');
    expect(details).toContain('invoice.paid');
    expect(details).toContain('Enabled');
    expect(await page.content()).not.toContain(secret);
    const listed = await page.evaluate(() => fetch('/api/v1/settings/webhook-endpoints').then((r) => r.json() as Promise<{ data: Array<{ id: string; url: string; secret?: string }> }>));
    expect(listed.data).toHaveLength(1);
    expect(listed.data[0]).not.toHaveProperty('secret');
    endpointId = listed.data[0].id;
    // Guarded like the key routes: a write without the CSRF token is refused, and nothing without a session.
    const withoutCsrf = await page.evaluate((url) =>
      fetch('/api/v1/settings/webhook-endpoints', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ url, enabled_events: ['*'] }) }).then((r) => r.status),
    receiver.url);
    expect(withoutCsrf).toBe(403);
    expect((await fetch(`${BASE}/api/v1/settings/webhook-endpoints`)).status).toBe(401);

    // A test event: the receiver gets it, signed, and it verifies with the secret the page showed.
    await card.getByRole('button', { name: /^Send test event/ }).click();
    await statusBanner('Test event sent').waitFor();
    await receiver.waitFor((all) => all.length >= 1);
    const test = verify(secret, receiver.received[0]);
    expect(test.type).toBe('webhook_endpoint.test');
    expect(test.data.object).toMatchObject({ id: endpointId, url: receiver.url });

    // Its attempt: succeeded, the receiver's 200, a latency.
    await card.getByRole('link', { name: /^Delivery attempts/ }).click();
    await heading('Delivery attempts').waitFor();
    expect(page.url()).toBe(`${BASE}/settings/webhooks/attempts?endpoint=${endpointId}`);
    await page.locator('#webhook-attempts-endpoint').getByText(receiver.url, { exact: true }).waitFor();
    expect(await page.locator('#webhook-attempts-endpoint').innerText()).toContain('Enabled');
    const first = await attemptsUntil('the test event delivered', (rows) => rows.some((r) => r.includes('Succeeded')));
    expect(first).toHaveLength(1);
    expect(first[0]).toContain(test.id);
    expect(first[0]).toMatch(/\b200\b/);
    expect(first[0]).toMatch(/\d+ ms/);

    // A receiver that fails: both attempts of the next test event fail (500), the delivery is failed for good.
    answer = 500;
    await page.getByRole('button', { name: 'Send test event', exact: true }).click();
    await statusBanner('Test event sent').waitFor();
    await receiver.waitFor((all) => all.length >= 3);
    const failed = verify(secret, receiver.received[1]);
    expect(receiver.received[2].headers['webhook-id']).toBe(failed.id);
    const afterFailure = await attemptsUntil('two failed attempts', (rows) => rows.filter((r) => r.includes('Failed')).length >= 2);
    expect(afterFailure.filter((r) => r.includes(failed.id) && r.includes('Failed') && /\b500\b/.test(r))).toHaveLength(2);

    // Back up: the replay sends the failed delivery again (the same webhook-id), and it verifies.
    answer = 200;
    const since = await page.getByLabel('Replay failed deliveries since').inputValue();
    expect(since).toMatch(/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}$/);
    await page.getByRole('button', { name: 'Replay failed deliveries' }).click();
    await statusBanner('1 failed delivery queued to be sent again.').waitFor();
    await receiver.waitFor((all) => all.length >= 4);
    const replayed = verify(secret, receiver.received[3]);
    expect(replayed.id).toBe(failed.id);
    const afterReplay = await attemptsUntil('the replayed delivery', (rows) => rows.some((r) => r.includes(failed.id) && r.includes('Succeeded')));
    expect(afterReplay).toHaveLength(4);
    await page.screenshot({ path: join(SCREENSHOTS, 'webhook-attempts.png'), fullPage: true });

    // At phone width neither the attempts nor the endpoints scroll sideways.
    await page.setViewportSize({ width: 375, height: 812 });
    try {
      for (const path of [`/settings/webhooks/attempts?endpoint=${endpointId}`, '/settings/webhooks']) {
        await page.goto(`${BASE}${path}`);
        await page.locator(path === '/settings/webhooks' ? '.endpoint-card' : '#attempts-rows tr').first().waitFor();
        const { scrollWidth, clientWidth } = await page.evaluate(() => ({ scrollWidth: document.documentElement.scrollWidth, clientWidth: document.documentElement.clientWidth }));
        expect({ path, sideways: scrollWidth > clientWidth }).toEqual({ path, sideways: false });
      }
      await page.screenshot({ path: join(SCREENSHOTS, 'webhook-endpoints-phone.png'), fullPage: true });
    } finally {
      await page.setViewportSize({ width: 1280, height: 900 });
    }

    // The browser never called the webhook service, and never held an access token for it.
    expect(apiCalls.length).toBeGreaterThan(0);
    expect(apiCalls.filter((p) => !p.startsWith('/api/v1/account/') && !p.startsWith('/api/v1/settings/'))).toEqual([]);
  });

  local('rolls the secret (both sign for a while), disables and enables the endpoint, and deletes it', async () => {
    expect(endpointId).not.toBe('');
    await page.goto(`${BASE}/settings/webhooks`);
    await heading('Webhooks').waitFor();
    const card = endpointCard(receiver.url);
    await card.waitFor();

    await card.getByRole('button', { name: /^Roll secret/ }).click();
    const dialog = page.getByRole('dialog', { name: /^Roll the signing secret of/ });
    await dialog.waitFor();
    await dialog.getByRole('button', { name: 'Roll secret' }).click();
    await page.getByRole('heading', { name: /^New secret for/ }).waitFor();
    const rolled = (await page.locator('#webhook-rolled-secret').textContent()) ?? '';
    expect(rolled).toMatch(/^whsec_/);
    expect(rolled).not.toBe(secret);
    await page.getByRole('button', { name: 'Copy new signing secret' }).click();
    await page.locator('#webhook-rolled-secret-copied').getByText('Copied').waitFor();
    expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(rolled);
    await page.getByRole('button', { name: 'Done', exact: true }).click();
    await page.getByRole('heading', { name: /^New secret for/ }).waitFor({ state: 'hidden' });
    // The dialog's close event (a task after the dialog hides) takes the secret out of the document.
    await page.waitForFunction(() => document.getElementById('webhook-rolled-secret')?.textContent === '', undefined, { timeout: 5000 });

    const before = receiver.received.length;
    await card.getByRole('button', { name: /^Send test event/ }).click();
    await receiver.waitFor((all) => all.length > before);
    const delivery = receiver.received[before];
    expect(verify(rolled, delivery).type).toBe('webhook_endpoint.test');
    expect(verify(secret, delivery).type).toBe('webhook_endpoint.test');

    await card.getByRole('button', { name: /^Disable/ }).click();
    await statusBanner('disabled').waitFor();
    await card.getByText('Disabled', { exact: true }).waitFor();
    expect(await card.innerText()).toContain('by request');
    await card.getByRole('button', { name: /^Enable/ }).click();
    await statusBanner('enabled').waitFor();
    await card.getByText('Enabled', { exact: true }).waitFor();

    await card.getByRole('button', { name: /^Delete/ }).click();
    const confirm = page.getByRole('dialog', { name: 'Delete “ERP receiver”?' });
    await confirm.waitFor();
    expect(await confirm.innerText()).toContain(receiver.url);
    await confirm.getByRole('button', { name: 'Delete endpoint' }).click();
    await confirm.waitFor({ state: 'hidden' });
    await statusBanner('deleted').waitFor();
    await page.getByText('No webhook endpoints yet.').waitFor();
    expect(await endpointCard(receiver.url).count()).toBe(0);
  });

  local('shows an endpoint disabled for failing as such, with since when, and a v1a endpoint’s public key', async () => {
    await ensureSignedUp();
    const dead = 'http://127.0.0.1:9/hook';
    await page.goto(`${BASE}/settings/webhooks/new`);
    await heading('Add endpoint').waitFor();
    await page.getByRole('textbox', { name: 'Endpoint URL' }).fill(dead);
    await page.getByRole('radio', { name: 'All events' }).check();
    expect(await page.locator('#webhook-event-list-field').isHidden()).toBe(true);
    await page.getByRole('radio', { name: 'v1a: ed25519' }).check();
    await page.getByRole('button', { name: 'Add endpoint' }).click();
    await heading('Endpoint added').waitFor();
    expect(await page.locator('#webhook-created-secret-label').innerText()).toBe('Public key');
    expect(await page.locator('#webhook-created-secret').textContent()).toMatch(/^whpk_/);
    await page.getByRole('link', { name: 'Done, back to webhooks' }).click();
    const card = endpointCard(dead);
    await card.waitFor();
    expect(await card.innerText()).toContain('All events');

    // Nothing answers there: a first test event fails (failing since then), a second one, after
    // WEBHOOK_DISABLE_AFTER_MS, disables the endpoint.
    await card.getByRole('button', { name: /^Send test event/ }).click();
    await statusBanner('Test event sent').waitFor();
    const deadline = Date.now() + 20000;
    for (;;) {
      await page.reload();
      await endpointCard(dead).waitFor();
      if ((await endpointCard(dead).innerText()).includes('failing since')) break;
      if (Date.now() > deadline) throw new Error('the endpoint does not show as failing');
      await sleep(500);
    }
    await sleep(DISABLE_AFTER_MS + 500);
    await endpointCard(dead).getByRole('button', { name: /^Send test event/ }).click();
    await statusBanner('Test event sent').waitFor();
    for (;;) {
      await page.reload();
      await endpointCard(dead).waitFor();
      if ((await endpointCard(dead).innerText()).includes('Disabled')) break;
      if (Date.now() > deadline + DISABLE_AFTER_MS) throw new Error('the failing endpoint was not disabled');
      await sleep(500);
    }
    expect(await endpointCard(dead).locator('.key-card__row', { hasText: 'Status' }).innerText()).toMatch(/Disabled: failing since \S.*\d/);
    await page.screenshot({ path: join(SCREENSHOTS, 'webhook-endpoints-failing.png'), fullPage: true });
  });
});

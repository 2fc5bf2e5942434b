/// <reference lib="dom" />
import { API_KEYS_TOPIC, AUDIT_TOPIC, DOMAIN_TOPIC, REVOCATIONS_TOPIC, WEBHOOK_ENDPOINTS_TOPIC } from '@invoicing/contracts';
import { join } from 'node:path';
import { Page } from 'playwright-core';
import { Browser, launchChromium, SCREENSHOTS } from './support/chromium';
import { Platform, STACK, startPlatform } from './support/platform';
import { ALL_SERVICES, platformPorts } from './support/ports';

/**
 * The API reference (ADR 0027) in a real browser (Debian's Chromium through playwright-core),
 * through the gateway: Redoc, served by the auth service from this origin, renders the served
 * OpenAPI document under the page's CSP without asking anything of another origin.
 */


/**
 * 4161-4169 belong to this spec: the gateway, then every service in SERVICES order. Only the auth
 * service is started: the gateway answers 502 for the others, which this spec never asks for.
 */
const PORTS = platformPorts({ gateway: 4161, first: 4162, services: ALL_SERVICES });
const BASE = STACK.baseUrl ?? `http://127.0.0.1:${PORTS.gateway}`;
const ORIGIN = new URL(BASE).origin;

interface Operation {
  operationId: string;
  summary: string;
  tags: string[];
}
interface OpenApiDocument {
  servers: Array<{ url: string }>;
  paths: Record<string, Record<string, Operation>>;
}

let platform: Platform;
let page: Page;
let browser: Browser;
let openapi: OpenApiDocument;
let operations: Operation[];
/** Every request the page made, and what it logged that should not be there. */
const requests: string[] = [];
const pageErrors: string[] = [];

beforeAll(async () => {
  platform = await startPlatform({ label: 'api-docs-e2e', ports: PORTS, start: ['auth-service', 'gateway'] });
  const served = await fetch(`${BASE}/api/v1/openapi.json`);
  expect(served.status).toBe(200);
  openapi = (await served.json()) as OpenApiDocument;
  operations = Object.values(openapi.paths).flatMap((byMethod) => Object.values(byMethod));

  browser = await launchChromium('api-docs-e2e', { width: 1400, height: 1000 });
  page = browser.page;
  page.on('request', (request) => requests.push(request.url()));
  page.on('pageerror', (error) => pageErrors.push(error.message));
  page.on('console', (message) => {
    // Any error: a failed load, a CSP violation (Chromium logs each as an error), a script error.
    if (message.type() === 'error' || /Content Security Policy|Trusted Type/i.test(message.text())) pageErrors.push(message.text());
  });
}, 180000);

afterAll(async () => {
  await browser?.close();
  await platform?.stop();
});

afterEach(() => {
  // Emptied each time so that one test's error is reported by that test alone.
  expect(pageErrors.splice(0)).toEqual([]);
  // Only this origin, and what the page makes itself: Redoc's search worker (blob:) and inline icons (data:).
  const elsewhere = requests.splice(0).filter((url) => !url.startsWith('data:') && !url.startsWith('blob:') && new URL(url).origin !== ORIGIN);
  expect(elsewhere).toEqual([]);
});

const operationSection = (operation: Operation) => page.locator(`[data-section-id="tag/${operation.tags[0]}/operation/${operation.operationId}"]`);

async function openReference(): Promise<void> {
  const response = await page.goto(`${BASE}/api/v1/docs`);
  expect(response?.status()).toBe(200);
  expect(response?.headers()['content-security-policy']).toContain("script-src 'self'");
  // Redoc renders every operation once the document is in; the last one showing means all did.
  await operationSection(operations[operations.length - 1]).waitFor({ state: 'attached', timeout: 60000 });
}

describe('the API reference, in a browser, through the gateway', () => {
  it('renders every operation of the served document, under its CSP, from this origin alone', async () => {
    await openReference();

    // Each operation has its section (Redoc's anchor tag/<tag>/operation/<operationId>) headed by its summary.
    const sections = await page.$$eval('[data-section-id]', (els) => els.map((el) => el.getAttribute('data-section-id') ?? ''));
    const headings = await page.$$eval('h2', (els) => els.map((el) => el.textContent?.trim() ?? ''));
    const missing = operations.filter((op) => !sections.includes(`tag/${op.tags[0]}/operation/${op.operationId}`) || !headings.includes(op.summary));
    expect(missing.map((op) => op.operationId)).toEqual([]);
    console.log(`e2e: Redoc rendered ${operations.length - missing.length}/${operations.length} operations`);
    expect(operations.length).toBeGreaterThanOrEqual(4 + 5 * 3);

    // The page's scripts, the document and the search worker: all of this origin (checked after each test).
    const paths = requests.filter((url) => url.startsWith(ORIGIN)).map((url) => new URL(url).pathname);
    expect(paths).toEqual(expect.arrayContaining(['/api/v1/docs', '/api/v1/openapi.json']));
    expect(paths.filter((p) => /^\/api\/v1\/docs\/[\w.-]+\.js$/.test(p))).toHaveLength(2);

    // Search runs in a Web Worker made from a blob: URL, which the CSP admits (worker-src blob:).
    await page.getByPlaceholder('Search...').fill('invoice');
    await page.locator('[data-role="search:results"] [role="menuitem"]').first().waitFor({ timeout: 15000 });
    await page.getByPlaceholder('Search...').fill('');

    // The download button is the served document, never a blob: copy.
    expect(await page.getByRole('link', { name: 'Download' }).getAttribute('href')).toBe('/api/v1/openapi.json');
    await page.screenshot({ path: join(SCREENSHOTS, 'api-docs.png') });
  });

  it('shows a curl and an SDK sample for the token operation, on the served base URL', async () => {
    await openReference();
    const serverUrl = openapi.servers[0].url.replace(/\/+$/, '');
    const token = operationSection(operations.find((op) => op.operationId === 'createToken') as Operation);
    await token.scrollIntoViewIfNeeded();

    const curl = token.getByRole('tab', { name: 'curl', exact: true });
    const sdk = token.getByRole('tab', { name: 'TypeScript (SDK)', exact: true });
    await curl.click();
    await token.getByRole('tabpanel').filter({ hasText: `curl -X POST ${serverUrl}/api/v1/auth/token` }).first().waitFor();
    await sdk.click();
    const sdkPanel = token.getByRole('tabpanel').filter({ hasText: 'new Invoicing(' }).first();
    await sdkPanel.waitFor();
    expect(await sdkPanel.innerText()).toContain(`baseUrl: '${serverUrl}'`);
    await page.screenshot({ path: join(SCREENSHOTS, 'api-docs-token-sdk-sample.png') });
  });

  it('serves Redoc through the gateway compressed and cached for a year', async () => {
    const html = await (await fetch(`${BASE}/api/v1/docs`)).text();
    const scripts = [...html.matchAll(/<script src="([^"]+)"/g)].map((m) => m[1]);
    expect(scripts).toHaveLength(2);
    for (const src of scripts) {
      const response = await fetch(`${BASE}${src}`, { headers: { 'accept-encoding': 'gzip' } });
      expect(response.status).toBe(200);
      expect(response.headers.get('content-encoding')).toBe('gzip');
      expect(response.headers.get('cache-control')).toBe('public, max-age=31536000, immutable');
      expect((await response.text()).length).toBeGreaterThan(100);
    }
  });
});

interface AsyncApiDocument {
  asyncapi: string;
  channels: Record<string, { address: string; messages: Record<string, unknown> }>;
  operations: Record<string, { action: string }>;
  components: { messages: Record<string, { name: string }> };
}

describe('the events (AsyncAPI 3.0), through the gateway', () => {
  it('serves /api/v1/asyncapi.json as JSON: AsyncAPI 3.0.0 with the five topics and their messages', async () => {
    const response = await fetch(`${BASE}/api/v1/asyncapi.json`);
    expect(response.status).toBe(200);
    expect(response.headers.get('content-type')).toMatch(/^application\/json\b/);
    expect(response.headers.get('cache-control')).toBe('public, max-age=300');
    const doc = (await response.json()) as AsyncApiDocument;
    expect(doc.asyncapi).toBe('3.0.0');
    expect(Object.values(doc.channels).map((c) => c.address).sort()).toEqual([API_KEYS_TOPIC, AUDIT_TOPIC, DOMAIN_TOPIC, REVOCATIONS_TOPIC, WEBHOOK_ENDPOINTS_TOPIC].sort());
    expect(Object.values(doc.operations).every((o) => o.action === 'send')).toBe(true);
    expect(Object.keys(doc.components.messages).length).toBeGreaterThanOrEqual(4 + 5 + 1 + 1 + 1);
  });

  it('renders the events page, reached from the reference, under its CSP, with every topic and message', async () => {
    const doc = (await (await fetch(`${BASE}/api/v1/asyncapi.json`)).json()) as AsyncApiDocument;
    await openReference();
    await Promise.all([page.waitForURL(`${BASE}/api/v1/docs/events`), page.getByRole('link', { name: 'Events (Kafka)' }).click()]);
    const response = await page.goto(`${BASE}/api/v1/docs/events`);
    expect(response?.status()).toBe(200);
    expect(response?.headers()['content-security-policy']).toContain("default-src 'none'");
    expect(await page.locator('h1').innerText()).toBe('Invoicing platform events');
    for (const channel of Object.values(doc.channels)) {
      await page.locator(`h3:has-text("${channel.address}")`).first().waitFor();
    }
    const messages = await page.$$eval('section[id^="message-"] h3', (els) => els.map((el) => el.textContent?.trim() ?? ''));
    expect(messages.sort()).toEqual(Object.values(doc.components.messages).map((m) => m.name).sort());
    // Server-rendered: no script at all (the CSP and the origin checks run after each test).
    expect(await page.locator('script').count()).toBe(0);
    await page.screenshot({ path: join(SCREENSHOTS, 'api-docs-events.png'), fullPage: false });
  });
});

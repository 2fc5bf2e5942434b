import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { BrowserContext, chromium, Page } from 'playwright-core';
import { ROOT } from './processes';

/** Debian's Chromium, driven by playwright-core: nothing downloads a browser. */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
  '--disable-quic',
];
export const SCREENSHOTS = join(ROOT, 'artifacts', 'screenshots');

export interface Browser {
  context: BrowserContext;
  page: Page;
  close(): Promise<void>;
}

/**
 * A fresh profile every run (no cookies, storage, cache or permissions carried over from another
 * run or another spec), its first page, and the screenshots folder made.
 */
export async function launchChromium(label: string, viewport: { width: number; height: number }): Promise<Browser> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const userDataDir = mkdtempSync(join(tmpdir(), `${label}-chromium-`));
  const context = await chromium.launchPersistentContext(userDataDir, { executablePath: CHROMIUM, headless: true, args: CHROMIUM_ARGS, viewport });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    async close() {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

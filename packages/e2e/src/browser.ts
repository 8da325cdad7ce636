import { execFileSync } from 'node:child_process';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { chromium, type Browser, type BrowserContext, type Locator, type Page } from 'playwright-core';
import { test } from 'vitest';
import { RESULTS_DIR } from './paths.js';

export { RESULTS_DIR };

export const VIEWPORT = { width: 1280, height: 800 } as const;

export async function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: process.env.CHROMIUM_PATH ?? '/usr/bin/chromium',
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

/** How long closing a context or the browser may take before it is given up (and Chromium killed). */
const CLOSE_WITHIN_MS = 20_000;

/**
 * Waits for a close to finish, at most CLOSE_WITHIN_MS; answers whether it finished. Playwright's
 * close has no timeout of its own, and vitest bounds no fixture's teardown: a Chromium that stopped
 * answering (seen once in CI after a passing test) held the whole e2e tier until the CI run's end.
 */
async function closedWithin(closing: Promise<unknown>, what: string): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const gaveUp = new Promise<false>((resolve) => {
    timer = setTimeout(() => resolve(false), CLOSE_WITHIN_MS);
  });
  const closed = await Promise.race([
    closing.then(
      () => true as const,
      () => true as const,
    ),
    gaveUp,
  ]);
  clearTimeout(timer);
  if (!closed) console.error(`${what} did not close within ${CLOSE_WITHIN_MS / 1000} s`);
  return closed;
}

/** Kills the Chromium processes this test process started (its renderers follow their browser). */
function killOwnChromium(): void {
  try {
    execFileSync('pkill', ['-KILL', '-P', String(process.pid), 'chromium']);
  } catch {
    // none left
  }
}

export async function newTestContext(browser: Browser): Promise<BrowserContext> {
  return browser.newContext({ viewport: VIEWPORT });
}

/** A file name from a test name: `logout › lands on /login` → `logout-lands-on-login`. */
export function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, '-')
    .replace(/^-+|-+$/g, '')
    .slice(0, 120);
}

/** Saves a PNG into test-results/; the viewport only, unless `fullPage`. */
export async function saveScreenshot(
  page: Page,
  fileName: string,
  options: { fullPage?: boolean } = {},
): Promise<string> {
  await mkdir(RESULTS_DIR, { recursive: true });
  const file = path.join(RESULTS_DIR, fileName);
  await page.screenshot({ path: file, fullPage: options.fullPage ?? false });
  return file;
}

/**
 * Waits until `locator`'s element has finished appearing: it and its ancestors fully opaque, and no
 * CSS transition or finite animation running on it, its ancestors or its descendants (Blueprint's
 * overlays and popovers open through ~300 ms transitions). Before a screenshot of something just
 * opened.
 */
export async function atRest(locator: Locator): Promise<void> {
  const element = await locator.elementHandle();
  await locator.page().waitForFunction((el) => {
    if (!el) return false;
    for (let e: Element | null = el; e; e = e.parentElement) if (getComputedStyle(e).opacity !== '1') return false;
    return document.getAnimations().every((animation) => {
      const target = animation.effect instanceof KeyframeEffect ? animation.effect.target : null;
      if (!target || !(target.contains(el) || el.contains(target))) return true;
      const endless = animation.effect?.getComputedTiming().iterations === Infinity;
      return endless || (animation.playState !== 'running' && !animation.pending);
    });
  }, element);
}

interface BrowserFixtures {
  /** One Chromium per test file. */
  browser: Browser;
  /** A fresh context (cookies, storage) per test, 1280×800. */
  context: BrowserContext;
  page: Page;
}

/**
 * `test` with a Playwright page. The page's context is new for every test; when the test fails,
 * a screenshot goes to test-results/FAILED-<test name>.png and the browser console is printed.
 */
export const e2eTest = test.extend<BrowserFixtures>({
  browser: [
    // eslint-disable-next-line no-empty-pattern -- vitest fixtures must destructure their first argument
    async ({}, use) => {
      const browser = await launchBrowser();
      await use(browser);
      if (!(await closedWithin(browser.close(), 'Chromium'))) killOwnChromium();
    },
    { scope: 'file' },
  ],
  context: async ({ browser }, use) => {
    const context = await newTestContext(browser);
    context.setDefaultTimeout(15_000);
    context.setDefaultNavigationTimeout(30_000);
    await use(context);
    if (!(await closedWithin(context.close(), 'The browser context'))) killOwnChromium();
  },
  page: async ({ context, task }, use) => {
    const page = await context.newPage();
    const consoleLines: string[] = [];
    page.on('console', (message) => consoleLines.push(`[${message.type()}] ${message.text()}`));
    page.on('pageerror', (error) => consoleLines.push(`[pageerror] ${error.message}`));
    await use(page);
    if (task.result?.state === 'fail') {
      try {
        const file = await saveScreenshot(page, `FAILED-${slug(task.fullName)}.png`, { fullPage: true });
        console.error(`Screenshot of the failed test "${task.fullName}" at ${page.url()}: ${file}`);
      } catch (error) {
        console.error(`No screenshot for "${task.fullName}": ${String(error)}`);
      }
      if (consoleLines.length > 0) console.error(`Browser console:\n${consoleLines.join('\n')}`);
    }
  },
});

/**
 * One page load as a user makes it, in Chromium (Debian's, as the e2e tests drive it): the login
 * page, then the image viewer of a slide, all through nginx. Counts the tiles the viewer loads
 * through /tiles and the Content-Security-Policy refusals the console reports.
 */
import { existsSync } from 'node:fs';
import { chromium } from 'playwright-core';

export const CHROMIUM = process.env.CHROMIUM_PATH ?? '/usr/bin/chromium';

export async function viewerPageLoad(
  base: string,
  username: string,
  password: string,
  viewerPath: string,
): Promise<{ tiles: number; failedTiles: number; cspErrors: string[]; ms: number }> {
  if (!existsSync(CHROMIUM)) throw new Error(`no Chromium at ${CHROMIUM}`);
  const browser = await chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: ['--no-sandbox', '--disable-gpu', '--no-first-run', '--disable-background-networking'],
  });
  try {
    const page = await browser.newPage({ viewport: { width: 1280, height: 800 } });
    let tiles = 0;
    let failedTiles = 0;
    const cspErrors: string[] = [];
    page.on('response', (response) => {
      if (!new URL(response.url()).pathname.startsWith('/tiles/')) return;
      if (response.status() === 200) tiles++;
      else failedTiles++;
    });
    page.on('console', (message) => {
      if (message.type() === 'error' && /Content Security Policy/i.test(message.text())) cspErrors.push(message.text());
    });
    const started = Date.now();
    await page.goto(`${base}/login`, { timeout: 60_000 });
    await page.getByLabel('Username').fill(username);
    await page.getByLabel('Password').fill(password);
    await page.getByRole('button', { name: 'Log in', exact: true }).click();
    await page.waitForURL((url) => url.pathname !== '/login', { timeout: 60_000 });
    await page.goto(`${base}${viewerPath}`, { timeout: 60_000 });
    const deadline = Date.now() + 60_000;
    while (tiles < 4 && Date.now() < deadline) await page.waitForTimeout(200);
    return { tiles, failedTiles, cspErrors, ms: Date.now() - started };
  } finally {
    await browser.close();
  }
}

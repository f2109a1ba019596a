import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import { chromium, type Browser, type Page } from 'playwright-core';

/**
 * Debian's Chromium, driven by playwright-core. Nothing here downloads a browser:
 * scripts/browser/install.sh installs the `chromium` package when /usr/bin/chromium is missing.
 */
export const CHROMIUM = '/usr/bin/chromium';

/** Flags for a quiet, offline, throwaway browser. */
export const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
] as const;

/** Where the screenshots go (git-ignored). */
export const ARTIFACTS = join(import.meta.dirname, '..', '..', 'test-artifacts');

export interface LaunchedBrowser {
  readonly browser: Browser;
  close(): Promise<void>;
}

/**
 * Launches Chromium. playwright-core gives every launch a fresh temporary profile
 * (`--user-data-dir`) and removes it on close; it refuses one passed in `args`.
 */
export const launchChromium = async (): Promise<LaunchedBrowser> => {
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is missing: run bash scripts/browser/install.sh`);
  const browser = await chromium.launch({ executablePath: CHROMIUM, headless: true, args: [...CHROMIUM_FLAGS] });
  return { browser, close: () => browser.close() };
};

const axeSource = (): string => readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/**
 * axe-core's violations of WCAG 2.1 A/AA and its best practices on the page, shadow roots
 * included, as `rule: target` lines. The page's context must bypass its CSP to inject axe.
 */
export const axeViolations = async (page: Page): Promise<string[]> => {
  if (!(await page.evaluate(() => 'axe' in globalThis))) await page.addScriptTag({ content: axeSource() });
  return page.evaluate(async () => {
    type Axe = { run(context: Document, options: object): Promise<{ violations: Array<{ id: string; nodes: Array<{ target: unknown }> }> }> };
    const axe = (globalThis as unknown as { axe: Axe }).axe;
    const result = await axe.run(document, { runOnly: { type: 'tag', values: ['wcag2a', 'wcag2aa', 'wcag21a', 'wcag21aa', 'best-practice'] } });
    return result.violations.flatMap((v) => v.nodes.map((n) => `${v.id}: ${JSON.stringify(n.target)}`));
  });
};

/** Saves a full-page screenshot as test-artifacts/NAME.png and returns its path. */
export const screenshot = async (page: Page, name: string): Promise<string> => {
  mkdirSync(ARTIFACTS, { recursive: true });
  const path = join(ARTIFACTS, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  return path;
};

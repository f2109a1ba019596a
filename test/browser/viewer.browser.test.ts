import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { exampleWorkerModule } from '../../examples/app/cdk';
import { createTesseraClient, type TesseraClient } from '../../lib/client';
import type { RunRequestInput, RunResource } from '../../lib/contract';
import type { LocalCloud } from '../../lib/local/cloud';
import { startTesseraCloud } from '../../lib/local/tessera-cloud';
import { viewerUrl } from '../../lib/local/viewer-site';
import { GAP_STATUSES, UNREAD_LABEL, VERDICT_LABELS, verdictOf } from '../../lib/web/geometry';
import { axeViolations, launchChromium, screenshot, type LaunchedBrowser } from './browser';

/**
 * The local viewer in headless Chromium against a local cloud: the examples' runs drawn by
 * `<tessera-run>`, asserted through the DOM (its shadow root), with axe-core and a screenshot each.
 */

const example = (name: string): RunRequestInput =>
  JSON.parse(readFileSync(join(import.meta.dirname, '..', '..', 'examples', `${name}.json`), 'utf8')) as RunRequestInput;

let cloud: LocalCloud;
let chromium: LaunchedBrowser;
let tessera: TesseraClient;
let token: string;
const runs: Record<'tax' | 'scout' | 'catering', RunResource> = {} as never;
let cancelledRunId: string | undefined;

const waitUntil = async (client: TesseraClient, runId: string, check: (run: RunResource) => boolean): Promise<RunResource> => {
  for (const started = Date.now(); Date.now() - started < 60_000;) {
    const run = await client.getRun(runId);
    if (check(run)) return run;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  throw new Error(`run ${runId} never reached the state the test waits for`);
};

beforeAll(async () => {
  [cloud, chromium] = await Promise.all([
    startTesseraCloud({ workers: exampleWorkerModule({ faultInjection: false }), functionLogLevel: 'ERROR' }),
    launchChromium(),
  ]);
  token = await cloud.mintToken({ tenant: 'viewer', subject: 'browser-tests' });
  tessera = createTesseraClient({ apiUrl: cloud.apiUrl ?? '', token });
  // The three runs at once: Scout waits on a five-second deadline (twice), the others do not.
  const submitted = await Promise.all(['tax-2025', 'scout', 'catering'].map(async (name) => (await tessera.createRun(example(name))).runId));
  const [tax, scout, catering] = submitted as [string, string, string];
  const wait = (runId: string) => tessera.waitForRun(runId, { intervalMs: 250, timeoutMs: 120_000 });
  [runs.tax, runs.scout, runs.catering] = await Promise.all([wait(tax), wait(scout), wait(catering)]);
}, 240_000);

afterAll(async () => {
  await chromium?.close();
  await cloud?.stop();
});

/** A page of the viewer, its CSP bypassed only so axe-core can be injected. */
const open = async (runId: string, status: string): Promise<Page> => {
  const context = await chromium.browser.newContext({ bypassCSP: true, viewport: { width: 1200, height: 900 } });
  const page = await context.newPage();
  await page.goto(`${viewerUrl(cloud.apiUrl ?? '', token)}&run=${encodeURIComponent(runId)}`);
  await page.locator(`tessera-run[data-status="${status}"]`).waitFor();
  return page;
};

/** Where a mark's box lies across the universe band, as fractions of the band's width. */
const across = async (page: Page, selector: string): Promise<{ from: number; to: number }> => {
  const band = await page.locator('tessera-run [data-universe]').boundingBox();
  const box = await page.locator(selector).first().boundingBox();
  if (!band || !box) throw new Error(`nothing drawn for ${selector}`);
  return { from: (box.x - band.x) / band.width, to: (box.x + box.width - band.x) / band.width };
};

describe('the local viewer draws the examples', () => {
  it('tax 2025: the June gap at 28–30 June, re-checked empty, with its subtask on hover and focus', async () => {
    const page = await open(runs.tax.runId, 'succeeded');
    const gap = page.locator('tessera-run [data-gap][data-category="rechecked-empty"]');
    await expect(gap.count()).resolves.toBe(1);
    await expect(gap.locator('[data-gap-label]').textContent()).resolves.toBe(GAP_STATUSES.confirmed_empty.label);
    // 2025 has 365 days; 28 June starts day 178 and the gap ends where 1 July (day 181) begins.
    const place = await across(page, 'tessera-run [data-gap] rect.gap-rechecked-empty');
    expect(place.from).toBeCloseTo(178 / 365, 2);
    expect(place.to).toBeCloseTo(181 / 365, 2);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'tax-2025');

    await gap.hover();
    await expect(page.locator('tessera-run .tip').textContent()).resolves.toContain('Gap 28 Jun 2025 – 30 Jun 2025: re-checked empty.');
    await page.locator('tessera-run [data-subtask="B"][data-state]').focus();
    const tip = await page.locator('tessera-run .tip').textContent();
    expect(tip).toContain('Subtask B (tax-statements, round 1): ok.');
    expect(tip).toContain('Observed: 1 Apr 2025 – 27 Jun 2025');
    expect(tip).toContain('Usage: ');
    await expect(page.locator('tessera-run [data-statement]').textContent()).resolves.toBe(runs.tax.answer?.coverage.statement);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('Scout: q3/C drawn as timed out, and crm:vantage (the third of five cells) as unread', async () => {
    const page = await open(runs.scout.runId, runs.scout.status);
    await expect(page.locator('tessera-run [data-subtask="C"][data-state="timed_out"] [data-state-label]').textContent()).resolves.toMatch(/^timed out/);
    // crm:vantage is the third of five cells: [2/5, 3/5) of the band. (On a machine so loaded that
    // other sources miss their five-second deadlines too, they are drawn as unread as well.)
    const unread = page.locator(`tessera-run [data-gap][data-category="unread"][data-from="${(2 / 5).toFixed(6)}"]`);
    await expect(unread.count()).resolves.toBe(1);
    await expect(unread.getAttribute('data-to')).resolves.toBe((3 / 5).toFixed(6));
    await expect(unread.locator('[data-gap-label]').textContent()).resolves.toBe(UNREAD_LABEL);
    const place = await across(page, `tessera-run [data-gap][data-from="${(2 / 5).toFixed(6)}"] rect.gap-unread`);
    expect(place.from).toBeCloseTo(2 / 5, 2);
    expect(place.to).toBeCloseTo(3 / 5, 2);
    await expect(page.locator('tessera-run [data-gap]').count()).resolves.toBe(runs.scout.answer?.coverage.gaps.length);
    // Whether Scout succeeded or failed its policy, its answer is incomplete, and the badge says so.
    const coverage = runs.scout.answer?.coverage;
    expect(coverage?.complete).toBe(false);
    await expect(page.locator('tessera-run .status').textContent()).resolves.toBe(VERDICT_LABELS[verdictOf(runs.scout.status, false)]);
    if (runs.scout.status === 'succeeded') await expect(page.locator('tessera-run .status').textContent()).resolves.toBe('succeeded, incomplete');
    // q3 was asked only of C (and its retry): its row is drawn over crm:vantage.
    expect(coverage?.missingQuestions).toContain('q3');
    const q3 = await across(page, 'tessera-run [data-question="q3"] rect[data-unanswered]');
    expect(q3.from).toBeCloseTo(2 / 5, 2);
    expect(q3.to).toBeCloseTo(3 / 5, 2);
    await expect(page.locator('tessera-run [data-question-item="q3"]').count()).resolves.toBe(1);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'scout');
  });

  it('catering: one product, quoted by Q, read in full', async () => {
    const page = await open(runs.catering.runId, 'succeeded');
    await screenshot(page, 'catering');
    const q = page.locator('tessera-run [data-subtask="Q"][data-state]');
    await expect(q.getAttribute('data-state')).resolves.toBe('ok');
    await expect(q.locator('rect[data-observed]').count()).resolves.toBe(1);
    await expect(page.locator('tessera-run [data-gap]').count()).resolves.toBe(0);
    expect(await axeViolations(page)).toEqual([]);
  });

  it('a run cancelled while the page watches it is redrawn as cancelled, without a reload', async () => {
    // Scout with deadlines far beyond C's 27 s search and no retries (as the cancellation e2e test
    // has it, and long enough for a loaded machine): C is still running when the run is cancelled.
    const scout = example('scout');
    const request: RunRequestInput = {
      ...scout,
      subtasks: scout.subtasks?.map((s) => ({ ...s, deadlineSeconds: 120 })),
      policy: { ...scout.policy, retry: { timed_out: 0, invalid: 0, empty: 0 } },
    };
    const runId = (await tessera.createRun(request)).runId;
    cancelledRunId = runId;
    const page = await open(runId, 'running');
    await waitUntil(tessera, runId, (run) => (run.progress.byState.ok ?? 0) >= 1);
    await tessera.cancelRun(runId);
    await page.locator('tessera-run[data-status="cancelled"]').waitFor({ timeout: 20_000 });
    await expect(page.locator('tessera-run .status').textContent()).resolves.toBe('cancelled');
    await expect(page.locator('tessera-run [data-subtask="C"][data-state="cancelled"] [data-state-label]').textContent()).resolves.toBe('cancelled');
    const unread = page.locator(`tessera-run [data-gap][data-category="unread"][data-from="${(2 / 5).toFixed(6)}"]`);
    await expect(unread.getAttribute('data-tip')).resolves.toContain('Not read: C ended cancelled.');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'cancelled');
  }, 120_000);

  it("lists the tenant's runs, newest first, and draws the one chosen", async () => {
    const page = await open(runs.tax.runId, 'succeeded');
    const rows = page.locator('#runs tbody tr');
    await rows.nth(3).waitFor();
    const listed = await rows.evaluateAll((trs) => trs.map((tr) => (tr as HTMLElement).dataset.runId));
    expect(new Set(listed)).toEqual(new Set([runs.tax.runId, runs.scout.runId, runs.catering.runId, cancelledRunId]));
    // Newest first: the cancelled run was created last.
    expect(listed[0]).toBe(cancelledRunId);
    // Each run's link is its address, and the page took the token out of its own.
    const hrefs = await page.locator('#runs tbody a').evaluateAll((links) => links.map((a) => a.getAttribute('href')));
    expect(hrefs).toEqual(listed.map((runId) => `#run=${encodeURIComponent(runId ?? '')}`));
    await expect(page.evaluate(() => location.hash)).resolves.toBe(`#run=${runs.tax.runId}`);
    await page.locator(`#runs tr[data-run-id="${runs.catering.runId}"] a`).click();
    await page.locator('tessera-run [data-subtask="Q"]').waitFor();
    await expect(page.evaluate(() => location.hash)).resolves.toBe(`#run=${runs.catering.runId}`);
    await expect(page.locator(`#runs tr[data-run-id="${runs.catering.runId}"] a`).getAttribute('aria-current')).resolves.toBe('true');
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'runs');

    // Another tab of the same browser opens a run by its address alone.
    const tab = await page.context().newPage();
    await tab.goto(`${cloud.apiUrl ?? ''}/#run=${encodeURIComponent(runs.scout.runId)}`);
    await tab.locator(`tessera-run[data-status="${runs.scout.status}"]`).waitFor();
    await expect(tab.locator('tessera-run').getAttribute('run-id')).resolves.toBe(runs.scout.runId);
    // And the browser's back button goes back to the run before.
    await page.goBack();
    await page.locator(`tessera-run[run-id="${runs.tax.runId}"][data-status="succeeded"]`).waitFor();
  });
});

import { fileURLToPath } from 'node:url';
import type { Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunResource } from '../../lib/contract';
import { AXIS_LABEL_METRICS } from '../../lib/web/labels';
import { VERDICT_LABELS } from '../../lib/web/geometry';
import { taxRun, ticketIds, ticketRun } from '../web/fixtures';
import { axeViolations, launchChromium, screenshot, type LaunchedBrowser } from './browser';

/**
 * `<tessera-run>` on its own in Chromium, drawing run resources set on it (`el.run`), so that
 * large universes (60, 1,000 and 100,000 tickets) are drawn without a cloud running them. What is
 * asserted is what a person sees: the rendered boxes of the labels, the badge's words and look,
 * and axe-core's verdict.
 */

let chromium: LaunchedBrowser;
let bundle: string;

beforeAll(async () => {
  const { build } = await import('esbuild');
  const entry = fileURLToPath(new URL('../../lib/web/index.ts', import.meta.url));
  [chromium, bundle] = await Promise.all([
    launchChromium(),
    build({ entryPoints: [entry], bundle: true, format: 'iife', target: 'es2022', write: false, logLevel: 'silent' }).then((r) => r.outputFiles[0]?.text ?? ''),
  ]);
});

afterAll(async () => {
  await chromium?.close();
});

const PAGE = `<!doctype html><html lang="en"><head><meta charset="utf-8"><title>tessera-run</title>
<style>body { font: 14px system-ui, sans-serif; margin: 0; } main { max-width: 1100px; margin: 0 auto; padding: .75rem 1rem; }</style>
</head><body><main><h1>One run</h1><tessera-run></tessera-run></main></body></html>`;

/** A page drawing `run`, once the component has drawn it. */
const draw = async (run: RunResource): Promise<Page> => {
  const page = await chromium.browser.newPage({ viewport: { width: 1200, height: 900 } });
  await page.setContent(PAGE);
  await page.addScriptTag({ content: bundle });
  await page.evaluate((resource) => {
    (document.querySelector('tessera-run') as HTMLElement & { run: unknown }).run = resource;
  }, run as unknown);
  await page.locator('tessera-run[data-verdict]').waitFor();
  return page;
};

interface Box {
  readonly text: string;
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The rendered boxes of the elements `selector` finds in the component. */
const boxes = (page: Page, selector: string): Promise<Box[]> =>
  page.locator(`tessera-run ${selector}`).evaluateAll((nodes) =>
    nodes.map((node) => {
      const r = node.getBoundingClientRect();
      // Only the label's own text, not its <title>.
      const text = [...node.childNodes]
        .filter((c) => c.nodeType === Node.TEXT_NODE)
        .map((c) => c.textContent)
        .join('');
      return { text, x: r.x, y: r.y, width: r.width, height: r.height };
    }),
  );

/** Pairs of boxes that overlap, as `a / b` texts (empty when none do). */
const overlapping = (list: readonly Box[]): string[] =>
  list.flatMap((a, i) =>
    list
      .slice(i + 1)
      .filter((b) => a.x < b.x + b.width && b.x < a.x + a.width && a.y < b.y + b.height && b.y < a.y + a.height)
      .map((b) => `${a.text} / ${b.text}`),
  );

/** The drawing's scale: its rendered width over its 960 units. */
const scaleOf = async (page: Page): Promise<number> => ((await page.locator('tessera-run svg[data-dimension]').boundingBox())?.width ?? 0) / 960;

/** Where a mark lies across the universe band, as fractions of the band's width. */
const across = async (page: Page, selector: string): Promise<{ from: number; to: number }> => {
  const band = await page.locator('tessera-run [data-universe]').boundingBox();
  const box = await page.locator(selector).first().boundingBox();
  if (!band || !box) throw new Error(`nothing drawn for ${selector}`);
  return { from: (box.x - band.x) / band.width, to: (box.x + box.width - band.x) / band.width };
};

/**
 * The axis at `count` tickets: labels where they fit and none overlapping (nor any gap label),
 * each no wider than the room the geometry kept for it, and the page axe-clean.
 */
const readableAxis = async (page: Page, expected: readonly string[]): Promise<void> => {
  const labels = await boxes(page, '[data-axis-label]');
  expect(labels.map((l) => l.text)).toEqual(expected);
  expect(overlapping(labels)).toEqual([]);
  expect(overlapping(await boxes(page, '[data-gap-label]'))).toEqual([]);
  const scale = await scaleOf(page);
  for (const label of labels) expect(label.width).toBeLessThanOrEqual(label.text.length * AXIS_LABEL_METRICS.charPx * scale);
  expect(await axeViolations(page)).toEqual([]);
};

describe('<tessera-run> drawing an incomplete answer', () => {
  // Four lanes of 15 tickets: B's helpdesk lost T-1017–T-1019 and nobody re-checked them; D timed
  // out, so its 15 tickets went unread and its question q4 has no answer.
  const ids = ticketIds(60);
  const incomplete = ticketRun(
    ids,
    4,
    [
      { lane: 1, ids: ['T-1017', 'T-1018', 'T-1019'], status: 'unchecked' },
      { lane: 3, ids: ids.slice(45), status: 'unchecked', kind: 'unread' },
    ],
    ['q4'],
  );

  it('badges a run that succeeded incomplete in other words and another look than a complete one', async () => {
    const page = await draw(incomplete);
    const badge = page.locator('tessera-run .status');
    await expect(badge.textContent()).resolves.toBe(VERDICT_LABELS['succeeded-incomplete']);
    await expect(page.locator('tessera-run').getAttribute('data-verdict')).resolves.toBe('succeeded-incomplete');
    const look = (p: Page) =>
      p.locator('tessera-run .status').evaluate((el) => {
        const style = getComputedStyle(el);
        return { color: style.color, border: style.borderTopStyle, background: style.backgroundColor };
      });
    const complete = await draw(taxRun());
    await expect(complete.locator('tessera-run .status').textContent()).resolves.toBe(VERDICT_LABELS.succeeded);
    const [mine, theirs] = await Promise.all([look(page), look(complete)]);
    expect(mine.border).toBe('dashed');
    expect(theirs.border).toBe('solid');
    expect(mine.color).not.toBe(theirs.color);
    expect(await axeViolations(page)).toEqual([]);
    await screenshot(page, 'viewer-incomplete');
  });

  it('draws the unanswered q4 as a row over D’s tickets, and lists it with the gaps by id', async () => {
    const page = await draw(incomplete);
    const row = page.locator('tessera-run [data-question="q4"]');
    await expect(row.getAttribute('aria-label')).resolves.toBe('Question q4: unanswered. Asked of D (timed out).');
    // D was assigned the last 15 of the 60 tickets: [45/60, 1) of the band.
    const place = await across(page, 'tessera-run [data-question="q4"] rect[data-unanswered]');
    expect(place.from).toBeCloseTo(45 / 60, 2);
    expect(place.to).toBeCloseTo(1, 2);
    await expect(page.locator('tessera-run [data-question-item="q4"]').textContent()).resolves.toContain('question q4: asked of D (timed out)');
    await expect(page.locator('tessera-run [data-gap-item="0"] [data-where]').textContent()).resolves.toBe('T-1017 – T-1019');
    await expect(page.locator('tessera-run [data-gap-item="1"] [data-where]').textContent()).resolves.toBe('T-1046 – T-1060');
    // Keyboard: the question's row is focusable and tells its words.
    await row.focus();
    await expect(page.locator('tessera-run .tip').textContent()).resolves.toContain('Question q4: unanswered.');
    expect(await axeViolations(page)).toEqual([]);
  });
});

describe('<tessera-run> keeps the ids axis readable', () => {
  it('60 tickets: every 5th labelled', async () => {
    const page = await draw(ticketRun(ticketIds(60), 4, [{ lane: 1, ids: ['T-1017', 'T-1018', 'T-1019'], status: 'unchecked' }]));
    await readableAxis(
      page,
      Array.from({ length: 12 }, (_, i) => `T-${1001 + 5 * i}`),
    );
    await screenshot(page, 'viewer-ids-60');
  });

  it('1,000 tickets: every 100th labelled, six gaps of every status named by id', async () => {
    const ids = ticketIds(1000);
    const run = ticketRun(
      ids,
      10,
      [
        { lane: 0, ids: ['T-1017', 'T-1018', 'T-1019'], status: 'unchecked' },
        { lane: 2, ids: ids.slice(240, 260), status: 'confirmed_empty' },
        { lane: 4, ids: ['T-1433', 'T-1436'], status: 'data_found' },
        { lane: 5, ids: ids.slice(590, 600), status: 'recheck_failed' },
        { lane: 6, ids: ['T-1602', 'T-1603', 'T-1604', 'T-1650'], status: 'source_unreachable' },
        { lane: 9, ids: ids.slice(900), status: 'unchecked', kind: 'unread' },
      ],
      ['q10'],
    );
    const page = await draw(run);
    await readableAxis(
      page,
      Array.from({ length: 10 }, (_, i) => `T-${1001 + 100 * i}`),
    );
    const listed = await page
      .locator('tessera-run [data-gap-item]')
      .evaluateAll((items) => items.map((i) => i.textContent?.replace(/\s+/g, ' ').split(' (')[0]));
    expect(listed).toEqual([
      'unchecked · 3 tickets: T-1017 – T-1019',
      're-checked empty · 20 tickets: T-1241 – T-1260',
      'data found · 2 tickets: T-1433, T-1436',
      're-check failed · 10 tickets: T-1591 – T-1600',
      're-check reached no source · 4 tickets: T-1602 – T-1604, T-1650',
      'unread · 100 tickets: T-1901 – T-2000',
    ]);
    await screenshot(page, 'viewer-ids-1000');
  });

  it('100,000 tickets: every 10,000th labelled, a scattered gap listed id by id', async () => {
    const ids = ticketIds(100_000, 6);
    const run = ticketRun(ids, 20, [
      { lane: 0, ids: Array.from({ length: 40 }, (_, i) => ids[i * 97]!), status: 'unchecked' },
      { lane: 7, ids: ids.slice(35_000, 35_400), status: 'confirmed_empty' },
      { lane: 12, ids: ids.slice(61_000, 61_003), status: 'data_found' },
      { lane: 19, ids: ids.slice(95_000), status: 'unchecked', kind: 'unread' },
    ]);
    const page = await draw(run);
    await readableAxis(
      page,
      Array.from({ length: 10 }, (_, i) => `T-${String(1 + 10_000 * i).padStart(6, '0')}`),
    );
    // No divider per cell: 100,000 of them would only grey the band.
    await expect(page.locator('tessera-run svg[data-dimension] > line').count()).resolves.toBeLessThan(10);
    const scattered = await page.locator('tessera-run [data-gap-item="0"] [data-where]').textContent();
    expect(scattered?.split(', ')).toHaveLength(40);
    expect(scattered?.startsWith('T-000001, T-000098, T-000195')).toBe(true);
    await expect(page.locator('tessera-run [data-gap-item="3"] [data-where]').textContent()).resolves.toBe('T-095001 – T-100000');
    await screenshot(page, 'viewer-ids-100000');
  });
});

describe('the synthesis of an answer', () => {
  const withSynthesis = (clean: boolean): RunResource => {
    const run = taxRun();
    return {
      ...run,
      answer: {
        ...run.answer!,
        synthesis: {
          by: clean ? 'model' : 'merge',
          findings: [{ id: 'A#1', subtaskId: 'A', questionIds: ['q1'], statement: 'Q1 holds 6 deductible transactions.', evidence: ['stmt-2025-01'] }],
          claims: [{ text: 'Six deductible transactions in Q1.', cites: clean ? ['A#1'] : ['A#9'], kind: 'finding' }],
          setAside: [],
          audit: clean
            ? { clean: true, findings: 1, cited: 1, setAside: 0, problems: [] }
            : {
                clean: false,
                findings: 1,
                cited: 0,
                setAside: 0,
                problems: [{ code: 'unknown_citation', claim: 0, findingId: 'A#9', message: 'claim 0 cites A#9, which no ok finding of this run has' }],
              },
          attempts: 2,
          levels: 1,
          ...(clean ? {} : { fallback: { reason: 'audit_failed' as const, message: 'the audit found 1 problem(s) after the repair' } }),
        },
      },
    };
  };
  const text = (page: Page, selector: string) => page.locator(`tessera-run ${selector}`).allInnerTexts();

  it('shows each claim with its citation, the finding’s evidence on demand, and a clean audit', async () => {
    const page = await draw(withSynthesis(true));
    expect(await text(page, '[data-claim] summary')).toEqual(['A#1']);
    expect(await page.locator('tessera-run [data-cite="A#1"] .meta').isVisible()).toBe(false);
    await page.locator('tessera-run [data-cite="A#1"] summary').click();
    expect(await text(page, '[data-cite="A#1"] .meta')).toEqual(['Q1 holds 6 deductible transactions. (subtask A; evidence stmt-2025-01)']);
    expect(await text(page, '[data-audit]')).toEqual(['Audit: clean (1 findings, 1 cited, 0 set aside)']);
    await page.close();
  });

  it('shows the audit’s problems and why the merge answers', async () => {
    const page = await draw(withSynthesis(false));
    expect(await text(page, '[data-cite="A#9"]')).toEqual(['A#9']);
    expect(await text(page, '[data-problem]')).toEqual(['claim 0 cites A#9, which no ok finding of this run has']);
    expect(await text(page, '[data-fallback]')).toEqual(['The merge answers: the audit found 1 problem(s) after the repair.']);
    await page.close();
  });
});

import { describe, expect, it } from 'vitest';
import { gapText, overlapText, pictureSummary, subtaskText } from '../../lib/web/describe';
import { gapCategory, mergeSpans, pictureOf } from '../../lib/web/geometry';
import { scoutRun, taxRun } from './fixtures';

// 2025 has 365 days. Day offsets from 1 January: 1 April = 31+28+31 = 90; 28 June = 90+30+31+27 = 178;
// 1 July = 181; 1 October = 273.
const day = (offset: number) => offset / 365;

describe('the picture of a time universe (tax 2025)', () => {
  const picture = pictureOf(taxRun());

  it('draws the June gap at 28 June – 30 June, as re-checked empty, left by B and re-checked by B.g1', () => {
    expect(picture.gaps).toHaveLength(1);
    const [gap] = picture.gaps;
    expect(gap?.category).toBe('rechecked-empty');
    expect(gap?.label).toBe('re-checked empty');
    expect(gap?.spans).toHaveLength(1);
    expect(gap?.spans[0]?.from).toBeCloseTo(day(178), 12);
    expect(gap?.spans[0]?.to).toBeCloseTo(day(181), 12);
    expect(gap?.where).toBe('28 Jun 2025 – 30 Jun 2025');
    expect(gapText(gap!)).toContain('re-checked against transaction-feed (B.g1): no records');
  });

  it("draws B's assignment (April–June) and, over it, its data up to 27 June", () => {
    const b = picture.subtasks.find((s) => s.id === 'B');
    expect(b?.assigned[0]?.from).toBeCloseTo(day(90), 12);
    expect(b?.assigned[0]?.to).toBeCloseTo(day(181), 12);
    expect(b?.observed[0]?.from).toBeCloseTo(day(90), 12);
    // An inclusive last day of 27 June ends where 28 June begins.
    expect(b?.observed[0]?.to).toBeCloseTo(day(178), 12);
    expect(b?.observedText).toBe('1 Apr 2025 – 27 Jun 2025 (18 records)');
  });

  it('draws the re-check B.g1 with no data, its state and its reason', () => {
    const g = picture.subtasks.find((s) => s.id === 'B.g1');
    expect(g?.observed).toEqual([]);
    expect(g?.stateLabel).toBe('empty');
    expect(g?.lineage).toBe('re-check of B');
    const text = subtaskText(g!);
    expect(text).toContain('Subtask B.g1 (transaction-feed, round 2, re-check of B): empty.');
    expect(text).toContain('Observed: no records.');
    expect(text).toContain('Usage: 0 model calls, estimated cost 0.');
    expect(text).toContain('Reason: no records in 1 source reached.');
  });

  it('marks every month start, January at 0 and July at 181 days', () => {
    expect(picture.ticks.map((t) => t.label)).toEqual(['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec']);
    expect(picture.ticks[0]?.at).toBe(0);
    expect(picture.ticks[6]?.at).toBeCloseTo(day(181), 12);
    expect(picture.universeText).toBe('1 Jan 2025 – 31 Dec 2025');
    expect(picture.complete).toBe(true);
  });
});

describe('the picture of an ids universe (Scout)', () => {
  const picture = pictureOf(scoutRun());

  it('lays the five sources out as five equal cells in universe order', () => {
    expect(picture.sections.map((s) => s.label)).toEqual(['web:pricing', 'web:packaging', 'crm:vantage', 'reviews:g2', 'news:vantage']);
    expect(picture.sections[2]).toMatchObject({ from: 0.4, to: 0.6 });
  });

  it('draws q3/C as timed out with nothing observed, its retry timed out with late evidence, and crm:vantage as unread', () => {
    const c = picture.subtasks.find((s) => s.id === 'C');
    expect(c?.stateLabel).toBe('timed out');
    expect(c?.observed).toEqual([]);
    expect(c?.assigned).toEqual([{ from: 0.4, to: 0.6 }]);
    const retry = picture.subtasks.find((s) => s.id === 'C.r2');
    expect(retry?.lineage).toBe('retry 2 of C');
    expect(retry?.late).toBe(1);
    const [gap] = picture.gaps;
    expect(gap?.category).toBe('unread');
    expect(gap?.spans).toEqual([{ from: 0.4, to: 0.6 }]);
    expect(gap?.detail).toBe('not read: C.r2 ended timed out');
    expect(picture.complete).toBe(false);
  });
});

describe('gap categories and spans', () => {
  it('tells the four statuses apart: unread wins over the status of an unread gap', () => {
    expect(gapCategory({ kind: 'observed', status: 'confirmed_empty' })).toBe('rechecked-empty');
    expect(gapCategory({ kind: 'observed', status: 'data_found' })).toBe('data-found');
    expect(gapCategory({ kind: 'observed', status: 'unchecked' })).toBe('unchecked');
    expect(gapCategory({ kind: 'observed', status: 'recheck_failed' })).toBe('unchecked');
    expect(gapCategory({ kind: 'unread', status: 'unchecked' })).toBe('unread');
  });

  it('places an overlap of March (days 59 to 90) with the subtasks that both read it', () => {
    const run = taxRun();
    const overlap = { from: '2025-03-01', toExclusive: '2025-04-01', subtaskIds: ['A', 'B'] };
    const [mark] = pictureOf({ ...run, answer: { ...run.answer!, coverage: { ...run.answer!.coverage, overlaps: [overlap] } } }).overlaps;
    expect(mark?.spans[0]?.from).toBeCloseTo(day(59), 12);
    expect(mark?.spans[0]?.to).toBeCloseTo(day(90), 12);
    expect(overlapText(mark!)).toBe('Overlap 1 Mar 2025 – 31 Mar 2025: read by A and B.');
  });

  it('merges touching spans and drops empty ones', () => {
    expect(mergeSpans([{ from: 0.4, to: 0.6 }, { from: 0.2, to: 0.4 }, { from: 0.8, to: 0.8 }])).toEqual([{ from: 0.2, to: 0.6 }]);
  });

  it('draws a paths universe as one section per file, lines spread across it', () => {
    const run = taxRun();
    const picture = pictureOf({
      ...run,
      universe: { dimension: 'paths', files: [{ path: 'a.ts', lines: [[1, 100]] }, { path: 'b.ts' }] },
      subtasks: [{ ...run.subtasks[0]!, assigned: { files: [{ path: 'a.ts', lines: [[1, 100]] }] }, observed: { files: [{ path: 'a.ts', lines: [[1, 50]] }], recordCount: 1 } }],
      answer: { ...run.answer!, coverage: { ...run.answer!.coverage, gaps: [{ files: [{ path: 'a.ts', lines: [[51, 100]] }], kind: 'observed', status: 'unchecked' }] } },
    });
    // a.ts is the first half of the axis, 100 lines long: lines 1–50 are its first quarter of the axis.
    expect(picture.sections).toEqual([{ from: 0, to: 0.5, label: 'a.ts' }, { from: 0.5, to: 1, label: 'b.ts' }]);
    expect(picture.subtasks[0]?.observed).toEqual([{ from: 0, to: 0.25 }]);
    expect(picture.gaps[0]?.spans).toEqual([{ from: 0.25, to: 0.5 }]);
    expect(picture.gaps[0]?.where).toBe('a.ts:51-100');
  });
});

describe('a large run whose resource carries only its first page of subtasks', () => {
  // The tax run has 5 subtasks; as a page, its resource carries the first 2 of a run of 1,500.
  const full = taxRun();
  const paged = { ...full, subtasks: full.subtasks.slice(0, 2), subtasksPage: { returned: 2, total: 1500, next: '/runs/r/subtasks?cursor=c' } };

  it('draws the lanes it has and counts the run by its total', () => {
    const picture = pictureOf(paged);
    expect(picture.subtasks.map((s) => s.id)).toEqual(full.subtasks.slice(0, 2).map((s) => s.id));
    expect(picture.subtaskTotal).toBe(1500);
    expect(pictureSummary(picture)).toContain('by 1,500 subtasks, run succeeded');
    expect(pictureSummary(picture)).toContain('Lanes drawn for the first 2 of 1,500 subtasks, in id order.');
  });

  it('says nothing about lanes when every subtask is drawn', () => {
    const picture = pictureOf(full);
    expect(picture.subtaskTotal).toBe(5);
    expect(pictureSummary(picture)).toContain('by 5 subtasks, run succeeded');
    expect(pictureSummary(picture)).not.toContain('Lanes drawn');
  });
});

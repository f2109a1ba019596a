import { describe, expect, it } from 'vitest';
import { GapStatus, RunStatus } from '../../lib/contract';
import { gapText, overlapText, pictureSummary, questionText, subtaskText } from '../../lib/web/describe';
import { GAP_STATUSES, gapCategory, gapLabel, mergeSpans, pictureOf, UNREAD_LABEL, VERDICT_LABELS, verdictOf } from '../../lib/web/geometry';
import { scoutRun, taxRun, ticketIds, ticketRun } from './fixtures';

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

  it('badges the run as succeeded but incomplete, not as a plain success', () => {
    expect(picture.status).toBe('succeeded');
    expect(picture.verdict).toBe('succeeded-incomplete');
    expect(picture.verdictLabel).toBe('succeeded, incomplete');
    expect(pictureOf(taxRun()).verdictLabel).toBe('succeeded, complete');
    expect(pictureSummary(picture)).toContain('run succeeded, incomplete: 1 gap (crm:vantage: unread); unanswered: q3.');
  });

  it('draws the unanswered q3 over crm:vantage, where C and its retry were assigned', () => {
    expect(picture.missingQuestions).toEqual([{ id: 'q3', spans: [{ from: 0.4, to: 0.6 }], askedOf: ['C (timed out)', 'C.r2 (timed out)'] }]);
    expect(questionText(picture.missingQuestions[0]!)).toBe('Question q3: unanswered.\nAsked of C (timed out) and C.r2 (timed out).');
  });
});

describe('the badge', () => {
  it('calls only a succeeded run with complete coverage a success', () => {
    expect(RunStatus.options.map((status) => verdictOf(status, true))).toEqual(['running', 'succeeded', 'failed', 'cancelled']);
    expect(verdictOf('succeeded', false)).toBe('succeeded-incomplete');
    // No coverage recorded is no proof of completeness.
    expect(verdictOf('succeeded', null)).toBe('succeeded-incomplete');
    expect(new Set(Object.values(VERDICT_LABELS)).size).toBe(5);
  });
});

describe('a backlog of 60 tickets whose helpdesk lost three between pages', () => {
  // Four lanes of 15: A T-1001–T-1015, B T-1016–T-1030, C T-1031–T-1045, D T-1046–T-1060.
  // B's source dropped T-1017, T-1018 and T-1019; D timed out, so q4 has no answer.
  const ids = ticketIds(60);
  const run = ticketRun(
    ids,
    4,
    [
      { lane: 1, ids: ['T-1017', 'T-1018', 'T-1019'], status: 'unchecked' },
      { lane: 3, ids: ids.slice(45), status: 'unchecked', kind: 'unread' },
    ],
    ['q4'],
  );
  const picture = pictureOf(run);

  it('names the dropped tickets as one range and counts them', () => {
    const [dropped, unread] = picture.gaps;
    expect(dropped?.where).toBe('T-1017 – T-1019');
    expect(dropped?.size).toBe('3 tickets');
    expect(dropped?.label).toBe('unchecked');
    // Cells 16, 17 and 18 of 60 (from 0).
    expect(dropped?.spans).toEqual([{ from: 16 / 60, to: 19 / 60 }]);
    expect(unread?.whereInFull).toBe('T-1046 – T-1060');
    expect(unread?.size).toBe('15 tickets');
  });

  it("draws B's observation as two stretches around the three it lost", () => {
    const b = picture.subtasks.find((s) => s.id === 'B');
    expect(b?.observed).toEqual([
      { from: 15 / 60, to: 16 / 60 },
      { from: 19 / 60, to: 30 / 60 },
    ]);
    expect(b?.observedText).toBe('T-1016, T-1020 – T-1030 (12 records)');
  });

  it('draws q4 where D was assigned', () => {
    expect(picture.missingQuestions).toEqual([{ id: 'q4', spans: [{ from: 45 / 60, to: 1 }], askedOf: ['D (timed out)'] }]);
    expect(picture.verdictLabel).toBe('succeeded, incomplete');
  });
});

describe('a backlog of 100,000 tickets', () => {
  const ids = ticketIds(100_000, 6);
  // Every 7th ticket of the first 2,100 of lane A (300 of them), and the block T-050001–T-050250 of lane K.
  const scattered = Array.from({ length: 300 }, (_, i) => ids[i * 7]!);
  const run = ticketRun(ids, 20, [
    { lane: 0, ids: scattered, status: 'unchecked' },
    { lane: 10, ids: ids.slice(50_000, 50_250), status: 'confirmed_empty' },
  ]);
  const picture = pictureOf(run);

  it('lists a scattered gap id by id, up to 200 of them, then counts the rest', () => {
    const [gap] = picture.gaps;
    expect(gap?.size).toBe('300 tickets');
    expect(gap?.whereInFull.startsWith('T-000001, T-000008, T-000015, ')).toBe(true);
    expect(gap?.whereInFull.endsWith(', T-001394 and 100 more')).toBe(true);
    expect(gap?.where).toBe('T-000001, T-000008, T-000015, T-000022, T-000029 and 295 more');
  });

  it('writes a block of 250 as one range, at 50,000/100,000 of the axis', () => {
    const block = picture.gaps[1];
    expect(block?.whereInFull).toBe('T-050001 – T-050250');
    expect(block?.spans).toEqual([{ from: 0.5, to: 0.5025 }]);
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

  it('says every gap status of the contract in words of its own', () => {
    // GAP_STATUSES is a record over the contract's enum, so tsc already refuses a status without
    // words; this checks that no two statuses (nor an unread gap) share them.
    expect(Object.keys(GAP_STATUSES).sort()).toEqual([...GapStatus.options].sort());
    const words = [...GapStatus.options.map((status) => gapLabel({ kind: 'observed', status })), UNREAD_LABEL];
    expect(new Set(words).size).toBe(GapStatus.options.length + 1);
    expect(gapLabel({ kind: 'observed', status: 'recheck_failed' })).toBe('re-check failed');
    expect(gapLabel({ kind: 'assignment', status: 'source_unreachable' })).toBe('re-check reached no source');
    expect(gapLabel({ kind: 'observed', status: 'unconfirmed_empty' })).toBe('re-read, unconfirmed');
    expect(gapLabel({ kind: 'unread', status: 'unchecked' })).toBe('unread');
  });

  it('says how a re-check ended, for each status', () => {
    const run = ticketRun(ticketIds(10), 2, [
      { lane: 0, ids: ['T-1002'], status: 'recheck_failed' },
      { lane: 0, ids: ['T-1004'], status: 'source_unreachable' },
      { lane: 1, ids: ['T-1007'], status: 'data_found' },
      { lane: 1, ids: ['T-1009'], status: 'unconfirmed_empty' },
    ]);
    const details = pictureOf(run).gaps.map((g) => g.detail);
    expect(details).toEqual([
      "A's data stopped short of its assignment; re-check against ticket-archive failed",
      "A's data stopped short of its assignment; re-check against ticket-archive reached no source",
      "B's data stopped short of its assignment; re-checked against ticket-archive: 0 records found and included",
      "B's data stopped short of its assignment; re-read from ticket-archive, which again returned nothing; no other source confirmed it",
    ]);
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
    expect(
      mergeSpans([
        { from: 0.4, to: 0.6 },
        { from: 0.2, to: 0.4 },
        { from: 0.8, to: 0.8 },
      ]),
    ).toEqual([{ from: 0.2, to: 0.6 }]);
  });

  it('draws a paths universe as one section per file, lines spread across it', () => {
    const run = taxRun();
    const picture = pictureOf({
      ...run,
      universe: { dimension: 'paths', files: [{ path: 'a.ts', lines: [[1, 100]] }, { path: 'b.ts' }] },
      subtasks: [
        {
          ...run.subtasks[0]!,
          assigned: { files: [{ path: 'a.ts', lines: [[1, 100]] }] },
          observed: { files: [{ path: 'a.ts', lines: [[1, 50]] }], recordCount: 1 },
        },
      ],
      answer: {
        ...run.answer!,
        coverage: { ...run.answer!.coverage, gaps: [{ files: [{ path: 'a.ts', lines: [[51, 100]] }], kind: 'observed', status: 'unchecked' }] },
      },
    });
    // a.ts is the first half of the axis, 100 lines long: lines 1–50 are its first quarter of the axis.
    expect(picture.sections).toEqual([
      { from: 0, to: 0.5, label: 'a.ts' },
      { from: 0.5, to: 1, label: 'b.ts' },
    ]);
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

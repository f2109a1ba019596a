import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  AXIS_LABEL_METRICS,
  fitSectionLabels,
  follows,
  idRuns,
  idsText,
  placeHangingLabels,
  shorten,
  strides,
  textUnits,
  type AxisLabel,
  type LabelledSpan,
} from '../../lib/web/labels';
import { ticketIds } from './fixtures';

/** Equal cells in order, one per label, as the ids and paths axes lay them out. */
const cells = (labels: readonly string[]): LabelledSpan[] => labels.map((label, i) => ({ from: i / labels.length, to: (i + 1) / labels.length, label }));

/** The axis of the drawing (960 − 170 − 110). */
const AXIS = 680;

describe('text widths', () => {
  it('counts one advance per character and two for a wide one', () => {
    expect(textUnits('T-1001')).toBe(6);
    expect(textUnits('東京')).toBe(4);
    expect(textUnits('')).toBe(0);
  });

  it('shortens with an ellipsis, keeping the start of an id or the end of a path', () => {
    expect(shorten('T-1001', 6)).toBe('T-1001');
    expect(shorten('T-1001', 4)).toBe('T-1…');
    expect(shorten('lib/web/geometry.ts', 12, 'end')).toBe('…geometry.ts');
    // '東' is two advances: with the ellipsis, 4 advances hold only one of them.
    expect(shorten('東京都', 4)).toBe('東…');
  });

  it('steps strides 1, 2, 5, 10, … and ends at the count itself', () => {
    expect(strides(60)).toEqual([1, 2, 5, 10, 20, 50, 60]);
    expect(strides(10)).toEqual([1, 2, 5, 10]);
    expect(strides(1)).toEqual([1]);
  });
});

describe('the labels of an ids axis', () => {
  it('60 tickets: every 5th id, whole (cells of 11.3 px; a label needs 2 + 6 × 7 + 8 = 52 px)', () => {
    const labels = fitSectionLabels(cells(ticketIds(60)), AXIS);
    expect(labels.map((l) => l.text)).toEqual([
      'T-1001',
      'T-1006',
      'T-1011',
      'T-1016',
      'T-1021',
      'T-1026',
      'T-1031',
      'T-1036',
      'T-1041',
      'T-1046',
      'T-1051',
      'T-1056',
    ]);
    expect(labels[0]).toEqual({ index: 0, from: 0, to: 44 / 680, text: 'T-1001', title: 'T-1001' });
    // 5 cells are 56.7 px: the next label starts 12.7 px after this one ends.
    expect(labels[1]?.from).toBeCloseTo(5 / 60, 12);
  });

  it('1,000 tickets: every 100th (cells of 0.68 px; 52 px needs 77 of them, and 100 is the next stride)', () => {
    const labels = fitSectionLabels(cells(ticketIds(1000)), AXIS);
    expect(labels.map((l) => l.index)).toEqual([0, 100, 200, 300, 400, 500, 600, 700, 800, 900]);
    expect(labels.map((l) => l.text).slice(0, 3)).toEqual(['T-1001', 'T-1101', 'T-1201']);
  });

  it('100,000 tickets: every 10,000th (labels of 8 characters need 66 px, 9,706 cells of 0.0068 px)', () => {
    const labels = fitSectionLabels(cells(ticketIds(100_000, 6)), AXIS);
    expect(labels.map((l) => l.text)).toEqual([
      'T-000001',
      'T-010001',
      'T-020001',
      'T-030001',
      'T-040001',
      'T-050001',
      'T-060001',
      'T-070001',
      'T-080001',
      'T-090001',
    ]);
    expect(labels[9]?.to).toBeCloseTo(0.9 + 58 / 680, 12);
  });

  it('five sources: every cell (136 px) holds its whole label', () => {
    const sources = ['web:pricing', 'web:packaging', 'crm:vantage', 'reviews:g2', 'news:vantage'];
    expect(fitSectionLabels(cells(sources), AXIS).map((l) => l.text)).toEqual(sources);
  });

  it('three long paths: each shortened to its section (226.7 px hold 30 characters), keeping the file name', () => {
    const path = 'packages/service/src/handlers/reconcile/coverage-statement.ts';
    const labels = fitSectionLabels(cells([path, 'a.ts', 'b.ts']), AXIS, AXIS_LABEL_METRICS, 'end');
    // 226.7 − 8 − 2 px hold 30 advances: the ellipsis and the path's last 29 characters.
    expect(labels.map((l) => l.text)).toEqual(['…concile/coverage-statement.ts', 'a.ts', 'b.ts']);
  });

  it('one long id among 60 widens the stride for all of them', () => {
    const ids = ticketIds(60);
    ids[30] = 'T-1031-escalated-to-legal'; // 25 characters: 2 + 175 + 8 = 185 px, 16.3 cells: stride 20
    const labels = fitSectionLabels(cells(ids), AXIS);
    expect(labels.map((l) => l.index)).toEqual([0, 20, 40]);
  });

  const noOverlap = (labels: readonly AxisLabel[], axisPx: number): void => {
    for (const [a, b] of labels.slice(1).map((label, i) => [labels[i]!, label] as const)) {
      expect(a.to + AXIS_LABEL_METRICS.gapPx / axisPx).toBeLessThanOrEqual(b.from + 1e-9);
    }
  };

  it('never lets two labels touch, nor one run past the end, for any set of ids and any width', () => {
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }), { minLength: 1, maxLength: 3000 }),
        fc.integer({ min: 100, max: 2000 }),
        (ids, axisPx) => {
          const labels = fitSectionLabels(cells(ids), axisPx);
          noOverlap(labels, axisPx);
          for (const label of labels) {
            expect(label.from).toBeGreaterThanOrEqual(0);
            expect(label.to).toBeLessThanOrEqual(1 + 1e-9);
            expect(label.title).toBe(ids[label.index]);
            expect(label.text === label.title || label.text.endsWith('…')).toBe(true);
          }
          // The first label always fits: no label is drawn wider than the axis.
          expect(labels[0]?.index).toBe(0);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('labels every id when every cell holds its whole label', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 40 }), (count) => {
        // T-1001 … needs 2 + 42 + 8 = 52 px: give each of `count` cells 52 px.
        expect(fitSectionLabels(cells(ticketIds(count)), 52 * count)).toHaveLength(count);
      }),
    );
  });
});

describe('labels hung under gaps', () => {
  it("puts a label that would touch its neighbour's in the second row, and leaves out one that fits in neither", () => {
    // 'data found' is 10 × 7.5 = 75 px wide: centred on 100 it spans 62.5–137.5, on 150 112.5–187.5.
    const placed = placeHangingLabels(
      [
        { centrePx: 100, text: 'data found' },
        { centrePx: 150, text: 'data found' },
        { centrePx: 160, text: 'data found' },
      ],
      AXIS,
    );
    expect(placed).toEqual([{ row: 0, fromPx: 62.5, toPx: 137.5 }, { row: 1, fromPx: 112.5, toPx: 187.5 }, undefined]);
  });

  it('keeps leader lines off the labels above them', () => {
    // A leader from 140 to the second row would cross the first label (62.5–137.5, kept 4 px clear).
    expect(
      placeHangingLabels(
        [
          { centrePx: 100, text: 'data found' },
          { centrePx: 140, text: 'data found' },
        ],
        AXIS,
      )[1],
    ).toBeUndefined();
    // 'x' (7.5 px) centred on 152 would sit on the leader line at 150 that runs down to the second row.
    const placed = placeHangingLabels(
      [
        { centrePx: 100, text: 'data found' },
        { centrePx: 150, text: 'data found' },
        { centrePx: 152, text: 'x' },
      ],
      AXIS,
    );
    expect(placed[2]).toBeUndefined();
  });

  it('pushes a label at either end inside the axis', () => {
    // 'unread' is 45 px: centred on 675 it would end at 697.5, so it ends at 680; on 5 it starts at 0.
    expect(placeHangingLabels([{ centrePx: 675, text: 'unread' }], AXIS)).toEqual([{ row: 0, fromPx: 635, toPx: 680 }]);
    expect(placeHangingLabels([{ centrePx: 5, text: 'unread' }], AXIS)).toEqual([{ row: 0, fromPx: 0, toPx: 45 }]);
  });

  it('never overlaps two labels in a row, nor runs a leader line through a label above it', () => {
    const label = fc.record({ centrePx: fc.double({ min: 0, max: AXIS, noNaN: true }), text: fc.string({ minLength: 1, maxLength: 30 }) });
    fc.assert(
      fc.property(fc.array(label, { maxLength: 60 }), fc.integer({ min: 1, max: 3 }), (labels, rows) => {
        const placed = placeHangingLabels(labels, AXIS, rows);
        placed.forEach((a, i) => {
          if (!a) return;
          expect(a.row).toBeLessThan(rows);
          expect(a.fromPx >= 0 && a.toPx <= AXIS + 1e-9).toBe(true);
          placed.forEach((b, j) => {
            if (!b || j === i) return;
            if (b.row === a.row) expect(a.toPx < b.fromPx || b.toPx < a.fromPx).toBe(true);
            // a's leader line runs from the gap down through every row above a's own.
            const x = labels[i]!.centrePx;
            if (b.row < a.row) expect(x < b.fromPx || x > b.toPx).toBe(true);
          });
        });
      }),
    );
  });
});

describe('ids written as ranges', () => {
  it('writes three or more consecutive ids as a range, two as two', () => {
    expect(idsText(['T-7', 'T-8', 'T-9', 'T-12', 'T-13'])).toBe('T-7 – T-9, T-12, T-13');
    expect(idsText(['T-0099', 'T-0100', 'T-0101'])).toBe('T-0099 – T-0101');
    expect(idsText(['T-9', 'T-10', 'T-11'])).toBe('T-9 – T-11');
    expect(idsText(['a1b', 'a2b', 'a3b'])).toBe('a1b – a3b');
    expect(idsText(['web:pricing', 'web:packaging'])).toBe('web:pricing, web:packaging');
  });

  it('does not join ids whose numbers are written differently or do not follow', () => {
    expect(follows('T-009', 'T-10')).toBe(false);
    expect(follows('T-09', 'T-10')).toBe(true);
    expect(follows('A-1', 'B-2')).toBe(false);
    expect(follows('T-1', 'T-3')).toBe(false);
    expect(follows('T-99999999999999999999', 'T-100000000000000000000')).toBe(true);
  });

  it('counts the ids left out after the first items', () => {
    // Items: T-1 – T-5 (5 ids), T-7, T-9, T-11, T-13, then T-15 and T-17 – T-20 (1 + 4 ids).
    const ids = ['T-1', 'T-2', 'T-3', 'T-4', 'T-5', 'T-7', 'T-9', 'T-11', 'T-13', 'T-15', 'T-17', 'T-18', 'T-19', 'T-20'];
    expect(idsText(ids)).toBe('T-1 – T-5, T-7, T-9, T-11, T-13 and 5 more');
  });

  it('splits any sorted set of numbered ids into runs that hold each id once', () => {
    fc.assert(
      fc.property(fc.uniqueArray(fc.integer({ min: 0, max: 500 }), { minLength: 1, maxLength: 200 }), (numbers) => {
        const sorted = [...numbers].sort((a, b) => a - b);
        const runs = idRuns(sorted.map((n) => `T-${n}`));
        expect(runs.reduce((sum, run) => sum + run.count, 0)).toBe(sorted.length);
        for (const run of runs) expect(Number(run.last.slice(2)) - Number(run.first.slice(2))).toBe(run.count - 1);
        // Runs are maximal: no run's last id is followed by the next run's first.
        for (let i = 1; i < runs.length; i += 1) expect(follows(runs[i - 1]!.last, runs[i]!.first)).toBe(false);
      }),
    );
  });
});

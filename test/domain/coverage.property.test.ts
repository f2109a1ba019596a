import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { Outcome } from '../../lib/contract';
import { buildCoverage, DAY_MS, formatTimePoint, DATE_FORMAT, regionOf, timeAlgebra, type TimeSet } from '../../lib/domain';
import { emptyTime, ended, manifestOf, okTime, quarterSubtask } from './fixtures';

const START = Date.UTC(2025, 0, 1);
const day = (n: number): string => formatTimePoint(START + n * DAY_MS, DATE_FORMAT);
const LENGTH = 60;

/** What a partition's subtask did: read some days of it, or ended without reading. */
const fate = fc.oneof(
  fc.record({ kind: fc.constant('ok' as const), skipStart: fc.nat(4), skipEnd: fc.nat(4) }),
  fc.constantFrom('timed_out', 'invalid', 'cancelled', 'unreachable', 'empty', 'missing').map((kind) => ({ kind, skipStart: 0, skipEnd: 0 })),
);

/** Cut points inside [0, LENGTH) days, a fate per piece, and optionally a piece left unassigned. */
const scenario = fc.record({
  cuts: fc.uniqueArray(fc.integer({ min: 1, max: LENGTH - 1 }), { maxLength: 6 }).map((cuts) => cuts.sort((a, b) => a - b)),
  fates: fc.array(fate, { minLength: 7, maxLength: 7 }),
  unassigned: fc.option(fc.nat(6), { nil: undefined }),
});

describe('coverage over random manifests and outcomes', () => {
  it('lists as gaps every day no ok data covers, and is complete exactly when nothing is unsettled or degraded', () => {
    fc.assert(
      fc.property(scenario, ({ cuts, fates, unassigned }) => {
        const bounds = [0, ...cuts, LENGTH];
        const pieces = bounds.slice(1).map((end, i) => ({ id: `P${i}`, start: bounds[i] as number, end }));
        const assigned = pieces.filter((_, i) => i !== unassigned || pieces.length === 1);
        const manifest = manifestOf({
          universe: { dimension: 'time', from: day(0), toExclusive: day(LENGTH) },
          subtasks: assigned.map((p) => quarterSubtask(p.id, day(p.start), day(p.end))),
          questions: [{ id: 'q1' }],
        });
        const outcomes: Outcome[] = [];
        const read: TimeSet[] = [];
        assigned.forEach((p, i) => {
          const f = fates[i] ?? { kind: 'ok', skipStart: 0, skipEnd: 0 };
          if (f.kind === 'ok') {
            const first = Math.min(p.start + f.skipStart, p.end - 1);
            const last = Math.max(first, p.end - 1 - f.skipEnd);
            outcomes.push(okTime(p.id, day(first), day(last), 1));
            read.push(timeAlgebra.normalise({ from: day(first), toExclusive: day(last + 1) }));
          } else if (f.kind === 'unreachable' || f.kind === 'empty') outcomes.push(emptyTime(p.id, f.kind === 'empty' ? 1 : 0));
          else if (f.kind !== 'missing') outcomes.push(ended(p.id, f.kind as 'timed_out' | 'invalid' | 'cancelled'));
        });

        const coverage = buildCoverage(manifest, outcomes);

        const gapSets = coverage.gaps.map((gap) => timeAlgebra.normalise(regionOf(gap)));
        const nothing: TimeSet = { format: DATE_FORMAT, bounds: [] };
        const covered = [...read, ...gapSets].reduce((all, set) => timeAlgebra.union(all, set), nothing);
        const universe = timeAlgebra.normalise(manifest.universe);
        // Every day of the universe is either read by an ok subtask or listed as a gap.
        expect(timeAlgebra.describe(timeAlgebra.difference(universe, covered), 'exact')).toBe('nothing');
        // …and no gap claims a day that ok data covers.
        for (const gap of gapSets) for (const ok of read) expect(timeAlgebra.overlaps(gap, ok)).toBe(false);
        const unsettled = coverage.gaps.some((g) => g.status !== 'confirmed_empty' && g.status !== 'data_found');
        expect(coverage.complete).toBe(!unsettled && coverage.degradedReason.length === 0 && coverage.missingQuestions.length === 0);
        expect(coverage.statement.includes('no gaps')).toBe(coverage.gaps.length === 0);
      }),
      { numRuns: 400 },
    );
  });
});

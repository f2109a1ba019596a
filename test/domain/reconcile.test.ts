import { describe, expect, it } from 'vitest';
import { buildCoverage, decideStatus, reconcile } from '../../lib/domain';
import { ended, fullQuarters, manifestOf, okTime, outcome, quarterSubtask, TAX_YEAR, taxManifest } from './fixtures';

describe('reconcile: the manifest against the outcomes', () => {
  it('catches the March overlap in a hand-edited manifest that bypassed the planner, and fails the run', () => {
    const manifest = manifestOf({
      universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2025-07-01' },
      subtasks: [quarterSubtask('A', '2025-01-01', '2025-04-01'), quarterSubtask('B', '2025-03-01', '2025-07-01')],
      policy: { onRequiredGap: 'degrade' },
    });
    const outcomes = [okTime('A', '2025-01-01', '2025-03-31', 190), okTime('B', '2025-03-01', '2025-06-30', 260)];
    const reconciliation = reconcile(manifest, outcomes);
    const coverage = buildCoverage(manifest, outcomes, reconciliation);

    expect(reconciliation.problems).toEqual([
      {
        code: 'assignment_overlap',
        path: 'subtasks.1.assigned.from',
        subtaskIds: ['A', 'B'],
        from: '2025-03-01',
        toExclusive: '2025-04-01',
        message: 'subtasks A and B both cover 2025-03-01..2025-04-01',
      },
    ]);
    expect(coverage).toMatchObject({
      complete: false,
      degradedReason: ['A+B:assignment_overlap'],
      overlaps: [{ from: '2025-03-01', toExclusive: '2025-04-01', subtaskIds: ['A', 'B'] }],
    });
    expect(coverage.statement).toBe('Coverage: 2025-01-01 to 2025-06-30, two partitions, one overlap (2025-03-01 to 2025-03-31: A and B), no gaps.');
    expect(decideStatus(manifest, coverage, reconciliation).status).toBe('failed');
  });

  it('names a subtask without an outcome, an outcome nobody dispatched and a second outcome', () => {
    const manifest = taxManifest();
    const outcomes = [
      ...fullQuarters().filter((o) => o.subtaskId !== 'C'),
      okTime('Z', '2025-01-01', '2025-01-02', 1),
      okTime('A', '2025-01-01', '2025-03-31', 1),
    ];
    const reconciliation = reconcile(manifest, outcomes);
    const coverage = buildCoverage(manifest, outcomes, reconciliation);

    expect(reconciliation.problems).toEqual([
      { code: 'unexpected_outcome', path: 'outcomes.3', subtaskIds: ['Z'], message: 'outcome for Z, which was never dispatched' },
      { code: 'unexpected_outcome', path: 'outcomes.4', subtaskIds: ['A'], message: 'second outcome for A ignored (outcomes.0 was first)' },
      { code: 'missing_outcome', path: 'subtasks.2', subtaskIds: ['C'], message: 'subtask C has no outcome' },
    ]);
    expect(coverage.degradedReason).toEqual(['C:missing_outcome', 'Z:unexpected_outcome', 'A:unexpected_outcome']);
    expect(coverage.missingQuestions).toEqual(['q1']);
    expect(coverage.gaps).toEqual([
      { from: '2025-07-01', toExclusive: '2025-10-01', kind: 'unread', subtaskId: 'C', reason: 'missing_outcome', status: 'unchecked' },
    ]);
    expect(coverage.statement).toBe(
      'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-07-01 to 2025-09-30) not read: C has no outcome. Not covered: C (monthly statements, required) has no outcome. Question q1 unanswered. Ignored outcomes for A and Z, which were not dispatched as such.',
    );
  });

  it('reports data that starts late and data outside the assignment on both sides', () => {
    const manifest = taxManifest();
    const outcomes = fullQuarters({ B: okTime('B', '2025-03-30', '2025-07-02', 214), C: okTime('C', '2025-07-04', '2025-09-30', 175) });
    const { problems, observedGaps } = reconcile(manifest, outcomes);

    expect(problems.map((p) => [p.code, p.subtaskIds, p.from, p.toExclusive])).toEqual([
      ['observed_outside_assignment', ['B'], '2025-03-30', '2025-04-01'],
      ['observed_outside_assignment', ['B'], '2025-07-01', '2025-07-03'],
      ['observed_starts_late', ['C'], '2025-07-01', '2025-07-04'],
    ]);
    expect(observedGaps).toEqual([
      { subtaskId: 'C', worker: 'tax-statements', number: 1, code: 'observed_starts_late', region: { from: '2025-07-01', toExclusive: '2025-07-04' } },
    ]);
  });

  it('numbers two gaps of one subtask in order: starting late, then ending early', () => {
    const { observedGaps } = reconcile(taxManifest(), fullQuarters({ D: okTime('D', '2025-10-02', '2025-12-30', 230) }));
    expect(observedGaps.map((g) => [g.subtaskId, g.number, g.code, g.region])).toEqual([
      ['D', 1, 'observed_starts_late', { from: '2025-10-01', toExclusive: '2025-10-02' }],
      ['D', 2, 'observed_ends_early', { from: '2025-12-31', toExclusive: '2026-01-01' }],
    ]);
  });

  it('treats an ok outcome without a usable observation as inconsistent, not as coverage', () => {
    const manifest = taxManifest();
    const outcomes = fullQuarters({
      A: outcome({ subtaskId: 'A', state: 'ok', observed: null }),
      B: okTime('B', '2025-06-30', '2025-04-01', 214),
      C: okTime('C', '2025-07-01T00:00:00Z', '2025-09-30T00:00:00Z', 175),
    });
    const coverage = buildCoverage(manifest, outcomes);

    expect(coverage.problems.map((p) => [p.code, p.message])).toEqual([
      ['inconsistent_observation', 'A: an ok outcome must carry its observed coverage'],
      ['inconsistent_observation', 'B: minDate 2025-06-30 is after maxDate 2025-04-01'],
      ['inconsistent_observation', "C's observed dates must be dates like its assignment"],
    ]);
    expect(coverage.degradedReason).toEqual(['A:inconsistent_observation', 'B:inconsistent_observation', 'C:inconsistent_observation']);
    expect(coverage.complete).toBe(false);
  });

  it('reports a subtask that was never dispatched for part of the universe as an unchecked assignment gap', () => {
    const manifest = manifestOf({ universe: TAX_YEAR, subtasks: [quarterSubtask('A', '2025-01-01', '2025-10-01')] });
    const coverage = buildCoverage(manifest, [okTime('A', '2025-01-01', '2025-09-30', 600)]);

    expect(coverage.gaps).toEqual([{ kind: 'assignment', status: 'unchecked', from: '2025-10-01', toExclusive: '2026-01-01' }]);
    expect(coverage.degradedReason).toEqual(['universe:assignment_gap']);
    expect(coverage.statement).toBe(
      'Coverage: 2025-01-01 to 2025-12-31, one partition, no overlaps. One gap (2025-10-01 to 2025-12-31) assigned to no subtask.',
    );
  });

  it('reports a cancelled required quarter as not covered', () => {
    const manifest = taxManifest();
    const coverage = buildCoverage(manifest, fullQuarters({ D: ended('D', 'cancelled') }));
    expect(coverage.degradedReason).toEqual(['D:cancelled']);
    expect(coverage.gaps).toEqual([
      { from: '2025-10-01', toExclusive: '2026-01-01', kind: 'unread', subtaskId: 'D', reason: 'cancelled', status: 'unchecked' },
    ]);
    expect(coverage.statement).toBe(
      'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-10-01 to 2025-12-31) not read: D was cancelled. Not covered: D (monthly statements, required) was cancelled. Question q1 unanswered.',
    );
  });
});

describe('statements of many problems', () => {
  it('lists five gaps and says how many more, keeping the statement one line', () => {
    const months = ['01', '02', '03', '04', '05', '06', '07'];
    const manifest = manifestOf({
      universe: { dimension: 'time', from: '2025-01-01', toExclusive: '2025-08-01' },
      subtasks: months.map((m, i) => quarterSubtask(`M${m}`, `2025-${m}-01`, `2025-${months[i + 1] ?? '08'}-01`)),
      policy: { maxRounds: 1 },
    });
    const outcomes = months.map((m) => okTime(`M${m}`, `2025-${m}-01`, `2025-${m}-20`, 10));
    expect(buildCoverage(manifest, outcomes).statement).toBe(
      'Coverage: 2025-01-01 to 2025-07-31, seven partitions, no overlaps. Seven gaps: (2025-01-21 to 2025-01-31) not re-checked; (2025-02-21 to 2025-02-28) not re-checked; (2025-03-21 to 2025-03-31) not re-checked; (2025-04-21 to 2025-04-30) not re-checked; (2025-05-21 to 2025-05-31) not re-checked; and two more.',
    );
  });
});

import { describe, expect, it } from 'vitest';
import type { Checkpoint, Outcome } from '../../lib/contract';
import { buildCoverage, checkpointIssues, planNextRound, reconcile, splitAtCheckpoint, synthesisInputs } from '../../lib/domain';
import { emptyTime, fullQuarters, okTime, outcome, taxManifest, withRound } from './fixtures';

/** B's checkpoint after April and May: the statements tool answered 2025-04-01..2025-06-01 (12 transactions, 4 deductible). */
const afterMay = (partial = true): Checkpoint => ({
  generation: 1,
  sequence: 2,
  writtenAt: '2025-06-01T12:00:01.000Z',
  covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
  observed: { minDate: '2025-04-01', maxDate: '2025-05-31', recordCount: 12 },
  sources: ['stmt-2025-04', 'stmt-2025-05'],
  sourcesReached: 2,
  usage: { modelCalls: 2, estimatedCost: 14 },
  ...(partial
    ? {
        partial: {
          covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
          observed: { minDate: '2025-04-01', maxDate: '2025-05-31', recordCount: 12 },
          // April 10,500p + May 4,499p (examples/app/fixtures/statements-2025.json)
          findings: { currency: 'GBP', totalDeductiblePence: 14999, transactions: 12, deductibleTransactions: 4 },
        },
      }
    : {}),
});

const timedOutB = (checkpoint: Checkpoint): Outcome => outcome({ subtaskId: 'B', state: 'timed_out', observed: null, reason: 'deadline passed', checkpoint });

const policy = { retry: { timed_out: 1, invalid: 1, empty: 0 }, onRequiredGap: 'fail', onOptionalGap: 'degrade', maxRounds: 3 } as const;

describe('checkpoints: the tax example with a slow June statement', () => {
  it('splits B at its checkpoint: prefix April and May, rest June', () => {
    expect(splitAtCheckpoint({ from: '2025-04-01', toExclusive: '2025-07-01' }, afterMay())).toEqual({
      prefix: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
      rest: { from: '2025-06-01', toExclusive: '2025-07-01' },
    });
  });

  it('counts nothing for a checkpoint without partial findings', () => {
    expect(splitAtCheckpoint({ from: '2025-04-01', toExclusive: '2025-07-01' }, afterMay(false))).toBeUndefined();
  });

  it('counts nothing when the read part does not start the range (a retry would be two ranges)', () => {
    const may = { from: '2025-05-01', toExclusive: '2025-06-01' };
    const cp = afterMay();
    expect(splitAtCheckpoint({ from: '2025-04-01', toExclusive: '2025-07-01' }, { partial: { ...cp.partial!, covered: [may] } })).toBeUndefined();
  });

  it('sends B.r2 only the rest, and names the prefix in its lineage', () => {
    const manifest = taxManifest(policy);
    const plan = planNextRound(manifest, fullQuarters({ B: timedOutB(afterMay()) }));
    expect(plan.map((s) => [s.id, s.assigned, s.lineage])).toEqual([
      [
        'B.r2',
        { from: '2025-06-01', toExclusive: '2025-07-01' },
        { kind: 'retry', of: 'B', attempt: 2, prefix: [{ from: '2025-04-01', toExclusive: '2025-06-01' }] },
      ],
    ]);
  });

  it('retries the whole quarter for a kind without partial findings, and never claims the prefix', () => {
    const manifest = taxManifest(policy);
    const outcomes = fullQuarters({ B: timedOutB(afterMay(false)) });
    const [retry] = planNextRound(manifest, outcomes);
    expect(retry?.assigned).toEqual({ from: '2025-04-01', toExclusive: '2025-07-01' });
    expect(retry?.lineage).toEqual({ kind: 'retry', of: 'B', attempt: 2 });
    const coverage = buildCoverage(manifest, outcomes);
    expect(coverage.gaps).toEqual([
      { from: '2025-04-01', toExclusive: '2025-07-01', kind: 'unread', subtaskId: 'B', reason: 'timed_out', status: 'unchecked' },
    ]);
  });

  it('reads the prefix and the rest once each: 113,747p for the year, complete, and says what was sent again', () => {
    const first = taxManifest(policy);
    const round1 = fullQuarters({
      A: okTime('A', '2025-01-01', '2025-03-31', 18),
      B: timedOutB(afterMay()),
      C: okTime('C', '2025-07-01', '2025-09-30', 18),
      D: okTime('D', '2025-10-01', '2025-12-31', 18),
    });
    const second = withRound(first, planNextRound(first, round1));
    // June's statement closes on the 27th: B.r2's data ends there, and the feed re-checks 28-30 June.
    const round2 = [...round1, okTime('B.r2', '2025-06-01', '2025-06-27', 6)];
    const third = withRound(second, planNextRound(second, round2));
    expect(third.subtasks.map((s) => [s.id, s.assigned])).toContainEqual(['B.r2.g1', { from: '2025-06-28', toExclusive: '2025-07-01' }]);
    const outcomes = [...round2, emptyTime('B.r2.g1', 1)];
    const reconciliation = reconcile(third, outcomes);
    expect(reconciliation.problems.filter((p) => p.code === 'assignment_gap' || p.code === 'assignment_overlap')).toEqual([]);

    const findings: Record<string, number> = { A: 28249, 'B.r2': 8500, C: 39749, D: 22250 };
    const withFindings = outcomes.map((o) => (o.state === 'ok' ? { ...o, findings: { totalDeductiblePence: findings[o.subtaskId] } } : o));
    const inputs = synthesisInputs(reconcile(third, withFindings));
    expect(inputs.map((i) => [i.subtask.id, i.subtask.assigned])).toEqual([
      ['A', { from: '2025-01-01', toExclusive: '2025-04-01' }],
      ['B', { from: '2025-04-01', toExclusive: '2025-06-01' }],
      ['B.r2', { from: '2025-06-01', toExclusive: '2025-07-01' }],
      ['C', { from: '2025-07-01', toExclusive: '2025-10-01' }],
      ['D', { from: '2025-10-01', toExclusive: '2026-01-01' }],
    ]);
    const total = inputs.reduce((sum, i) => sum + ((i.outcome.findings as { totalDeductiblePence: number }).totalDeductiblePence ?? 0), 0);
    expect(total).toBe(28249 + 14999 + 8500 + 39749 + 22250);
    expect(total).toBe(113747);

    const coverage = buildCoverage(third, outcomes);
    expect(coverage.complete).toBe(true);
    expect(coverage.overlaps).toEqual([]);
    expect(coverage.statement).toContain('B read 2025-04-01..2025-05-31 before its deadline; 2025-06-01..2025-06-30 was sent again as B.r2 and read.');
  });

  it('reports an unsent rest as the only unread part when no retry is left', () => {
    const manifest = taxManifest({ ...policy, maxRounds: 1 });
    const coverage = buildCoverage(manifest, fullQuarters({ B: timedOutB(afterMay()) }));
    expect(coverage.gaps).toEqual([
      { from: '2025-06-01', toExclusive: '2025-07-01', kind: 'unread', subtaskId: 'B', reason: 'timed_out', status: 'unchecked' },
    ]);
    expect(coverage.statement).toContain('B read 2025-04-01..2025-05-31 before its deadline; 2025-06-01..2025-06-30 was not read.');
  });

  it('does not count a prefix whose retry re-read the whole scope (planned without it)', () => {
    const first = taxManifest(policy);
    const whole = withRound(first, [{ ...first.subtasks[1]!, id: 'B.r2', round: 2, lineage: { kind: 'retry', of: 'B', attempt: 2 } }]);
    const outcomes = [...fullQuarters({ B: timedOutB(afterMay()) }), okTime('B.r2', '2025-04-01', '2025-06-30', 18)];
    const reconciliation = reconcile(whole, outcomes);
    expect(reconciliation.resumed.size).toBe(0);
    expect(synthesisInputs(reconciliation).map((i) => i.subtask.id)).toEqual(['A', 'B.r2', 'C', 'D']);
  });
});

describe('checkpointIssues', () => {
  const assigned = { from: '2025-04-01', toExclusive: '2025-07-01' };
  it('refuses a checkpoint outside its assignment', () => {
    const next = { ...afterMay(false), covered: [{ from: '2025-03-01', toExclusive: '2025-05-01' }] };
    expect(checkpointIssues('time', assigned, undefined, next)).toEqual(['covered 2025-03-01..2025-04-01 lies outside the assignment 2025-04-01..2025-07-01']);
  });
  it('refuses a checkpoint that shrinks', () => {
    const previous = afterMay(false);
    const next = { ...previous, sequence: 3, covered: [{ from: '2025-04-01', toExclusive: '2025-05-01' }], observed: { ...previous.observed, recordCount: 6 } };
    expect(checkpointIssues('time', assigned, previous, next)).toEqual([
      'a checkpoint only grows, but 2025-05-01..2025-06-01 is no longer covered',
      'a checkpoint only grows, but its records fell from 12 to 6',
    ]);
  });
  it('accepts one that grows', () => {
    const previous = afterMay(false);
    const next = { ...previous, sequence: 3, covered: [{ from: '2025-04-01', toExclusive: '2025-06-15' }] };
    expect(checkpointIssues('time', assigned, previous, next)).toEqual([]);
  });
});

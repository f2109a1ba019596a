import { describe, expect, it } from 'vitest';
import { buildCoverage, decideStatus, planNextRound, reconcile, synthesisInputs } from '../../lib/domain';
import { emptyTime, ended, fullQuarters, okTime, taxManifest, withRound } from './fixtures';

const shortB = () => fullQuarters({ B: okTime('B', '2025-04-01', '2025-06-27', 214) });

describe('planNextRound: bounded follow-ups', () => {
  it('retries a timeout up to policy.retry.timed_out times, one round each, then stops', () => {
    const policy = { retry: { timed_out: 2, invalid: 1, empty: 0 }, maxRounds: 4 };
    const first = taxManifest(policy);
    const one = fullQuarters({ C: ended('C', 'timed_out') });
    const second = withRound(first, planNextRound(first, one));
    const two = [...one, ended('C.r2', 'timed_out')];
    const third = withRound(second, planNextRound(second, two));
    const three = [...two, ended('C.r3', 'timed_out')];

    expect(second.subtasks.slice(4).map((s) => [s.id, s.round, s.lineage])).toEqual([['C.r2', 2, { kind: 'retry', of: 'C', attempt: 2 }]]);
    expect(third.subtasks.slice(5).map((s) => [s.id, s.round, s.lineage])).toEqual([['C.r3', 3, { kind: 'retry', of: 'C', attempt: 3 }]]);
    expect(planNextRound(third, three)).toEqual([]);
    expect(buildCoverage(third, three).degradedReason).toEqual(['C.r3:timed_out']);
  });

  it('retries invalid once by default, never empty, never cancelled', () => {
    const manifest = taxManifest();
    const outcomes = fullQuarters({ A: ended('A', 'invalid'), B: emptyTime('B', 2), C: ended('C', 'cancelled') });
    expect(planNextRound(manifest, outcomes).map((s) => s.id)).toEqual(['A.r2']);
  });

  it('dispatches nothing once maxRounds is reached, leaving the gap unchecked and failing a required quarter', () => {
    const manifest = taxManifest({ maxRounds: 1 });
    const outcomes = shortB();
    const reconciliation = reconcile(manifest, outcomes);
    const coverage = buildCoverage(manifest, outcomes, reconciliation);

    expect(planNextRound(manifest, outcomes)).toEqual([]);
    expect(coverage).toMatchObject({ complete: false, degradedReason: ['B:observed_ends_early'], gaps: [{ subtaskId: 'B', status: 'unchecked' }] });
    expect(coverage.statement).toBe('Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to 2025-06-30) not re-checked.');
    const decision = decideStatus(manifest, coverage, reconciliation);
    expect(decision.status === 'failed' && decision.error.unmet).toEqual([{ who: 'B', why: 'observed_ends_early' }]);
  });

  it('retries a timed-out re-check against the same alternate source as B.g1.r2, and credits its answer', () => {
    const policy = { maxRounds: 3 };
    const first = taxManifest(policy);
    const one = shortB();
    const second = withRound(first, planNextRound(first, one));
    const two = [...one, ended('B.g1', 'timed_out')];
    const retry = planNextRound(second, two);

    expect(retry.map((s) => [s.id, s.worker, s.round, s.assigned, s.lineage])).toEqual([
      ['B.g1.r2', 'transaction-feed', 3, { from: '2025-06-28', toExclusive: '2025-07-01' }, { kind: 'retry', of: 'B.g1', attempt: 2 }],
    ]);
    const third = withRound(second, retry);
    const coverage = buildCoverage(third, [...two, emptyTime('B.g1.r2', 1)]);
    expect(coverage.gaps).toEqual([
      {
        kind: 'observed',
        subtaskId: 'B',
        from: '2025-06-28',
        toExclusive: '2025-07-01',
        status: 'confirmed_empty',
        recheckedAgainst: 'transaction-feed',
        recheckSubtaskId: 'B.g1.r2',
        records: 0,
      },
    ]);
    expect(coverage.complete).toBe(true);
  });

  it('states a failed re-check and never re-checks a re-check', () => {
    const policy = { retry: { timed_out: 0, invalid: 0, empty: 0 }, maxRounds: 3 };
    const first = taxManifest(policy);
    const one = shortB();
    const second = withRound(first, planNextRound(first, one));
    const two = [...one, ended('B.g1', 'timed_out')];
    const coverage = buildCoverage(second, two);

    expect(planNextRound(second, two)).toEqual([]);
    expect(coverage.degradedReason).toEqual(['B.g1:timed_out']);
    expect(coverage.statement).toBe(
      'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to 2025-06-30) re-check against the transaction feed timed out.',
    );
    const partial = [...one, okTime('B.g1', '2025-06-28', '2025-06-28', 2, 1)];
    expect(planNextRound(second, partial)).toEqual([]);
    expect(synthesisInputs(reconcile(second, partial)).map((i) => i.subtask.id)).toEqual(['A', 'B', 'C', 'D', 'B.g1']);
  });

  it('lists two gaps in one sentence, each with its own result', () => {
    const first = taxManifest();
    const one = fullQuarters({ B: okTime('B', '2025-04-01', '2025-06-27', 214), D: okTime('D', '2025-10-01', '2025-12-30', 230) });
    const second = withRound(first, planNextRound(first, one));
    expect(second.subtasks.slice(4).map((s) => s.id)).toEqual(['B.g1', 'D.g1']);
    const coverage = buildCoverage(second, [...one, emptyTime('B.g1', 1), okTime('D.g1', '2025-12-31', '2025-12-31', 1, 1)]);
    expect(coverage.statement).toBe(
      'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. Two gaps: (2025-06-28 to 2025-06-30) re-checked against the transaction feed: zero transactions; (2025-12-31) re-checked against the transaction feed: one transaction found and included.',
    );
  });
});

import { describe, expect, it } from 'vitest';
import { buildCoverage, decideStatus, planNextRound, reconcile, synthesisInputs, validateRunRequest, type Reconciliation } from '../../lib/domain';
import { emptyTime, manifestOf, okTime, PLAN_OPTIONS, taxRequest, testCatalog, withRound } from './fixtures';

/** The tax example: the tax agent that counted March twice and skipped late June. */
describe('the tax example: the tax year', () => {
  it('rejects the "March through June" typo, naming 2025-03-01..2025-04-01 and subtasks A and B', () => {
    const result = validateRunRequest(taxRequest('2025-03-01'), testCatalog, PLAN_OPTIONS);

    expect(result).toEqual({
      ok: false,
      problems: [
        {
          code: 'assignment_overlap',
          path: 'subtasks.1.scope.from',
          subtaskIds: ['A', 'B'],
          from: '2025-03-01',
          toExclusive: '2025-04-01',
          message: 'subtasks A and B both cover 2025-03-01..2025-04-01',
        },
      ],
    });
  });

  const plan = () => {
    const result = validateRunRequest(taxRequest(), testCatalog, PLAN_OPTIONS);
    if (!result.ok) throw new Error(`the fixed plan must tile: ${JSON.stringify(result.problems)}`);
    return manifestOf({ universe: result.request.universe, subtasks: result.subtasks, policy: result.request.policy });
  };

  // Worker B's June statement closed on the 27th; the others reached the ends of their quarters.
  const roundOne = [
    okTime('A', '2025-01-01', '2025-03-31', 190),
    okTime('B', '2025-04-01', '2025-06-27', 214),
    okTime('C', '2025-07-01', '2025-09-30', 175),
    okTime('D', '2025-10-01', '2025-12-31', 230),
  ];

  it('accepts the fixed plan as four quarters with nothing to report', () => {
    const manifest = plan();
    expect(manifest.subtasks.map((s) => [s.id, s.assigned, s.round])).toEqual([
      ['A', { from: '2025-01-01', toExclusive: '2025-04-01' }, 1],
      ['B', { from: '2025-04-01', toExclusive: '2025-07-01' }, 1],
      ['C', { from: '2025-07-01', toExclusive: '2025-10-01' }, 1],
      ['D', { from: '2025-10-01', toExclusive: '2026-01-01' }, 1],
    ]);
  });

  it("reports B's data ending 2025-06-27 as a gap of 2025-06-28..2025-07-01", () => {
    const { problems, observedGaps } = reconcile(plan(), roundOne);

    expect(observedGaps).toEqual([
      { subtaskId: 'B', worker: 'tax-statements', number: 1, code: 'observed_ends_early', region: { from: '2025-06-28', toExclusive: '2025-07-01' } },
    ]);
    expect(problems).toEqual([
      {
        code: 'observed_ends_early',
        path: 'outcomes.1.observed',
        subtaskIds: ['B'],
        from: '2025-06-28',
        toExclusive: '2025-07-01',
        message: "B's data ends 2025-06-27, before its assignment ends (2025-07-01 exclusive): gap 2025-06-28..2025-07-01",
      },
    ]);
  });

  it('sends the follow-up for exactly that gap to the transaction feed, as B.g1 in round 2', () => {
    const next = planNextRound(plan(), roundOne);

    expect(next).toEqual([
      {
        id: 'B.g1',
        worker: 'transaction-feed',
        round: 2,
        questionIds: ['q1'],
        required: true,
        justification: 'the total needs every quarter',
        deadlineSeconds: 60,
        budget: { modelCalls: 4, estimatedCostPerCall: 7 },
        assigned: { from: '2025-06-28', toExclusive: '2025-07-01' },
        lineage: { kind: 'recheck', of: 'B', gap: { from: '2025-06-28', toExclusive: '2025-07-01' } },
      },
    ]);
  });

  describe('after the transaction feed confirms the gap is empty', () => {
    const final = () => {
      const first = plan();
      const manifest = withRound(first, planNextRound(first, roundOne));
      const outcomes = [...roundOne, emptyTime('B.g1', 1)];
      return { manifest, outcomes, reconciliation: reconcile(manifest, outcomes) };
    };

    it('states the re-checked gap in the seed-000 sentence, word for word', () => {
      const { manifest, outcomes } = final();
      expect(buildCoverage(manifest, outcomes).statement).toBe(
        'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to 2025-06-30) re-checked against the transaction feed: zero transactions.',
      );
    });

    it('reports complete coverage, the confirmed-empty gap half-open in JSON, and succeeds', () => {
      const { manifest, outcomes, reconciliation } = final();
      const coverage = buildCoverage(manifest, outcomes, reconciliation);

      expect(coverage).toMatchObject({
        complete: true,
        missingQuestions: [],
        degradedReason: [],
        partitions: 4,
        overlaps: [],
        gaps: [
          {
            kind: 'observed',
            subtaskId: 'B',
            from: '2025-06-28',
            toExclusive: '2025-07-01',
            status: 'confirmed_empty',
            recheckedAgainst: 'transaction-feed',
            recheckSubtaskId: 'B.g1',
            records: 0,
          },
        ],
      });
      expect(decideStatus(manifest, coverage, reconciliation)).toEqual({ status: 'succeeded', degraded: false });
    });

    it('dispatches nothing more: round 2 was the last of maxRounds 2', () => {
      const { manifest, outcomes } = final();
      expect(planNextRound(manifest, outcomes)).toEqual([]);
    });

    it('synthesises from the four ok quarters only, not the empty re-check', () => {
      const { reconciliation }: { reconciliation: Reconciliation } = final();
      expect(synthesisInputs(reconciliation).map((i) => i.subtask.id)).toEqual(['A', 'B', 'C', 'D']);
    });
  });

  it('folds data the feed found into the answer and says how many', () => {
    const first = plan();
    const manifest = withRound(first, planNextRound(first, roundOne));
    const outcomes = [...roundOne, okTime('B.g1', '2025-06-28', '2025-06-29', 3, 1)];
    const reconciliation = reconcile(manifest, outcomes);
    const coverage = buildCoverage(manifest, outcomes, reconciliation);

    expect(coverage.complete).toBe(true);
    expect(coverage.gaps[0]).toMatchObject({ status: 'data_found', records: 3, recheckSubtaskId: 'B.g1' });
    expect(coverage.statement).toBe(
      'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to 2025-06-30) re-checked against the transaction feed: three transactions found and included.',
    );
    expect(synthesisInputs(reconciliation).map((i) => i.subtask.id)).toEqual(['A', 'B', 'C', 'D', 'B.g1']);
  });

  it('fails a required quarter whose gap could not be re-checked, and still carries the coverage', () => {
    const first = plan();
    const manifest = withRound(first, planNextRound(first, roundOne));
    const outcomes = [...roundOne, emptyTime('B.g1', 0)];
    const reconciliation = reconcile(manifest, outcomes);
    const coverage = buildCoverage(manifest, outcomes, reconciliation);
    const decision = decideStatus(manifest, coverage, reconciliation);

    expect(coverage.complete).toBe(false);
    expect(coverage.degradedReason).toEqual(['B.g1:source_unreachable']);
    expect(coverage.statement).toBe(
      'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-06-28 to 2025-06-30) re-checked against the transaction feed: source unreachable.',
    );
    if (decision.status !== 'failed') throw new Error('a required unresolved gap must fail the run');
    expect(decision.error.name).toBe('RequiredGapError');
    expect(decision.error.unmet).toEqual([{ who: 'B.g1', why: 'source_unreachable' }]);
    expect(decision.error.coverage).toBe(coverage);
  });
});

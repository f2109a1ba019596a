import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { buildCoverage, decideStatus, planNextRound, reconcile, synthesisInputs, validateRunRequest } from '../../lib/domain';
import { ended, manifestOf, okIds, PLAN_OPTIONS, testCatalog, withRound } from './fixtures';

/** Scout: five research workers, and the CRM worker that timed out on 6.1% of runs. */
const SOURCES = ['vantage-pricing', 'vantage-packaging', 'crm-acme', 'g2-reviews', 'news-wire'];

const scoutRequest = (policy: RunRequestInput['policy']): RunRequestInput => {
  const subtask = (id: string, worker: string, source: string, question: string, required: boolean) => ({
    id,
    worker,
    questionIds: [question],
    scope: { ids: [source] },
    required,
    ...(required ? { justification: 'the goal asks about live deals' } : {}),
    deadlineSeconds: 25,
    budget: { modelCalls: 3, estimatedCostPerCall: 5 },
  });
  return {
    goal: 'Which live deals are exposed to Vantage moving its enterprise floor from $48,000 to $60,000?',
    universe: { dimension: 'ids', ids: SOURCES, noun: 'source' },
    subtasks: [
      subtask('A', 'scout-pricing', 'vantage-pricing', 'q1', false),
      subtask('B', 'scout-packaging', 'vantage-packaging', 'q2', false),
      subtask('C', 'scout-crm', 'crm-acme', 'q3', true),
      subtask('D', 'scout-reviews', 'g2-reviews', 'q4', false),
      subtask('E', 'scout-news', 'news-wire', 'q5', false),
    ],
    questions: ['q1', 'q2', 'q3', 'q4', 'q5'].map((id) => ({ id })),
    policy,
    budget: { modelCalls: 20, costLimit: 100 },
  };
};

const dispatch = (policy: RunRequestInput['policy']) => {
  const result = validateRunRequest(scoutRequest(policy), testCatalog, PLAN_OPTIONS);
  if (!result.ok) throw new Error(`scout plan must tile: ${JSON.stringify(result.problems)}`);
  return manifestOf({ universe: result.request.universe, subtasks: result.subtasks, policy: result.request.policy, questions: result.request.questions });
};

/** Every worker except those named in `timedOut` read its one source. */
const roundOne = (...timedOut: string[]) =>
  ['A', 'B', 'C', 'D', 'E'].map((id, i) => (timedOut.includes(id) ? ended(id, 'timed_out') : okIds(id, [SOURCES[i] as string], 12)));

describe('the Scout example: Scout with the CRM worker stubbed to time out', () => {
  const noRetry = { retry: { timed_out: 0, invalid: 0, empty: 0 }, onRequiredGap: 'degrade', onOptionalGap: 'degrade', maxRounds: 1 } as const;

  it('answers with complete: false, names q3 and lists C:timed_out', () => {
    const manifest = dispatch(noRetry);
    const outcomes = roundOne('C');
    const coverage = buildCoverage(manifest, outcomes);

    // Nobody read crm-acme: it is a gap, not full coverage with a footnote.
    expect(coverage).toMatchObject({
      complete: false,
      missingQuestions: ['q3'],
      degradedReason: ['C:timed_out'],
      partitions: 5,
      overlaps: [],
      gaps: [{ ids: ['crm-acme'], kind: 'unread', subtaskId: 'C', reason: 'timed_out', status: 'unchecked' }],
    });
    expect(coverage.statement).toBe(
      'Coverage: five sources, five partitions, no overlaps. One gap (id crm-acme) not read: C timed out. Not covered: C (CRM notes, required) timed out. Question q3 unanswered.',
    );
  });

  it('never hands the timed-out subtask to synthesis', () => {
    const reconciliation = reconcile(dispatch(noRetry), roundOne('C'));
    expect(synthesisInputs(reconciliation).map((i) => i.subtask.id)).toEqual(['A', 'B', 'D', 'E']);
  });

  it('degrades rather than fails under onRequiredGap: degrade', () => {
    const manifest = dispatch(noRetry);
    const outcomes = roundOne('C');
    const reconciliation = reconcile(manifest, outcomes);
    expect(decideStatus(manifest, buildCoverage(manifest, outcomes, reconciliation), reconciliation)).toEqual({ status: 'succeeded', degraded: true });
  });

  it('fails with a RequiredGapError carrying the coverage under onRequiredGap: fail', () => {
    const manifest = dispatch({ ...noRetry, onRequiredGap: 'fail' });
    const outcomes = roundOne('C');
    const reconciliation = reconcile(manifest, outcomes);
    const coverage = buildCoverage(manifest, outcomes, reconciliation);
    const decision = decideStatus(manifest, coverage, reconciliation);

    if (decision.status !== 'failed') throw new Error('expected the run to fail');
    expect(decision.error).toMatchObject({
      name: 'RequiredGapError',
      unmet: [{ who: 'C', why: 'timed_out' }],
      message: 'required coverage is missing: C:timed_out',
    });
    expect(decision.error.coverage.missingQuestions).toEqual(['q3']);
  });

  it('only degrades when the timed-out worker is optional, even under fail', () => {
    const manifest = dispatch({ ...noRetry, onRequiredGap: 'fail' });
    const outcomes = roundOne('D');
    const reconciliation = reconcile(manifest, outcomes);
    const coverage = buildCoverage(manifest, outcomes, reconciliation);

    expect(coverage).toMatchObject({ complete: false, missingQuestions: ['q4'], degradedReason: ['D:timed_out'] });
    expect(coverage.gaps).toEqual([{ ids: ['g2-reviews'], kind: 'unread', subtaskId: 'D', reason: 'timed_out', status: 'unchecked' }]);
    expect(coverage.statement).toBe(
      'Coverage: five sources, five partitions, no overlaps. One gap (id g2-reviews) not read: D timed out. Not covered: D (review sites) timed out. Question q4 unanswered.',
    );
    expect(decideStatus(manifest, coverage, reconciliation)).toEqual({ status: 'succeeded', degraded: true });
  });

  describe('with the Scout example retry policy (one retry of a timeout, two rounds)', () => {
    const policy = { retry: { timed_out: 1, invalid: 1, empty: 0 }, onRequiredGap: 'fail', onOptionalGap: 'degrade', maxRounds: 2 } as const;

    it('retries C once as C.r2 with the same scope, worker and allowance', () => {
      const manifest = dispatch(policy);
      expect(planNextRound(manifest, roundOne('C'))).toEqual([
        {
          id: 'C.r2',
          worker: 'scout-crm',
          round: 2,
          questionIds: ['q3'],
          required: true,
          justification: 'the goal asks about live deals',
          deadlineSeconds: 25,
          budget: { modelCalls: 3, estimatedCostPerCall: 5 },
          assigned: { ids: ['crm-acme'] },
          lineage: { kind: 'retry', of: 'C', attempt: 2 },
        },
      ]);
    });

    it('reports the retry when it times out too, and stops after round 2', () => {
      const first = dispatch(policy);
      const manifest = withRound(first, planNextRound(first, roundOne('C')));
      const outcomes = [...roundOne('C'), ended('C.r2', 'timed_out')];
      const coverage = buildCoverage(manifest, outcomes);

      expect(coverage).toMatchObject({ complete: false, missingQuestions: ['q3'], degradedReason: ['C.r2:timed_out'], partitions: 5 });
      // The gap names the latest attempt, as degradedReason does.
      expect(coverage.gaps).toEqual([{ ids: ['crm-acme'], kind: 'unread', subtaskId: 'C.r2', reason: 'timed_out', status: 'unchecked' }]);
      expect(coverage.statement).toBe(
        'Coverage: five sources, five partitions, no overlaps. One gap (id crm-acme) not read: C.r2 timed out. Not covered: C.r2 (CRM notes, required) timed out. Question q3 unanswered.',
      );
      expect(planNextRound(manifest, outcomes)).toEqual([]);
    });

    it('is complete when the retry succeeds, and synthesises from the retry', () => {
      const first = dispatch(policy);
      const manifest = withRound(first, planNextRound(first, roundOne('C')));
      const outcomes = [...roundOne('C'), okIds('C.r2', ['crm-acme'], 431)];
      const reconciliation = reconcile(manifest, outcomes);

      expect(buildCoverage(manifest, outcomes, reconciliation)).toMatchObject({ complete: true, missingQuestions: [], degradedReason: [] });
      expect(synthesisInputs(reconciliation).map((i) => i.subtask.id)).toEqual(['A', 'B', 'C.r2', 'D', 'E']);
    });
  });
});

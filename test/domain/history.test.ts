import { describe, expect, it } from 'vitest';
import { Manifest, type DispatchedSubtask, type Outcome, type RunRequestInput } from '../../lib/contract';
import {
  RUN_HISTORY,
  buildCoverage,
  firstRoundBound,
  followUpRoom,
  planNextRound,
  reconcile,
  validateRunRequest,
  worstCaseEvents,
  type RunHistory,
} from '../../lib/domain';
import { ended, fullQuarters, okIds, PLAN_OPTIONS, sourcesOf, taxManifest, testCatalog } from './fixtures';

const idsOf = (n: number): string[] => Array.from({ length: n }, (_, i) => `acct-${String(i).padStart(5, '0')}`);

/** One subtask per id, of the ids kind `ticket-triage`. */
const perIdRequest = (n: number, policy?: RunRequestInput['policy']): RunRequestInput => ({
  goal: 'Check every account',
  universe: { dimension: 'ids', ids: idsOf(n) },
  split: { worker: 'ticket-triage', chunkSize: 1, deadlineSeconds: 10, budget: { modelCalls: 1, estimatedCostPerCall: 1 } },
  ...(policy ? { policy } : {}),
  budget: { modelCalls: 10, costLimit: 10 },
});

/** A costlier mode's arithmetic, to reach its bound below the contract's 1,000 subtasks. */
const SMALL_HISTORY: RunHistory = { ...RUN_HISTORY, limit: 2_500 };

describe('history arithmetic (figures counted on the synthesized state machine)', () => {
  it('bounds the first round with every round of the policy reserved', () => {
    // ⌊(25,000 − 8 − R × 16) / 24⌋
    expect(firstRoundBound(1)).toBe(1040); // 24,976 / 24 = 1,040.67
    expect(firstRoundBound(2)).toBe(1040); // 24,960 / 24 = 1,040
    expect(firstRoundBound(5)).toBe(1038); // 24,912 / 24 = 1,038
    expect(firstRoundBound(2, SMALL_HISTORY)).toBe(102); // 2,460 / 24 = 102.5
  });

  it('counts a subtask that declares a hedge at its costlier path (42 events, Hedge and a second pass)', () => {
    expect(RUN_HISTORY.worstHedgedSubtask).toBe(42);
    expect(worstCaseEvents(2, 10, RUN_HISTORY, 4)).toBe(8 + 2 * 16 + 6 * 24 + 4 * 42);
    expect(worstCaseEvents(2, 10, RUN_HISTORY, 0)).toBe(worstCaseEvents(2, 10));
    // (25,000 − 8 − 2 × 16 − 500 × 42) / 24 = 3,960 / 24 = 165, where 500 plain subtasks leave 540.
    expect(followUpRoom(1, 500, RUN_HISTORY, 500)).toBe(165);
    expect(followUpRoom(1, 500)).toBe(540);
  });

  it('leaves follow-up rounds only what the rounds before them did not use', () => {
    expect(worstCaseEvents(1, 1000)).toBe(8 + 16 + 24_000);
    expect(followUpRoom(1, 1000)).toBe(40); // (25,000 − 8 − 32 − 24,000) / 24
    expect(followUpRoom(2, 1040)).toBe(0); // 25,000 − 8 − 48 − 24,960 < 0
    expect(followUpRoom(1, 10)).toBe(1030); // (25,000 − 8 − 32 − 240) / 24 = 1,030
  });
});

describe('the planner refuses a first round past the history bound', () => {
  it('a plan one past the computed bound is refused naming the bound; the bound itself is accepted', () => {
    const options = { ...PLAN_OPTIONS, history: SMALL_HISTORY };
    const atBound = validateRunRequest(perIdRequest(102), testCatalog, options);
    const past = validateRunRequest(perIdRequest(103), testCatalog, options);

    expect(atBound.ok && atBound.subtasks.length).toBe(102);
    expect(past.ok ? [] : past.problems).toEqual([
      {
        code: 'plan_too_large',
        path: 'split',
        message: 'the plan makes 103 subtasks; one run\'s execution history (2,500 events) holds at most 102 subtasks with maxRounds 2, counting 24 events per subtask and 16 per round',
      },
    ]);
  });

  it('reserves more rounds when the policy allows more: 100 subtasks with maxRounds 5', () => {
    const options = { ...PLAN_OPTIONS, history: SMALL_HISTORY };
    const policy = { maxRounds: 5 };
    // ⌊(2,500 − 8 − 5 × 16) / 24⌋ = ⌊100.5⌋
    expect(validateRunRequest(perIdRequest(100, policy), testCatalog, options).ok).toBe(true);
    const past = validateRunRequest(perIdRequest(101, policy), testCatalog, options);
    expect(past.ok ? [] : past.problems.map((p) => p.message)).toEqual([expect.stringContaining('at most 100 subtasks with maxRounds 5')]);
  });

  it('counts hedged subtasks at 42 events: 594 fit with maxRounds 2, 595 are refused naming the hedges', () => {
    const hedged = (n: number): RunRequestInput => {
      const request = perIdRequest(n);
      return { ...request, split: { ...request.split!, hedge: { afterSeconds: 5, mode: 'replicate' } } };
    };
    // 8 + 2 × 16 + 594 × 42 = 24,988 ≤ 25,000; one more is 25,030. Without hedges 1,040 would fit.
    expect(validateRunRequest(hedged(594), testCatalog, PLAN_OPTIONS).ok).toBe(true);
    const past = validateRunRequest(hedged(595), testCatalog, PLAN_OPTIONS);
    expect(past.ok ? [] : past.problems).toEqual([
      {
        code: 'plan_too_large',
        path: 'split',
        message:
          "the plan makes 595 subtasks; one run's execution history (25,000 events) holds at most 1040 subtasks with maxRounds 2, counting 24 events per subtask " +
          'and 16 per round; 595 of them declare a hedge, counted at 42 events each, so this plan needs 25,030 events',
      },
    ]);
    expect(validateRunRequest(perIdRequest(595), testCatalog, PLAN_OPTIONS).ok).toBe(true);
  });

  it('with the callback design, the contract’s 1,000 is the lower bound: 1,001 is refused, 1,000 accepted', () => {
    expect(validateRunRequest(perIdRequest(1000), testCatalog, PLAN_OPTIONS).ok).toBe(true);
    const past = validateRunRequest(perIdRequest(1001), testCatalog, PLAN_OPTIONS);
    expect(past.ok ? [] : past.problems).toEqual([{ code: 'plan_too_large', path: 'split', message: 'the split makes 1001 subtasks; at most 1000 are allowed' }]);
  });
});

interface Simulated {
  readonly manifest: Manifest;
  readonly outcomes: Outcome[];
  readonly rounds: number;
  readonly dispatchedPerRound: number[];
  /** What the history bound counts: every round's overhead, the costliest ending, every subtask at its costliest path. */
  readonly worstEvents: number;
}

/**
 * The run loop of the state machine, at the domain level: Dispatch a round (round 1: the plan;
 * later: planNextRound, the same call the dispatch and reconcile functions make), give each
 * subtask the outcome `outcomeOf` says, Reconcile, and go round again while planNextRound is not
 * empty. Stops with an error at round 6, past any policy, so a run that never closes fails.
 */
const simulate = (request: RunRequestInput, outcomeOf: (subtask: DispatchedSubtask) => Outcome): Simulated => {
  const plan = validateRunRequest(request, testCatalog, PLAN_OPTIONS);
  if (!plan.ok) throw new Error(plan.problems[0]?.message);
  let manifest = Manifest.parse({ universe: plan.request.universe, subtasks: plan.subtasks, policy: plan.request.policy, sources: sourcesOf(testCatalog) });
  let round = plan.subtasks;
  const outcomes: Outcome[] = [];
  const dispatchedPerRound: number[] = [];
  for (let rounds = 1; rounds <= 5; rounds += 1) {
    dispatchedPerRound.push(round.length);
    outcomes.push(...round.map(outcomeOf));
    const next = planNextRound(manifest, outcomes);
    if (next.length === 0) return { manifest, outcomes, rounds, dispatchedPerRound, worstEvents: worstCaseEvents(rounds, manifest.subtasks.length) };
    manifest = Manifest.parse({ ...manifest, subtasks: [...manifest.subtasks, ...next] });
    round = next;
  }
  throw new Error('the run did not close within five rounds');
};

const SIX_HUNDRED_TIME_OUT = (subtask: DispatchedSubtask): Outcome => {
  const index = Number(subtask.id.split('.')[0]?.slice(1)) - 1;
  const ids = 'ids' in subtask.assigned ? subtask.assigned.ids : [];
  // Subtasks S1…S600 (and every retry of them) time out; S601…S1000 read their account.
  return index < 600 ? ended(subtask.id, 'timed_out') : okIds(subtask.id, ids);
};

describe('follow-ups after a round of hedged subtasks fit what the hedges left', () => {
  it('590 hedged subtasks all time out: 7 retries fit, the other 583 gaps name the history bound', () => {
    const base = perIdRequest(590);
    const request: RunRequestInput = { ...base, split: { ...base.split!, idPrefix: 'S', hedge: { afterSeconds: 5, mode: 'replicate' } } };
    const run = simulate(request, (subtask) => ended(subtask.id, 'timed_out'));
    const coverage = buildCoverage(run.manifest, run.outcomes, reconcile(run.manifest, run.outcomes), { closing: true });

    // ⌊(25,000 − 8 − 2 × 16 − 590 × 42) / 24⌋ = ⌊180 / 24⌋ = 7 (counted as plain subtasks it would be 450).
    expect(run.dispatchedPerRound).toEqual([590, 7]);
    expect(worstCaseEvents(2, 597, RUN_HISTORY, 590)).toBe(8 + 2 * 16 + 590 * 42 + 7 * 24); // 24,988
    expect(worstCaseEvents(2, 597, RUN_HISTORY, 590)).toBeLessThanOrEqual(RUN_HISTORY.limit);
    expect(coverage.gaps.filter((g) => g.notFollowedUp === 'history_bound')).toHaveLength(583);
  });
});

describe('a 1,000-subtask run in which 600 subtasks time out and are retried ends closed, never running', () => {
  const request = (policy?: RunRequestInput['policy']): RunRequestInput => ({ ...perIdRequest(1000, policy), split: { ...perIdRequest(1000).split!, idPrefix: 'S' } });

  it('uncapped, the retries alone would pass the limit on any path count', () => {
    // 400 finished (17) and 600 timed out (22), then 600 retries timing out again, plus 2 rounds and the start and end.
    expect(400 * 17 + 600 * 22 + 600 * 22 + 2 * 16 + 8).toBe(33_240);
    expect(33_240).toBeGreaterThan(RUN_HISTORY.limit);
  });

  it('default policy: 40 retries fit, the other 560 gaps say the history bound kept them back', () => {
    const run = simulate(request(), SIX_HUNDRED_TIME_OUT);
    const coverage = buildCoverage(run.manifest, run.outcomes, reconcile(run.manifest, run.outcomes), { closing: true });
    const bound = coverage.gaps.filter((g) => g.notFollowedUp === 'history_bound');

    expect(run.dispatchedPerRound).toEqual([1000, 40]);
    expect(run.worstEvents).toBe(8 + 2 * 16 + 1040 * 24); // exactly 25,000
    expect(run.worstEvents).toBeLessThanOrEqual(RUN_HISTORY.limit);
    expect(coverage.gaps).toHaveLength(600);
    expect(bound).toHaveLength(560);
    expect(bound[0]).toEqual({ ids: ['acct-00040'], kind: 'unread', subtaskId: 'S41', reason: 'timed_out', status: 'unchecked', notFollowedUp: 'history_bound' });
    // The 40 that were retried timed out again and used their one retry: plain timed-out gaps.
    expect(coverage.gaps.find((g) => g.subtaskId === 'S1.r2')).toEqual({ ids: ['acct-00000'], kind: 'unread', subtaskId: 'S1.r2', reason: 'timed_out', status: 'unchecked' });
    expect(coverage.statement).toContain('560 retries and re-checks the policy allowed were not dispatched: the run\'s execution history (at most 25,000 events across all rounds) had no room left.');
  });

  it('maxRounds 3 with two retries: round 3 has no room, so the run closes after round 2 and all 600 say so', () => {
    const run = simulate(request({ retry: { timed_out: 2, invalid: 1, empty: 0 }, maxRounds: 3 }), SIX_HUNDRED_TIME_OUT);
    const coverage = buildCoverage(run.manifest, run.outcomes, reconcile(run.manifest, run.outcomes), { closing: true });

    expect(run.rounds).toBe(2);
    expect(run.dispatchedPerRound).toEqual([1000, 40]);
    expect(run.worstEvents).toBe(25_000); // 8 + 2 × 16 + 1,040 × 24: a third round's 16 events leave no room for a subtask
    expect(coverage.gaps.filter((g) => g.notFollowedUp === 'history_bound')).toHaveLength(600);
    // Read before the run closes (not closing), round 2's own timeouts are not yet known to be left out.
    expect(buildCoverage(run.manifest, run.outcomes).gaps.filter((g) => g.notFollowedUp === 'history_bound')).toHaveLength(560);
  });

  it('names the bound in the gap itself: a tax quarter whose retry does not fit', () => {
    // Room after round 1 of four: ⌊(159 − 8 − 2 × 16 − 4 × 24) / 24⌋ = ⌊23 / 24⌋ = 0.
    const tight: RunHistory = { ...RUN_HISTORY, limit: 159 };
    const manifest = taxManifest();
    const outcomes = fullQuarters({ C: ended('C', 'timed_out') });
    expect(planNextRound(manifest, outcomes, reconcile(manifest, outcomes), tight)).toEqual([]);
    const coverage = buildCoverage(manifest, outcomes, reconcile(manifest, outcomes), { closing: true, history: tight });
    expect(coverage.gaps).toEqual([
      { from: '2025-07-01', toExclusive: '2025-10-01', kind: 'unread', subtaskId: 'C', reason: 'timed_out', status: 'unchecked', notFollowedUp: 'history_bound' },
    ]);
    expect(coverage.statement).toBe(
      'Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-07-01 to 2025-09-30) not read: C timed out; not retried: no room left in the run\'s history. ' +
        'One retry or re-check the policy allowed was not dispatched: the run\'s execution history (at most 25,000 events across all rounds) had no room left. ' +
        'Not covered: C (monthly statements, required) timed out. Question q1 unanswered.',
    );
    // An aborted or cancelled run never planned the next round, so nothing is said about it;
    // nor when there was room: a manifest that simply lacks C.r2 is not blamed on the bound.
    expect(buildCoverage(manifest, outcomes, undefined, { history: tight }).gaps[0]?.notFollowedUp).toBeUndefined();
    expect(buildCoverage(manifest, outcomes, undefined, { closing: true }).gaps[0]?.notFollowedUp).toBeUndefined();
  });

  it('required retries get the room first, in the order they were planned', () => {
    const plan = validateRunRequest(request(), testCatalog, PLAN_OPTIONS);
    if (!plan.ok) throw new Error('plan refused');
    // S561…S600 are required: they take the 40 places ahead of the optional S1…S560.
    const subtasks = plan.subtasks.map((s, i) => (i >= 560 && i < 600 ? { ...s, required: true, justification: 'this account is audited' } : s));
    const manifest = Manifest.parse({ universe: plan.request.universe, subtasks, policy: plan.request.policy });
    const next = planNextRound(manifest, subtasks.map(SIX_HUNDRED_TIME_OUT));
    expect(next.map((s) => s.id)).toEqual(Array.from({ length: 40 }, (_, i) => `S${561 + i}.r2`));
  });
});

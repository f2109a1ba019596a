import { describe, expect, it } from 'vitest';
import { Manifest, type DispatchedSubtask, type Outcome, type RunRequestInput } from '../../lib/contract';
import {
  DEFAULT_ROUND_PATHS,
  RUN_HISTORY,
  batchBound,
  batchCount,
  buildCoverage,
  firstRoundCapacity,
  nextRoundRoom,
  roundModes,
  roundSizes,
  type RoundPaths,
  firstRoundBound,
  followUpRoom,
  planFollowUps,
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
    // ⌊(25,000 − 8 − R × 18) / 24⌋
    expect(firstRoundBound(1)).toBe(1040); // 24,974 / 24 = 1,040.58
    expect(firstRoundBound(2)).toBe(1039); // 24,956 / 24 = 1,039.83
    expect(firstRoundBound(5)).toBe(1037); // 24,902 / 24 = 1,037.58
    expect(firstRoundBound(2, SMALL_HISTORY)).toBe(102); // 2,456 / 24 = 102.33
  });

  it('counts a subtask that declares a hedge at its costlier path (42 events, Hedge and a second pass)', () => {
    expect(RUN_HISTORY.worstHedgedSubtask).toBe(42);
    expect(worstCaseEvents(2, 10, RUN_HISTORY, 4)).toBe(8 + 2 * 18 + 6 * 24 + 4 * 42);
    expect(worstCaseEvents(2, 10, RUN_HISTORY, 0)).toBe(worstCaseEvents(2, 10));
    // ⌊(25,000 − 8 − 2 × 18 − 500 × 42) / 24⌋ = ⌊3,956 / 24⌋ = 164, where 500 plain subtasks leave ⌊12,956 / 24⌋ = 539.
    expect(followUpRoom(1, 500, RUN_HISTORY, 500)).toBe(164);
    expect(followUpRoom(1, 500)).toBe(539);
  });

  it('leaves follow-up rounds only what the rounds before them did not use', () => {
    expect(worstCaseEvents(1, 1000)).toBe(8 + 18 + 24_000);
    expect(followUpRoom(1, 1000)).toBe(39); // ⌊(25,000 − 8 − 36 − 24,000) / 24⌋ = ⌊956 / 24⌋
    expect(followUpRoom(2, 1039)).toBe(0); // 25,000 − 8 − 54 − 24,936 = 2 < 24
    expect(followUpRoom(1, 10)).toBe(1029); // ⌊(25,000 − 8 − 36 − 240) / 24⌋ = ⌊1,029.8⌋
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
        message:
          "the plan makes 103 subtasks; one run's execution history (2,500 events) holds at most 102 subtasks with maxRounds 2, counting 24 events per subtask and 18 per round",
      },
    ]);
  });

  it('reserves more rounds when the policy allows more: 100 subtasks with maxRounds 5', () => {
    const options = { ...PLAN_OPTIONS, history: SMALL_HISTORY };
    const policy = { maxRounds: 5 };
    // ⌊(2,500 − 8 − 5 × 18) / 24⌋ = ⌊100.08⌋
    expect(validateRunRequest(perIdRequest(100, policy), testCatalog, options).ok).toBe(true);
    const past = validateRunRequest(perIdRequest(101, policy), testCatalog, options);
    expect(past.ok ? [] : past.problems.map((p) => p.message)).toEqual([expect.stringContaining('at most 100 subtasks with maxRounds 5')]);
  });

  it('counts hedged subtasks at 42 events: 594 fit with maxRounds 2, 595 are refused naming the hedges', () => {
    const hedged = (n: number): RunRequestInput => {
      const request = perIdRequest(n);
      return { ...request, split: { ...request.split!, hedge: { afterSeconds: 5, mode: 'replicate' } } };
    };
    // 8 + 2 × 18 + 594 × 42 = 24,992 ≤ 25,000; one more is 25,034. Without hedges 1,039 would fit.
    expect(validateRunRequest(hedged(594), testCatalog, PLAN_OPTIONS).ok).toBe(true);
    const past = validateRunRequest(hedged(595), testCatalog, PLAN_OPTIONS);
    expect(past.ok ? [] : past.problems).toEqual([
      {
        code: 'plan_too_large',
        path: 'split',
        message:
          "the plan makes 595 subtasks; one run's execution history (25,000 events) holds at most 1039 subtasks with maxRounds 2, counting 24 events per subtask " +
          'and 18 per round; 595 of them declare a hedge, counted at 42 events each, so this plan needs 25,034 events',
      },
    ]);
    expect(validateRunRequest(perIdRequest(595), testCatalog, PLAN_OPTIONS).ok).toBe(true);
  });

  it('with one execution for the whole run (no batched rounds), the history bound is the lower: 1,039 accepted, 1,040 refused', () => {
    expect(validateRunRequest(perIdRequest(1039), testCatalog, PLAN_OPTIONS).ok).toBe(true);
    const past = validateRunRequest(perIdRequest(1040), testCatalog, PLAN_OPTIONS);
    expect(past.ok ? [] : past.problems.map((p) => p.message)).toEqual([expect.stringContaining('holds at most 1039 subtasks with maxRounds 2')]);
  });

  it('with batched rounds, the contract’s 10,000 is the lower bound: 10,001 is refused, 10,000 accepted', () => {
    const options = { ...PLAN_OPTIONS, paths: DEFAULT_ROUND_PATHS };
    expect(validateRunRequest(perIdRequest(10_000), testCatalog, options).ok).toBe(true);
    const past = validateRunRequest(perIdRequest(10_001), testCatalog, options);
    expect(past.ok ? [] : past.problems).toEqual([
      { code: 'plan_too_large', path: 'split', message: 'the split makes 10001 subtasks; at most 10000 are allowed' },
    ]);
  });

  it('with batched rounds, a plan one past the bound of the run’s execution is refused naming the bound; the bound itself is accepted', () => {
    // ⌊(2,500 − 8 − 2 × 18) / 8⌋ = 307 batches of 5 = 1,535 subtasks.
    const options = { ...PLAN_OPTIONS, history: SMALL_HISTORY, paths: { batchSubtasks: 5, inlineSubtasks: 10 } };
    expect(firstRoundCapacity(2, options.paths, SMALL_HISTORY)).toBe(1535);
    expect(validateRunRequest(perIdRequest(1535), testCatalog, options).ok).toBe(true);
    const past = validateRunRequest(perIdRequest(1536), testCatalog, options);
    expect(past.ok ? [] : past.problems).toEqual([
      {
        code: 'plan_too_large',
        path: 'split',
        message:
          "the plan makes 1536 subtasks; one run's execution history (2,500 events) holds at most 1535 subtasks in batches of 5 with maxRounds 2, " +
          'counting 8 events per batch and 18 per round',
      },
    ]);
  });
});

interface Simulated {
  readonly manifest: Manifest;
  readonly outcomes: Outcome[];
  readonly rounds: number;
  readonly dispatchedPerRound: number[];
  /** What the history bound counts: every round's overhead, the costliest ending, every subtask at its costliest path. */
  readonly worstEvents: number;
  /** What the plans of the dispatched rounds cut, as the ledger keeps it with each round. */
  readonly stored: string[];
  /** What the closing boundary's plan cut, as Reconcile decides it when the run closes. */
  readonly closingCut: string[];
}

/**
 * The run loop of the state machine, at the domain level: Dispatch a round (round 1: the plan;
 * later: planNextRound, the same call the dispatch and reconcile functions make), give each
 * subtask the outcome `outcomeOf` says, Reconcile, and go round again while planNextRound is not
 * empty. Stops with an error at round 6, past any policy, so a run that never closes fails.
 */
const simulate = (request: RunRequestInput, outcomeOf: (subtask: DispatchedSubtask) => Outcome, paths?: RoundPaths): Simulated => {
  const plan = validateRunRequest(request, testCatalog, { ...PLAN_OPTIONS, ...(paths ? { paths } : {}) });
  if (!plan.ok) throw new Error(plan.problems[0]?.message);
  let manifest = Manifest.parse({ universe: plan.request.universe, subtasks: plan.subtasks, policy: plan.request.policy, sources: sourcesOf(testCatalog) });
  let round = plan.subtasks;
  const outcomes: Outcome[] = [];
  const dispatchedPerRound: number[] = [];
  const stored: string[] = [];
  for (let rounds = 1; rounds <= 5; rounds += 1) {
    dispatchedPerRound.push(round.length);
    outcomes.push(...round.map(outcomeOf));
    const next = planFollowUps(manifest, outcomes, undefined, undefined, paths);
    const worstEvents = paths
      ? roundModes(roundSizes(manifest.subtasks), plan.request.policy.maxRounds, paths).events
      : worstCaseEvents(rounds, manifest.subtasks.length);
    if (next.subtasks.length === 0) return { manifest, outcomes, rounds, dispatchedPerRound, worstEvents, stored, closingCut: next.notFollowedUp };
    stored.push(...next.notFollowedUp);
    manifest = Manifest.parse({ ...manifest, subtasks: [...manifest.subtasks, ...next.subtasks] });
    round = next.subtasks;
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
    const coverage = buildCoverage(run.manifest, run.outcomes, reconcile(run.manifest, run.outcomes), { notFollowedUp: [...run.stored, ...run.closingCut] });

    // ⌊(25,000 − 8 − 2 × 18 − 590 × 42) / 24⌋ = ⌊176 / 24⌋ = 7 (counted as plain subtasks it would be 449).
    expect(run.dispatchedPerRound).toEqual([590, 7]);
    expect(worstCaseEvents(2, 597, RUN_HISTORY, 590)).toBe(8 + 2 * 18 + 590 * 42 + 7 * 24); // 24,992
    expect(worstCaseEvents(2, 597, RUN_HISTORY, 590)).toBeLessThanOrEqual(RUN_HISTORY.limit);
    expect(coverage.gaps.filter((g) => g.notFollowedUp === 'history_bound')).toHaveLength(583);
  });
});

describe('a 1,000-subtask run in which 600 subtasks time out and are retried ends closed, never running', () => {
  const request = (policy?: RunRequestInput['policy']): RunRequestInput => ({
    ...perIdRequest(1000, policy),
    split: { ...perIdRequest(1000).split!, idPrefix: 'S' },
  });

  it('uncapped, the retries alone would pass the limit on any path count', () => {
    // 400 finished (17) and 600 timed out (22), then 600 retries timing out again, plus 2 rounds and the start and end.
    expect(400 * 17 + 600 * 22 + 600 * 22 + 2 * 18 + 8).toBe(33_244);
    expect(33_244).toBeGreaterThan(RUN_HISTORY.limit);
  });

  it('one execution for the whole run, default policy: 39 retries fit, the other 561 gaps say the history bound kept them back', () => {
    const run = simulate(request(), SIX_HUNDRED_TIME_OUT);
    const coverage = buildCoverage(run.manifest, run.outcomes, reconcile(run.manifest, run.outcomes), { notFollowedUp: [...run.stored, ...run.closingCut] });
    const bound = coverage.gaps.filter((g) => g.notFollowedUp === 'history_bound');

    expect(run.dispatchedPerRound).toEqual([1000, 39]);
    expect(run.worstEvents).toBe(8 + 2 * 18 + 1039 * 24); // 24,980
    expect(run.worstEvents).toBeLessThanOrEqual(RUN_HISTORY.limit);
    expect(coverage.gaps).toHaveLength(600);
    expect(bound).toHaveLength(561);
    expect(bound[0]).toEqual({
      ids: ['acct-00039'],
      kind: 'unread',
      subtaskId: 'S40',
      reason: 'timed_out',
      status: 'unchecked',
      notFollowedUp: 'history_bound',
    });
    // The 40 that were retried timed out again and used their one retry: plain timed-out gaps.
    expect(coverage.gaps.find((g) => g.subtaskId === 'S1.r2')).toEqual({
      ids: ['acct-00000'],
      kind: 'unread',
      subtaskId: 'S1.r2',
      reason: 'timed_out',
      status: 'unchecked',
    });
    expect(coverage.statement).toContain(
      "561 retries and re-checks the policy allowed were not dispatched: the run's execution history (at most 25,000 events across all rounds) had no room left.",
    );
  });

  it('one execution, maxRounds 3 with two retries: round 3 has no room, so the run closes after round 2 and all 600 say so', () => {
    const run = simulate(request({ retry: { timed_out: 2, invalid: 1, empty: 0 }, maxRounds: 3 }), SIX_HUNDRED_TIME_OUT);
    const coverage = buildCoverage(run.manifest, run.outcomes, reconcile(run.manifest, run.outcomes), { notFollowedUp: [...run.stored, ...run.closingCut] });

    expect(run.rounds).toBe(2);
    expect(run.dispatchedPerRound).toEqual([1000, 39]);
    expect(run.worstEvents).toBe(24_980); // 8 + 2 × 18 + 1,039 × 24: a third round's 18 events leave 2, no room for a subtask
    expect(coverage.gaps.filter((g) => g.notFollowedUp === 'history_bound')).toHaveLength(600);
    // Read before the run closes, only what round 2's plan cut is known (stored with round 2); round 2's own timeouts are not.
    expect(run.stored).toHaveLength(561);
    expect(run.closingCut).toHaveLength(600);
    const beforeClosing = buildCoverage(run.manifest, run.outcomes, undefined, { notFollowedUp: run.stored });
    expect(beforeClosing.gaps.filter((g) => g.notFollowedUp === 'history_bound')).toHaveLength(561);
  });

  it('names the bound in the gap itself: a tax quarter whose retry does not fit', () => {
    // Room after round 1 of four: ⌊(159 − 8 − 2 × 18 − 4 × 24) / 24⌋ = ⌊19 / 24⌋ = 0.
    const tight: RunHistory = { ...RUN_HISTORY, limit: 159 };
    const manifest = taxManifest();
    const outcomes = fullQuarters({ C: ended('C', 'timed_out') });
    const next = planFollowUps(manifest, outcomes, reconcile(manifest, outcomes), tight);
    expect(next).toEqual({ subtasks: [], notFollowedUp: ['C.r2'] });
    const coverage = buildCoverage(manifest, outcomes, reconcile(manifest, outcomes), { notFollowedUp: next.notFollowedUp });
    expect(coverage.gaps).toEqual([
      {
        from: '2025-07-01',
        toExclusive: '2025-10-01',
        kind: 'unread',
        subtaskId: 'C',
        reason: 'timed_out',
        status: 'unchecked',
        notFollowedUp: 'history_bound',
      },
    ]);
    expect(coverage.statement).toBe(
      "Coverage: 2025-01-01 to 2025-12-31, four partitions, no overlaps. One gap (2025-07-01 to 2025-09-30) not read: C timed out; not retried: no room left in the run's history. " +
        "One retry or re-check the policy allowed was not dispatched: the run's execution history (at most 25,000 events across all rounds) had no room left. " +
        'Not covered: C (monthly statements, required) timed out. Question q1 unanswered.',
    );
    // An aborted or cancelled run never planned the next round, so nothing is said about it;
    // nor when there was room: the plan cut nothing, and a manifest that lacks C.r2 is not blamed on the bound.
    expect(buildCoverage(manifest, outcomes).gaps[0]?.notFollowedUp).toBeUndefined();
    expect(planFollowUps(manifest, outcomes).notFollowedUp).toEqual([]);
    // A cut that a later round dispatched after all is not reported either.
    const retry = { ...manifest.subtasks[2]!, id: 'C.r2', round: 2, lineage: { kind: 'retry' as const, of: 'C', attempt: 2 } };
    const retried = Manifest.parse({ ...manifest, subtasks: [...manifest.subtasks, retry] });
    expect(buildCoverage(retried, outcomes, undefined, { notFollowedUp: ['C.r2'] }).gaps.some((g) => g.notFollowedUp !== undefined)).toBe(false);
  });

  it('required retries get the room first, in the order they were planned', () => {
    const plan = validateRunRequest(request(), testCatalog, PLAN_OPTIONS);
    if (!plan.ok) throw new Error('plan refused');
    // S561…S600 are required: 39 of them take the 39 places ahead of the optional S1…S560.
    const subtasks = plan.subtasks.map((s, i) => (i >= 560 && i < 600 ? { ...s, required: true, justification: 'this account is audited' } : s));
    const manifest = Manifest.parse({ universe: plan.request.universe, subtasks, policy: plan.request.policy });
    const next = planNextRound(manifest, subtasks.map(SIX_HUNDRED_TIME_OUT));
    expect(next.map((s) => s.id)).toEqual(Array.from({ length: 39 }, (_, i) => `S${561 + i}.r2`));
  });

  it('with batched rounds, all 600 retries are dispatched as a batched round and the run closes inside the bound', () => {
    const run = simulate(request(), SIX_HUNDRED_TIME_OUT, DEFAULT_ROUND_PATHS);
    const coverage = buildCoverage(run.manifest, run.outcomes, reconcile(run.manifest, run.outcomes), { notFollowedUp: [...run.stored, ...run.closingCut] });

    expect(run.dispatchedPerRound).toEqual([1000, 600]);
    // Round 1 inline (1,000 ≤ 1,000, and 8 + 2 × 18 + 24,000 fits); round 2's 600 × 24 = 14,400 do not fit the 956 left: 2 batches.
    expect(roundModes(roundSizes(run.manifest.subtasks), 2, DEFAULT_ROUND_PATHS).modes).toEqual(['inline', 'batched']);
    expect(run.worstEvents).toBe(8 + 2 * 18 + 1000 * 24 + 2 * 8); // 24,060
    expect(coverage.gaps.filter((g) => g.notFollowedUp === 'history_bound')).toHaveLength(0);
    // Every retry timed out again and used its one retry: 600 plain timed-out gaps.
    expect(coverage.gaps).toHaveLength(600);
  });
});

describe('round paths: inline while the round fits, batched past it (worked by hand)', () => {
  const paths = { batchSubtasks: 500, inlineSubtasks: 1000 };

  it('a round larger than inlineSubtasks is batched, in ⌈n / 500⌉ batches of 8 events each', () => {
    expect(batchCount(1200, 500)).toBe(3);
    expect(roundModes([{ subtasks: 1200, hedged: 0 }], 2, paths)).toEqual({ modes: ['batched'], events: 8 + 18 + 3 * 8 });
    expect(roundModes([{ subtasks: 10_000, hedged: 0 }], 5, paths)).toEqual({ modes: ['batched'], events: 8 + 18 + 20 * 8 });
  });

  it('a round within inlineSubtasks stays inline unless its worst case does not fit: 594 hedged fit, 595 are batched', () => {
    expect(roundModes([{ subtasks: 1000, hedged: 0 }], 2, paths).modes).toEqual(['inline']);
    expect(roundModes([{ subtasks: 594, hedged: 594 }], 2, paths).modes).toEqual(['inline']); // 8 + 36 + 24,948 = 24,992
    expect(roundModes([{ subtasks: 595, hedged: 595 }], 2, paths).modes).toEqual(['batched']); // 25,034 does not fit
    expect(roundModes([{ subtasks: 1000, hedged: 0 }], 2).modes).toEqual(['inline']); // without paths, always inline
  });

  it('the next round’s room counts whole batches of what the rounds before left', () => {
    // After an inline round of 1,000: 25,000 − 8 − 2 × 18 − 24,000 = 956 events, ⌊956 / 8⌋ = 119 batches.
    expect(nextRoundRoom([{ subtasks: 1000, hedged: 0 }], 2, paths)).toBe(119 * 500);
    expect(nextRoundRoom([{ subtasks: 1000, hedged: 0 }], 2)).toBe(39); // inline only: ⌊956 / 24⌋
    // After a batched round of 10,000 (20 batches): 25,000 − 8 − 2 × 18 − 160 = 24,796, ⌊24,796 / 8⌋ = 3,099 batches.
    expect(nextRoundRoom([{ subtasks: 10_000, hedged: 0 }], 5, paths)).toBe(3099 * 500);
  });

  it('a batch holds at most 594 subtasks: every one hedged on its costliest path fits a child’s history', () => {
    expect(batchBound()).toBe(594); // ⌊(25,000 − 13) / 42⌋
    expect(594 * 42 + 13).toBeLessThanOrEqual(25_000);
    expect(595 * 42 + 13).toBeGreaterThan(25_000);
  });
});

import { describe, expect, it } from 'vitest';
import type { RunRequestInput } from '../../lib/contract';
import { runToEnd, subtask } from './target';

/*
 * A `subdivide` hedge whose winning piece leaves a gap (docs/hedging.md): the gap is followed up
 * in the next round like any other observed gap. X is one `chaos` subtask over p1–p4 whose
 * original sleeps 8 s, so its two pieces (X.h1 over p1–p2, X.h2 over p3–p4) win the race; the
 * source has no record for p2, so X.h1 observes p1 only and leaves the gap p2. The re-check
 * X.h1.g1 inherits X's input, so it reads no id of its scope either: having asked its source
 * nothing it ends `ok` with an empty observation. `chaos` declares no alternate source, so the
 * re-check is by the kind that left the gap, which can never confirm it empty: the gap is
 * `unconfirmed_empty` with 0 records, and the answer incomplete. X is not required, so the run
 * succeeds, degraded, with every follow-up the policy asked for dispatched.
 */

const X_IDS = ['p1', 'p2', 'p3', 'p4'];
const Y_IDS = ['p5', 'p6', 'p7', 'p8'];

const hedged = {
  id: 'X',
  worker: 'chaos',
  scope: { ids: X_IDS },
  input: { modelCalls: 1, slowOriginalSeconds: 8, absent: ['p2'] },
  deadlineSeconds: 30,
  budget: { modelCalls: 4, estimatedCostPerCall: 1 },
  hedge: { afterSeconds: 2, mode: 'subdivide', copies: 2 },
} as const;

/** A subtask whose first attempt returns malformed findings (`invalid`) and whose retry runs clean. */
const retried = {
  id: 'Y',
  worker: 'chaos',
  scope: { ids: Y_IDS },
  input: { fault: 'malformed', faultAttempts: 'first' },
  deadlineSeconds: 30,
  budget: { modelCalls: 1, estimatedCostPerCall: 1 },
} as const;

const request = (maxRounds: number, withRetry: boolean): RunRequestInput => ({
  goal: 'Hedge: a winning piece leaves a gap',
  universe: { dimension: 'ids', ids: withRetry ? [...X_IDS, ...Y_IDS] : X_IDS },
  subtasks: withRetry ? [hedged, retried] : [hedged],
  policy: { retry: { timed_out: 0, invalid: 1, empty: 0 }, maxRounds },
  budget: { modelCalls: 20, costLimit: 20 },
});

/** The gap X.h1 left, as the answer reports it once X.h1.g1 re-checked it. */
const P2_GAP = {
  ids: ['p2'],
  kind: 'observed',
  subtaskId: 'X.h1',
  status: 'unconfirmed_empty',
  records: 0,
  recheckedAgainst: 'chaos',
  recheckSubtaskId: 'X.h1.g1',
};

describe('a subdivide hedge whose winning piece leaves a gap', () => {
  it('re-checks the piece’s gap in round 2, and the run closes normally', async () => {
    const run = await runToEnd(request(2, false));

    expect(run.status).toBe('succeeded');
    expect(run.error).toBeUndefined();
    expect(run.round).toBe(2);
    expect(subtask(run, 'X').hedgeWinner).toEqual({ by: 'pieces', ids: ['X.h1', 'X.h2'] });
    expect(subtask(run, 'X').hedgeCopies).toEqual([
      { id: 'X.h1', assigned: { ids: ['p1', 'p2'] }, state: 'ok' },
      { id: 'X.h2', assigned: { ids: ['p3', 'p4'] }, state: 'ok' },
    ]);
    expect(run.subtasks.map((s) => `${s.id}:r${s.round}:${s.state}`)).toEqual(['X:r1:ok', 'X.h1.g1:r2:ok']);
    expect(subtask(run, 'X.h1.g1').assigned).toEqual({ ids: ['p2'] });
    // The original's call, one per piece (all on X's allowance), and the re-check's own.
    expect(run.usage).toEqual({ modelCalls: 4, estimatedCost: 4 });
    expect(run.answer?.coverage.gaps).toEqual([P2_GAP]);
    expect(run.answer?.coverage.complete).toBe(false);
  });

  it('beside a retried subtask: round 2 holds the retry and the re-check', async () => {
    const run = await runToEnd(request(2, true));

    expect(run.status).toBe('succeeded');
    expect(run.error).toBeUndefined();
    // Retries are planned before re-checks.
    expect(run.subtasks.map((s) => `${s.id}:r${s.round}:${s.state}`)).toEqual(['X:r1:ok', 'Y:r1:invalid', 'Y.r2:r2:ok', 'X.h1.g1:r2:ok']);
    expect(subtask(run, 'Y.r2').observed).toEqual({ ids: Y_IDS, recordCount: 4 });
    // Y's retry read p5–p8, so the only gap is p2, and it was followed up.
    expect(run.answer?.coverage.gaps).toEqual([P2_GAP]);
    expect(run.answer?.coverage.gaps.some((g) => g.notFollowedUp !== undefined)).toBe(false);
  });

  it('with a third round allowed, the re-check is neither retried nor re-checked, and no empty round is dispatched', async () => {
    const run = await runToEnd(request(3, true));

    expect(run.status).toBe('succeeded');
    expect(run.error).toBeUndefined();
    expect(run.round).toBe(2);
    expect(run.subtasks.map((s) => s.id)).toEqual(['X', 'Y', 'Y.r2', 'X.h1.g1']);
    expect(run.answer?.coverage.gaps).toEqual([P2_GAP]);
  });
});

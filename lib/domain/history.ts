/**
 * The history arithmetic of one run's Standard execution. Every round of a run (Dispatch, the
 * Map of its subtasks, Reconcile) lives in the same execution, and Step Functions fails an
 * execution whose history passes 25,000 events, outside every Catch. The planner keeps every
 * run inside that limit across ALL its rounds by counting the worst case: every round's
 * overhead, the costliest way out, and every subtask ever dispatched at the costliest path
 * through its iteration. See docs/deadlines.md, "History bound across rounds".
 *
 * The figures are counted on the state machine CDK synthesizes; `test/infra/history-bound.test.ts`
 * walks the synthesized definition and proves each one. This module stays CDK-free so the pure
 * planner can read it.
 */
export interface RunHistory {
  /** Step Functions' hard limit on one execution's history events. */
  readonly limit: number;
  /** Once per run: ExecutionStarted and its end (2), plus the costliest ending, Finalize then RunFailed (6). */
  readonly perRun: number;
  /** Once per round: Dispatch (5), the AwaitSubtasks Map state (4), Reconcile (5), NextRound? (2). */
  readonly perRound: number;
  /** A subtask whose outcome releases Await: Arm, IsSubtaskOpen, Await, SubtaskDone, and its Map iteration. */
  readonly finishedSubtask: number;
  /** A subtask that reaches its deadline: Arm, IsSubtaskOpen, Await (times out), Seal, SubtaskSealed, and its Map iteration. */
  readonly timedOutSubtask: number;
  /**
   * The costliest path of one subtask: Await fails, WaitForDeadline waits out the instant, then
   * Seal and SubtaskSealed. The ledger cannot tell afterwards which path an iteration took (a lost
   * task token turns a finished subtask into a sealed one), so the bound counts every subtask so.
   */
  readonly worstSubtask: number;
  /**
   * The costliest path of a subtask that declares a hedge: Arm, IsSubtaskOpen, AwaitHedge (the
   * hedge comes due), Hedge, then the second pass, which Arm answers without `hedgeSeconds` once
   * the race started (Arm, IsSubtaskOpen, Await fails, WaitForDeadline, Seal, SubtaskSealed).
   * Counted for every hedged subtask of a plan; only a first-round subtask can declare a hedge.
   */
  readonly worstHedgedSubtask: number;
}

/** The callback design's arithmetic (one inline Map per round, one Standard execution per run). */
export const RUN_HISTORY: RunHistory = {
  limit: 25_000,
  perRun: 8,
  perRound: 16,
  finishedSubtask: 17,
  timedOutSubtask: 22,
  worstSubtask: 24,
  worstHedgedSubtask: 42,
};

/**
 * The worst-case history of a run that dispatched `subtasks` subtasks over `rounds` rounds,
 * `hedged` of them declaring a hedge (counted at {@link RunHistory.worstHedgedSubtask}).
 *
 * @example
 * worstCaseEvents(2, 1040) // 8 + 2 × 16 + 1040 × 24 = 25,000
 * worstCaseEvents(2, 10, RUN_HISTORY, 4) // 8 + 2 × 16 + 6 × 24 + 4 × 42 = 352
 */
export const worstCaseEvents = (rounds: number, subtasks: number, history: RunHistory = RUN_HISTORY, hedged = 0): number =>
  history.perRun + rounds * history.perRound + (subtasks - hedged) * history.worstSubtask + hedged * history.worstHedgedSubtask;

/**
 * The most subtasks a first round may dispatch so that the run, with the overhead of every round
 * its policy allows reserved, never passes the limit even if every subtask takes the costliest path.
 * Follow-up subtasks fit into what the first round leaves (see {@link followUpRoom}).
 *
 * @example
 * firstRoundBound(2) // ⌊(25,000 − 8 − 2 × 16) / 24⌋ = 1040
 */
export const firstRoundBound = (maxRounds: number, history: RunHistory = RUN_HISTORY): number =>
  Math.max(0, Math.floor((history.limit - history.perRun - maxRounds * history.perRound) / history.worstSubtask));

/**
 * Whether a first round of `subtasks` subtasks, `hedged` of them with a hedge, fits the history
 * with the overhead of every round its policy allows reserved. Without hedges this is exactly
 * `subtasks <= firstRoundBound(maxRounds)`.
 *
 * @example
 * firstRoundFits(2, 594, 594) // 8 + 2 × 16 + 594 × 42 = 24,988: fits
 * firstRoundFits(2, 595, 595) // 25,030: does not
 */
export const firstRoundFits = (maxRounds: number, subtasks: number, hedged: number, history: RunHistory = RUN_HISTORY): boolean =>
  worstCaseEvents(maxRounds, subtasks, history, hedged) <= history.limit;

/**
 * How many subtasks the next round may dispatch, after `rounds` rounds that dispatched
 * `subtasks` subtasks in all (`hedged` of them with a hedge), so that the cumulative worst case
 * stays within the limit. Follow-ups never declare a hedge, so each counts as a plain subtask.
 *
 * @example
 * followUpRoom(1, 1000) // ⌊(25,000 − 8 − 2 × 16 − 1000 × 24) / 24⌋ = 40
 */
export const followUpRoom = (rounds: number, subtasks: number, history: RunHistory = RUN_HISTORY, hedged = 0): number =>
  Math.max(0, Math.floor((history.limit - worstCaseEvents(rounds + 1, subtasks, history, hedged)) / history.worstSubtask));

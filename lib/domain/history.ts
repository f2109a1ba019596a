import type { DispatchedSubtask } from '../contract';

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
  /** Once per round: Dispatch (5), IsBatched? (2), the AwaitSubtasks or AwaitBatches Map state (4), Reconcile (5), NextRound? (2). */
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
  perRound: 18,
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
 * worstCaseEvents(2, 1039) // 8 + 2 × 18 + 1039 × 24 = 24,980
 * worstCaseEvents(2, 10, RUN_HISTORY, 4) // 8 + 2 × 18 + 6 × 24 + 4 × 42 = 356
 */
export const worstCaseEvents = (rounds: number, subtasks: number, history: RunHistory = RUN_HISTORY, hedged = 0): number =>
  history.perRun + rounds * history.perRound + (subtasks - hedged) * history.worstSubtask + hedged * history.worstHedgedSubtask;

/**
 * The most subtasks a first round may dispatch so that the run, with the overhead of every round
 * its policy allows reserved, never passes the limit even if every subtask takes the costliest path.
 * Follow-up subtasks fit into what the first round leaves (see {@link followUpRoom}).
 *
 * @example
 * firstRoundBound(2) // ⌊(25,000 − 8 − 2 × 18) / 24⌋ = 1039
 */
export const firstRoundBound = (maxRounds: number, history: RunHistory = RUN_HISTORY): number =>
  Math.max(0, Math.floor((history.limit - history.perRun - maxRounds * history.perRound) / history.worstSubtask));

/**
 * Whether a first round of `subtasks` subtasks, `hedged` of them with a hedge, fits the history
 * with the overhead of every round its policy allows reserved. Without hedges this is exactly
 * `subtasks <= firstRoundBound(maxRounds)`.
 *
 * @example
 * firstRoundFits(2, 594, 594) // 8 + 2 × 18 + 594 × 42 = 24,992: fits
 * firstRoundFits(2, 595, 595) // 25,034: does not
 */
export const firstRoundFits = (maxRounds: number, subtasks: number, hedged: number, history: RunHistory = RUN_HISTORY): boolean =>
  worstCaseEvents(maxRounds, subtasks, history, hedged) <= history.limit;

/**
 * How many subtasks the next round may dispatch, after `rounds` rounds that dispatched
 * `subtasks` subtasks in all (`hedged` of them with a hedge), so that the cumulative worst case
 * stays within the limit. Follow-ups never declare a hedge, so each counts as a plain subtask.
 *
 * @example
 * followUpRoom(1, 1000) // ⌊(25,000 − 8 − 2 × 18 − 1000 × 24) / 24⌋ = 39
 */
export const followUpRoom = (rounds: number, subtasks: number, history: RunHistory = RUN_HISTORY, hedged = 0): number =>
  Math.max(0, Math.floor((history.limit - worstCaseEvents(rounds + 1, subtasks, history, hedged)) / history.worstSubtask));

/**
 * Subtasks per batch of a batched round (docs/deadlines.md, "Runs past one execution's
 * history"). A round too large for the run's own execution is written as batches of at most
 * this many subtasks, each run by a child execution of its own. The deployment may set another
 * size (`TesseraFanOut`'s `batchSubtasks`); this is its default.
 */
export const BATCH_SUBTASKS = 500;

/**
 * The largest round that keeps today's inline Map, by default (`TesseraFanOut`'s
 * `inlineSubtasks`). A round is inline only if it also fits what is left of the run's history.
 */
export const INLINE_SUBTASKS = 1000;

/** How a deployment runs a round: inline up to `inlineSubtasks`, else in batches of `batchSubtasks`. */
export interface RoundPaths {
  readonly batchSubtasks: number;
  readonly inlineSubtasks: number;
}

/** The default paths of a deployment. */
export const DEFAULT_ROUND_PATHS: RoundPaths = { batchSubtasks: BATCH_SUBTASKS, inlineSubtasks: INLINE_SUBTASKS };

/**
 * The history arithmetic of a batched round. In the run's execution, each batch is one iteration
 * of the AwaitBatches Map whose one state, StartBatch, starts the batch's child execution and
 * waits for it (`states:startExecution.sync:2`). The child runs today's per-subtask iteration, so
 * its subtasks cost what {@link RunHistory} says, plus the child's own overhead.
 */
export interface BatchHistory {
  /** In the run's execution, per batch: StartBatch (a `.sync` Task, 6) and its Map iteration (2). */
  readonly perBatch: number;
  /** In the batch's child execution, once: its start and end (2), LoadBatch (5), the Map state (4), BatchDone (2). */
  readonly perChild: number;
}

/** The batched path's figures, counted on the synthesized definitions (test/infra/history-bound.test.ts). */
export const BATCH_HISTORY: BatchHistory = { perBatch: 8, perChild: 13 };

/** How a round runs. */
export type RoundMode = 'inline' | 'batched';

/** One round as the bound counts it: its subtasks, `hedged` of them declaring a hedge. */
export interface RoundSize {
  readonly subtasks: number;
  readonly hedged: number;
}

/**
 * Worst-case events `size` leaves in the run's execution: inline, every subtask at its costliest
 * path; batched, {@link BatchHistory.perBatch} per batch (its subtasks' events are the child's).
 *
 * @example
 * roundEvents({ subtasks: 1200, hedged: 0 }, 'batched', DEFAULT_ROUND_PATHS) // 3 batches × 8 = 24
 * roundEvents({ subtasks: 10, hedged: 4 }, 'inline') // 6 × 24 + 4 × 42 = 312
 */
export const roundEvents = (
  size: RoundSize,
  mode: RoundMode,
  paths?: RoundPaths,
  history: RunHistory = RUN_HISTORY,
  batch: BatchHistory = BATCH_HISTORY,
): number =>
  mode === 'inline' || !paths
    ? (size.subtasks - size.hedged) * history.worstSubtask + size.hedged * history.worstHedgedSubtask
    : batchCount(size.subtasks, paths.batchSubtasks) * batch.perBatch;

/**
 * The batches of a round of `subtasks` subtasks.
 *
 * @example
 * batchCount(1200, 500) // 3: 500, 500 and 200
 */
export const batchCount = (subtasks: number, batchSubtasks: number): number => Math.ceil(subtasks / batchSubtasks);

/**
 * The most subtasks one batch may hold so that its child execution fits the history even if every
 * subtask declares a hedge and takes its costliest path.
 *
 * @example
 * batchBound() // ⌊(25,000 − 13) / 42⌋ = 594
 */
export const batchBound = (history: RunHistory = RUN_HISTORY, batch: BatchHistory = BATCH_HISTORY): number =>
  Math.floor((history.limit - batch.perChild) / history.worstHedgedSubtask);

/**
 * How each round of a run runs, and the worst-case events those rounds record in the run's
 * execution. Decided round by round from the sizes alone, so dispatch, the follow-up planner and
 * reconcile agree without storing it: round `k` is inline when it has at most
 * `paths.inlineSubtasks` subtasks and its inline worst case fits what the rounds before it left,
 * with the overhead reserved as the bound reserves it (round 1: every round the policy allows;
 * round `k` > 1: rounds 1…k); otherwise it is batched. Without `paths`, every round is inline.
 *
 * @example
 * roundModes([{ subtasks: 1000, hedged: 0 }, { subtasks: 600, hedged: 0 }], 2, DEFAULT_ROUND_PATHS)
 * // { modes: ['inline', 'batched'], events: 8 + 2 × 18 + 24,000 + 2 × 8 = 24,060 }
 */
export const roundModes = (
  rounds: readonly RoundSize[],
  maxRounds: number,
  paths?: RoundPaths,
  history: RunHistory = RUN_HISTORY,
  batch: BatchHistory = BATCH_HISTORY,
): { modes: RoundMode[]; events: number } => {
  let used = 0;
  const modes: RoundMode[] = [];
  rounds.forEach((size, i) => {
    const reserved = history.perRun + (i === 0 ? Math.max(maxRounds, 1) : i + 1) * history.perRound;
    const inline = roundEvents(size, 'inline', paths, history, batch);
    const mode: RoundMode = !paths || (size.subtasks <= paths.inlineSubtasks && reserved + used + inline <= history.limit) ? 'inline' : 'batched';
    modes.push(mode);
    used += roundEvents(size, mode, paths, history, batch);
  });
  return { modes, events: history.perRun + rounds.length * history.perRound + used };
};

/**
 * The most subtasks the next round may dispatch after `rounds`, so that the run's execution never
 * passes the limit: without `paths`, exactly {@link followUpRoom}; with them, whole batches of the
 * events left. Follow-ups never declare a hedge.
 *
 * @example
 * nextRoundRoom([{ subtasks: 1000, hedged: 0 }], 2) // 39: ⌊(25,000 − 8 − 2 × 18 − 24,000) / 24⌋, inline only
 * nextRoundRoom([{ subtasks: 1000, hedged: 0 }], 2, DEFAULT_ROUND_PATHS) // ⌊956 / 8⌋ = 119 batches × 500 = 59,500
 */
export const nextRoundRoom = (
  rounds: readonly RoundSize[],
  maxRounds: number,
  paths?: RoundPaths,
  history: RunHistory = RUN_HISTORY,
  batch: BatchHistory = BATCH_HISTORY,
): number => {
  const left = history.limit - roundModes(rounds, maxRounds, paths, history, batch).events - history.perRound;
  if (left <= 0) return 0;
  return paths ? Math.floor(left / batch.perBatch) * paths.batchSubtasks : Math.floor(left / history.worstSubtask);
};

/**
 * The most subtasks a first round may dispatch: on the inline path, {@link firstRoundBound}; with
 * `paths`, whole batches of what the run's execution holds once every round's overhead is reserved.
 *
 * @example
 * firstRoundCapacity(2, DEFAULT_ROUND_PATHS) // ⌊(25,000 − 8 − 36) / 8⌋ = 3,119 batches × 500 = 1,559,500
 */
export const firstRoundCapacity = (maxRounds: number, paths?: RoundPaths, history: RunHistory = RUN_HISTORY, batch: BatchHistory = BATCH_HISTORY): number =>
  paths
    ? Math.max(0, Math.floor((history.limit - history.perRun - maxRounds * history.perRound) / batch.perBatch) * paths.batchSubtasks)
    : firstRoundBound(maxRounds, history);

/**
 * The size of each round `subtasks` dispatched, rounds 1…n in order, as the history bound counts them.
 *
 * @example
 * roundSizes(manifest.subtasks) // [{ subtasks: 1000, hedged: 0 }, { subtasks: 600, hedged: 0 }]
 */
export const roundSizes = (subtasks: readonly DispatchedSubtask[]): RoundSize[] => {
  const last = subtasks.reduce((max, s) => Math.max(max, s.round), 0);
  const sizes = Array.from({ length: last }, () => ({ subtasks: 0, hedged: 0 }));
  for (const s of subtasks) {
    const size = sizes[s.round - 1]!;
    size.subtasks += 1;
    if (s.hedge !== undefined) size.hedged += 1;
  }
  return sizes;
};

import type { DispatchedSubtask, Outcome, TerminalState, UnreadReason } from '../contract';

/**
 * Id of a retry: attempt `n` of a line of work (`C.r2`, then `C.r3`; a retried re-check is
 * `B.g1.r2`).
 *
 * @example
 * retryId('C', 2) // 'C.r2'
 */
export const retryId = (originId: string, attempt: number): string => `${originId}.r${attempt}`;

/**
 * Id of the re-check of the `n`-th observed gap (1-based) left by subtask `subtaskId`.
 *
 * @example
 * recheckId('B', 1) // 'B.g1'
 */
export const recheckId = (subtaskId: string, gapNumber: number): string => `${subtaskId}.g${gapNumber}`;

/**
 * Id of hedge copy `n` (1-based) of subtask `subtaskId`: a replica or a piece (`C.h1`, `C.h2`).
 *
 * @example
 * hedgeId('C', 2) // 'C.h2'
 */
export const hedgeId = (subtaskId: string, copy: number): string => `${subtaskId}.h${copy}`;

/** The suffix of a hedge copy's id (`.h2`), as {@link hedgeId} writes it. */
export const HEDGE_SUFFIX = /\.h\d+$/;

/** Suffixes reserved for generated ids; a caller's own subtask ids may not end with one. */
export const RESERVED_ID_SUFFIX = /\.[rgh]\d+$/;

/** The state of a line of work whose latest attempt has no outcome yet. */
export const MISSING = 'missing_outcome';
export type ChainState = TerminalState | typeof MISSING;

/**
 * One line of work: a first-round subtask or a re-check, followed by its retries. Its
 * effective state is its latest attempt's.
 */
export interface AttemptChain {
  /** The first attempt: a round-1 subtask or a re-check. */
  readonly origin: DispatchedSubtask;
  /** Every attempt, first to latest. */
  readonly attempts: readonly DispatchedSubtask[];
  readonly latest: DispatchedSubtask;
  /** The latest attempt's outcome, if it has one. */
  readonly outcome: Outcome | undefined;
  readonly state: ChainState;
}

/** Lines of work of a manifest, split by what they are for. */
export interface Chains {
  /** One per round-1 subtask (the partitions), in manifest order. */
  readonly partitions: readonly AttemptChain[];
  /** One per re-check of an observed gap, in manifest order. */
  readonly rechecks: readonly AttemptChain[];
}

const attemptOf = (subtask: DispatchedSubtask): number => (subtask.lineage?.kind === 'retry' ? subtask.lineage.attempt : 1);

const chainOf = (subtasks: readonly DispatchedSubtask[], indexes: number[], outcomeOf: (index: number) => Outcome | undefined): AttemptChain => {
  if (indexes.length > 1) indexes.sort((a, b) => attemptOf(subtasks[a] as DispatchedSubtask) - attemptOf(subtasks[b] as DispatchedSubtask));
  const attempts = indexes.map((i) => subtasks[i] as DispatchedSubtask);
  const last = indexes[indexes.length - 1] as number;
  const outcome = outcomeOf(last);
  return { origin: attempts[0] as DispatchedSubtask, attempts, latest: subtasks[last] as DispatchedSubtask, outcome, state: outcome?.state ?? MISSING };
};

/**
 * Groups dispatched subtasks into lines of work. A retry joins the chain of the subtask it
 * retries (`lineage.of`); a retry whose origin is not in the manifest starts its own chain
 * among the re-checks, so it is still accounted for. `outcomeOf(i)` is the outcome of
 * `subtasks[i]` (positions rather than ids, so no id is hashed again).
 *
 * @example
 * const { partitions } = buildChains(manifest.subtasks, (i) => outcomes.get(manifest.subtasks[i].id));
 * partitions.find((c) => c.origin.id === 'C')?.latest.id // 'C.r2' once C was retried
 */
export const buildChains = (subtasks: readonly DispatchedSubtask[], outcomeOf: (index: number) => Outcome | undefined): Chains => {
  const lists: number[][] = [];
  const retries: number[] = [];
  subtasks.forEach((subtask, i) => (subtask.lineage?.kind === 'retry' ? retries.push(i) : lists.push([i])));
  // Most manifests have few retries; index origins by id only when some need one.
  const byId = retries.length > 0 ? new Map(lists.map((list) => [(subtasks[list[0] as number] as DispatchedSubtask).id, list])) : undefined;
  for (const i of retries) {
    const lineage = subtasks[i]?.lineage;
    const list = lineage?.kind === 'retry' ? byId?.get(lineage.of) : undefined;
    if (list) list.push(i);
    else lists.push([i]);
  }
  const chains = lists.map((list) => chainOf(subtasks, list, outcomeOf));
  return {
    partitions: chains.filter((c) => c.origin.lineage === undefined),
    rechecks: chains.filter((c) => c.origin.lineage !== undefined),
  };
};

/** How a line of work is reported: `ok`, or why the region it was assigned went unread. */
export type ReportedState = 'ok' | UnreadReason;

/**
 * How a line of work's state is reported: `empty` with no source reached is an unreachable
 * source (the Scout example), not "nothing found".
 *
 * @example
 * reportedState(chain) // 'timed_out' | 'source_unreachable' | 'missing_outcome' | …
 */
export const reportedState = (chain: AttemptChain): ReportedState =>
  chain.state === 'empty' && chain.outcome?.sourcesReached === 0 ? 'source_unreachable' : chain.state;

/**
 * Why a line of work left its region unread, or `undefined` when it ended `ok`.
 *
 * @example
 * unreadReason(timedOutChain) // 'timed_out'
 */
export const unreadReason = (chain: AttemptChain): UnreadReason | undefined => {
  const state = reportedState(chain);
  return state === 'ok' ? undefined : state;
};

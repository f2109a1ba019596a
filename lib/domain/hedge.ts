/**
 * Hedged dispatch, as pure rules: when a subtask's hedge is due, which copies it starts (replicas
 * of the same assignment, or pieces that tile its scope), which result wins the race, and what
 * the race may spend. The ledger enforces the same rules durably; docs/hedging.md explains them.
 */
import type { DispatchedSubtask, Hedge, Scope, TerminalState, Universe } from '../contract';
import { allowanceOf, type Allowance } from './allowance';
import { algebraFor } from './dimensions';
import { ScopeError, SplitError } from './errors';
import { hedgeId } from './lineage';
import { dimensionOf } from './scope';
import { checkTiling } from './tiling';

/** Longest subtask id (contract `SubtaskId`). */
const MAX_ID_LENGTH = 64;

/**
 * The instant (epoch ms) a hedge is due: `afterSeconds` after the subtask's dispatch instant,
 * the same stable instant its absolute deadline is counted from.
 *
 * @example
 * hedgeDueMs(Date.parse('2025-06-01T12:00:00Z'), { afterSeconds: 20, mode: 'replicate', copies: 2 })
 * // Date.parse('2025-06-01T12:00:20Z')
 */
export const hedgeDueMs = (dispatchedAtMs: number, hedge: Hedge): number => dispatchedAtMs + hedge.afterSeconds * 1000;

/** What the deadline path needs to know to wait for a hedge. */
export interface HedgeClock {
  readonly nowMs: number;
  readonly dispatchedAtMs: number;
  readonly deadlineMs: number;
  readonly hedge: Hedge | undefined;
  /** True once the copies were started (they are started once). */
  readonly started: boolean;
}

/**
 * Whole seconds to wait before starting the hedge (0 when it is due now), or `undefined` when
 * there is nothing to start: no hedge, already started, or due at or after the deadline (the
 * deadline path then behaves exactly as without a hedge).
 *
 * @example
 * hedgeWaitSeconds({ nowMs: 5_500, dispatchedAtMs: 0, deadlineMs: 60_000, hedge: { afterSeconds: 20, mode: 'replicate', copies: 2 }, started: false })
 * // 15 (14.5 s rounded up: never early)
 */
export const hedgeWaitSeconds = (clock: HedgeClock): number | undefined => {
  if (clock.hedge === undefined || clock.started) return undefined;
  const due = hedgeDueMs(clock.dispatchedAtMs, clock.hedge);
  if (due >= clock.deadlineMs || clock.nowMs >= clock.deadlineMs) return undefined;
  return Math.max(0, Math.ceil((due - clock.nowMs) / 1000));
};

/** The universe a scope would be if it were the whole: what its pieces must tile. */
export const universeOfScope = (scope: Scope): Universe => {
  const dimension = dimensionOf(scope);
  const algebra = algebraFor(dimension);
  const [whole] = algebra.toScopes(algebra.normalise(scope));
  if (dimension === 'time' && whole !== undefined && 'from' in whole) return { dimension: 'time', ...whole };
  if (dimension === 'ids' && whole !== undefined && 'ids' in whole) return { dimension: 'ids', ids: whole.ids };
  if (whole !== undefined && 'files' in whole) return { dimension: 'paths', files: whole.files };
  throw new ScopeError('scope', scope, 'is empty');
};

/**
 * The `copies` narrower scopes a `subdivide` hedge cuts a subtask's scope into, with the
 * planner's own splitters (whole days for dates, near-equal id chunks, whole files for paths),
 * and proved to tile the scope exactly with the planner's tiling check before they are returned.
 * Throws `SplitError` when the scope is too small (a single file, fewer ids or days than pieces).
 *
 * @example
 * hedgePieces({ ids: ['a', 'b', 'c', 'd'] }, 2) // [{ ids: ['a', 'b'] }, { ids: ['c', 'd'] }]
 */
export const hedgePieces = (scope: Scope, copies: number): Scope[] => {
  const algebra = algebraFor(dimensionOf(scope));
  let pieces: Scope[];
  try {
    pieces = algebra.split(algebra.normalise(scope), copies).flatMap((piece) => algebra.toScopes(piece));
  } catch (error) {
    if (error instanceof SplitError) throw new SplitError(error.code, 'copies', error.reason, { cause: error });
    throw error;
  }
  const problems = checkTiling(
    universeOfScope(scope),
    pieces.map((piece, i) => ({ id: hedgeId('piece', i + 1), scope: piece })),
  );
  if (pieces.length !== copies || problems.length > 0) {
    const why = problems.map((p) => p.message).join('; ') || `${pieces.length} pieces instead of ${copies}`;
    throw new SplitError('invalid_request', 'copies', `the pieces do not tile the scope: ${why}`);
  }
  return pieces;
};

/** Why a hedge cannot be made, relative to the hedge (`copies`) or the hedge itself (`''`). */
export interface HedgeProblem {
  readonly field: string;
  readonly message: string;
}

/**
 * What stops a declared hedge from ever starting its copies: an id too long to carry the `.h<n>`
 * suffix, or a `subdivide` scope that cannot be cut into `copies` pieces. `undefined` when fine.
 *
 * @example
 * hedgeProblem('A', { ids: ['x'] }, { afterSeconds: 5, mode: 'subdivide', copies: 2 })
 * // { field: 'copies', message: 'subtask A cannot be subdivided into 2 pieces: cannot cut one items into 2 non-empty parts' }
 */
export const hedgeProblem = (subtaskId: string, scope: Scope, hedge: Hedge): HedgeProblem | undefined => {
  const longest = hedgeId(subtaskId, hedge.copies);
  if (longest.length > MAX_ID_LENGTH) {
    return { field: '', message: `subtask id ${subtaskId} is too long for hedge copy ids such as ${longest} (at most ${MAX_ID_LENGTH} characters)` };
  }
  if (hedge.mode !== 'subdivide') return undefined;
  try {
    hedgePieces(scope, hedge.copies);
    return undefined;
  } catch (error) {
    if (!(error instanceof SplitError) && !(error instanceof ScopeError)) throw error;
    const reason = error instanceof SplitError ? error.reason : error.message;
    return { field: 'copies', message: `subtask ${subtaskId} cannot be subdivided into ${hedge.copies} pieces: ${reason}` };
  }
};

/**
 * The copies a due hedge starts, as assignments: `replicate` gives `copies - 1` replicas of the
 * same assignment; `subdivide` gives `copies` pieces whose scopes tile it. Each copy keeps the
 * subtask's kind, questions, input, model, absolute deadline and budget figures (the allowance
 * itself stays the subtask's, shared by all), carries `lineage: { kind: 'hedge', of, mode, copy }`
 * and never hedges again. Ids are `<id>.h1`, `<id>.h2`, …
 *
 * @example
 * hedgeCopies({ ...subtaskA, hedge: { afterSeconds: 5, mode: 'replicate', copies: 2 } }).map((c) => c.id) // ['A.h1']
 */
export const hedgeCopies = (subtask: DispatchedSubtask): DispatchedSubtask[] => {
  const { hedge, lineage: _lineage, ...assignment } = subtask;
  if (hedge === undefined) return [];
  const scopes = hedge.mode === 'replicate' ? Array.from({ length: hedge.copies - 1 }, () => subtask.assigned) : hedgePieces(subtask.assigned, hedge.copies);
  return scopes.map((assigned, i) => ({
    ...assignment,
    id: hedgeId(subtask.id, i + 1),
    assigned,
    lineage: { kind: 'hedge', of: subtask.id, mode: hedge.mode, copy: i + 1 },
  }));
};

/** Which result won a hedged subtask's race. */
export type HedgeWinner =
  | { readonly by: 'original'; readonly id: string }
  | { readonly by: 'replica'; readonly id: string }
  | { readonly by: 'pieces'; readonly ids: readonly string[] };

/** One result of a hedged race, in the order the ledger committed them. */
export interface RaceResult {
  readonly id: string;
  readonly state: TerminalState;
}

/**
 * The first complete cover of the subtask's scope, reading results in commit order: the
 * original's `ok`, a replica's `ok`, or `ok` from every piece (the last piece's `ok` completes
 * it). A non-ok copy covers nothing; results after the winner are losers. `undefined` while
 * nothing covers the scope yet.
 *
 * @example
 * firstCompleteCover(subtaskA, [{ id: 'A.h1', state: 'ok' }, { id: 'A', state: 'ok' }]) // { by: 'replica', id: 'A.h1' }
 */
export const firstCompleteCover = (subtask: DispatchedSubtask, results: readonly RaceResult[]): HedgeWinner | undefined => {
  const hedge = subtask.hedge;
  const pieces = hedge?.mode === 'subdivide' ? Array.from({ length: hedge.copies }, (_, i) => hedgeId(subtask.id, i + 1)) : [];
  const replicas = hedge?.mode === 'replicate' ? new Set(Array.from({ length: hedge.copies - 1 }, (_, i) => hedgeId(subtask.id, i + 1))) : new Set<string>();
  const piecesOk = new Set<string>();
  for (const result of results) {
    if (result.state !== 'ok') continue;
    if (result.id === subtask.id) return { by: 'original', id: result.id };
    if (replicas.has(result.id)) return { by: 'replica', id: result.id };
    if (pieces.includes(result.id)) {
      piecesOk.add(result.id);
      if (piecesOk.size === pieces.length) return { by: 'pieces', ids: pieces };
    }
  }
  return undefined;
};

/**
 * The one allowance a hedged subtask and all its copies reserve from: the subtask's own
 * allowance ({@link allowanceOf}). Copies have none of their own, so a
 * hedge can never spend more than the subtask could alone; a loser's reservations stay charged.
 *
 * @example
 * hedgeAllowance({ ...subtaskA, budget: { modelCalls: 4, estimatedCostPerCall: 7 } }) // { modelCalls: 4, cost: 28 }
 */
export const hedgeAllowance = (subtask: DispatchedSubtask): Allowance => allowanceOf(subtask.budget);

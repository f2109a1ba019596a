/**
 * Hedged dispatch, as pure rules: when a subtask's hedge is due, which copies it starts (replicas
 * of the same assignment, or pieces that tile its scope), which result wins the race, and what
 * the race may spend. The ledger enforces the same rules durably; docs/hedging.md explains them.
 */
import type { Checkpoint, DispatchedSubtask, Hedge, Scope, TerminalState } from '../contract';
import { allowanceOf, type Allowance } from './allowance';
import { splitAtCheckpoint } from './checkpoint';
import { algebraFor } from './dimensions';
import { ScopeError, SplitError } from './errors';
import { hedgeId } from './lineage';
import { dimensionOf } from './scope';
import { checkTiling, universeOfScope } from './tiling';

export { universeOfScope };

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

/**
 * The instant (epoch ms) a subtask may hand over to its `subdivide` hedge pieces: when its hedge
 * is due ({@link hedgeDueMs}), for a `subdivide` hedge not yet started and due before the
 * deadline; `undefined` otherwise (no hedge, `replicate`, started, or due too late to start).
 * The claim carries it so the SDK can flush the original's findings just before the cut.
 *
 * @example
 * handoverDueMs({ ...subtaskB, hedge: { afterSeconds: 20, mode: 'subdivide', copies: 2 } }, 0, 50_000, false) // 20_000
 */
export const handoverDueMs = (subtask: Pick<DispatchedSubtask, 'hedge'>, dispatchedAtMs: number, deadlineMs: number, started: boolean): number | undefined => {
  if (subtask.hedge?.mode !== 'subdivide' || started) return undefined;
  const due = hedgeDueMs(dispatchedAtMs, subtask.hedge);
  return due < deadlineMs ? due : undefined;
};

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
 * How a `subdivide` hedge cuts its subtask: the prefix the original hands over (what its
 * checkpoint's partial findings rest on), and the pieces of the rest.
 */
export interface HedgeCut {
  /** What the original read before it handed over; absent when it hands nothing over (the pieces tile the whole scope). */
  readonly prefix?: readonly Scope[];
  /** The pieces' scopes: with a prefix they tile only the rest, so prefix + pieces = scope with no overlap. */
  readonly pieces: readonly Scope[];
}

/**
 * The one decision of a hedge handover: where a `subdivide` hedge cuts its subtask, given the
 * original's stored checkpoint. The original hands over when that checkpoint carries partial
 * findings that split the scope into a prefix and a one-scope rest ({@link splitAtCheckpoint},
 * the rule a timed-out attempt's retry follows) and the rest can still be cut into `copies`
 * pieces; the pieces then tile only the rest, proved with `checkTiling` (prefix + pieces = scope,
 * no gap, no overlap) before they are returned. Otherwise (no checkpoint, a kind without partial
 * findings, a rest too small to cut) nothing is handed over and the pieces tile the whole scope,
 * as without checkpoints. The ledger cuts with it when the hedge starts, and reconcile cuts again
 * with it from the checkpoint the handover froze.
 *
 * @example
 * hedgeCut(quarterB, { partial: { covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }], … } }, 2)
 * // { prefix: [{ from: '2025-04-01', toExclusive: '2025-06-01' }],
 * //   pieces: [{ from: '2025-06-01', toExclusive: '2025-06-16' }, { from: '2025-06-16', toExclusive: '2025-07-01' }] }
 */
export const hedgeCut = (scope: Scope, copies: number, checkpoint?: Pick<Checkpoint, 'partial'>): HedgeCut => {
  const split = checkpoint === undefined ? undefined : splitAtCheckpoint(scope, checkpoint);
  if (split === undefined) return { pieces: hedgePieces(scope, copies) };
  let pieces: Scope[];
  try {
    pieces = hedgePieces(split.rest, copies);
  } catch (error) {
    // A rest too small for `copies` pieces: no handover, the race runs over the whole scope.
    if (error instanceof SplitError || error instanceof ScopeError) return { pieces: hedgePieces(scope, copies) };
    throw error;
  }
  const tiles = [...split.prefix.map((s) => ({ id: 'prefix', scope: s })), ...pieces.map((s, i) => ({ id: hedgeId('piece', i + 1), scope: s }))];
  const problems = checkTiling(universeOfScope(scope), tiles);
  if (problems.length > 0)
    throw new SplitError('invalid_request', 'copies', `the prefix and pieces do not tile the scope: ${problems.map((p) => p.message).join('; ')}`);
  return { prefix: split.prefix, pieces };
};

/**
 * The copies a due hedge starts, as assignments: `replicate` gives `copies - 1` replicas of the
 * same assignment; `subdivide` gives `copies` pieces cut by {@link hedgeCut}: of the rest after
 * the prefix the original hands over with `handover` (its stored checkpoint), or of the whole
 * scope. Each copy keeps the subtask's kind, questions, input, model, absolute deadline and
 * budget figures (the allowance itself stays the subtask's, shared by all), carries
 * `lineage: { kind: 'hedge', of, mode, copy }` (with `prefix` when the pieces tile only the
 * rest) and never hedges again. Ids are `<id>.h1`, `<id>.h2`, …
 *
 * @example
 * hedgeCopies({ ...subtaskA, hedge: { afterSeconds: 5, mode: 'replicate', copies: 2 } }).map((c) => c.id) // ['A.h1']
 */
export const hedgeCopies = (subtask: DispatchedSubtask, handover?: Pick<Checkpoint, 'partial'>): DispatchedSubtask[] => {
  const { hedge, lineage: _lineage, ...assignment } = subtask;
  if (hedge === undefined) return [];
  const cut = hedge.mode === 'subdivide' ? hedgeCut(subtask.assigned, hedge.copies, handover) : undefined;
  const scopes = cut === undefined ? Array.from({ length: hedge.copies - 1 }, () => subtask.assigned) : cut.pieces;
  const prefix = cut?.prefix === undefined ? {} : { prefix: [...cut.prefix] };
  return scopes.map((assigned, i) => ({
    ...assignment,
    id: hedgeId(subtask.id, i + 1),
    assigned,
    lineage: { kind: 'hedge', of: subtask.id, mode: hedge.mode, copy: i + 1, ...prefix },
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

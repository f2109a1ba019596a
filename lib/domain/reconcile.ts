import type { DispatchedSubtask, Manifest, ObservedIds, ObservedTime, Outcome, Problem, ProblemCode, Scope } from '../contract';
import { handoverLine, resumedLine, type ResumedLine } from './checkpoint';
import { algebraFor, describeScope } from './dimensions';
import { DimensionMismatchError, ScopeError } from './errors';
import { hedgeCopies, universeOfScope } from './hedge';
import { idSet } from './ids';
import { buildChains, type Chains } from './lineage';
import { observationIssues } from './outcome';
import { pathsAlgebra } from './paths';
import { checkTiling, type Tile } from './tiling';
import { readTimeRange } from './time';
import { DAY_MS, formatTimePoint, pointMs, type TimeFormat } from './time-point';

/** Codes of the gaps a worker's own data left inside its assignment. */
export type ObservedGapCode = Extract<ProblemCode, 'observed_starts_late' | 'observed_ends_early' | 'ids_missing' | 'lines_not_inspected'>;

/** Part of an assignment that the worker's data did not reach: a question to send back out. */
export interface ObservedGap {
  /** The attempt whose observation left the gap. */
  readonly subtaskId: string;
  /**
   * The worker kind of that attempt: the source that missed the data. Only an outcome of another
   * kind can confirm the gap empty (lib/domain/coverage.ts, `resolveGaps`).
   */
  readonly worker: string;
  /** 1-based position among that attempt's gaps; the re-check is `<subtaskId>.g<number>`. */
  readonly number: number;
  readonly code: ObservedGapCode;
  readonly region: Scope;
}

/** One piece of a `subdivide` hedge that won its subtask's race, with its outcome. */
export interface WinningPiece {
  readonly subtask: DispatchedSubtask;
  readonly outcome: Outcome;
}

/** Everything reconcile found, in a form coverage, follow-ups and policy all read. */
export interface Reconciliation {
  readonly problems: Problem[];
  readonly chains: Chains;
  readonly observedGaps: ObservedGap[];
  /** By subtask id, the `ok` pieces whose observations cover a subtask won by its pieces (synthesis reads them in its place). */
  readonly pieces: ReadonlyMap<string, readonly WinningPiece[]>;
  /**
   * By the id of a line of work's first attempt: the lines that resumed from checkpoints, with
   * the prefixes their timed-out attempts read (or the prefix an original handed over to its
   * hedge pieces, `handedOver`) and the proof that prefixes and rest tile the scope.
   */
  readonly resumed: ReadonlyMap<string, ResumedLine>;
}

/**
 * A time observation's records are inclusive points; each covers one unit after it: a day
 * for date universes, one second for instant universes (a record stamped 23:59:59 reaches
 * the end of the day; sub-second stamps are not required to fill the last second).
 */
const recordUnit = (format: TimeFormat): number => (format.form === 'date' ? DAY_MS : 1000);

/**
 * The comparison of one outcome with its assignment, shared by the per-dimension checks. One
 * instance per reconcile is reset for each outcome instead of building closures per outcome:
 * at 100,000 outcomes those allocations showed in profiles.
 */
class Comparison {
  private id = '';
  private worker = '';
  /** Index of the outcome in the input, for the problem path (built only when a problem is found). */
  private outcomeIndex = 0;
  /** Index of the piece among the subtask's piece outcomes (a `subdivide` hedge won by pieces), -1 for the subtask's own. */
  private piece = -1;
  /** Re-checks report data outside their gap but never leave gaps of their own to chase. */
  findGaps = true;
  private gapNumber = 0;

  constructor(
    private readonly problems: Problem[],
    private readonly gaps: ObservedGap[],
  ) {}

  reset(subtask: DispatchedSubtask, outcomeIndex: number, piece = -1): this {
    this.id = subtask.id;
    this.worker = subtask.worker;
    this.outcomeIndex = outcomeIndex;
    this.piece = piece;
    this.findGaps = subtask.lineage?.kind !== 'recheck';
    this.gapNumber = 0;
    return this;
  }

  problem(code: ProblemCode, message: string, region?: Scope): void {
    const path = this.piece === -1 ? `outcomes.${this.outcomeIndex}.observed` : `pieces.${this.id}.observed`;
    this.problems.push({ code, message, path, subtaskIds: [this.id], ...region });
  }

  gap(code: ObservedGapCode, message: string, region: Scope): void {
    this.problem(code, message, region);
    this.gapNumber += 1;
    this.gaps.push({ subtaskId: this.id, worker: this.worker, number: this.gapNumber, code, region });
  }
}

const timeRegion = (format: TimeFormat, start: number, end: number): Scope => ({
  from: formatTimePoint(start, format),
  toExclusive: formatTimePoint(end, format),
});

const compareTime = (cmp: Comparison, subtask: DispatchedSubtask, observed: ObservedTime, format: TimeFormat): void => {
  const assigned = subtask.assigned;
  if (!('from' in assigned)) return;
  if (observed.minDate === null || observed.maxDate === null) {
    // An ok outcome with no records read nothing (its worker asked no source): all of it is a gap.
    if (!cmp.findGaps) return;
    const whole = timeRegion(format, pointMs(assigned.from), pointMs(assigned.toExclusive));
    return cmp.gap('observed_starts_late', `${subtask.id} read no records of its assignment: gap ${describeScope('time', whole, 'exact')}`, whole);
  }
  const dates = format.form === 'date';
  if ((observed.minDate.length === 10) !== dates || (observed.maxDate.length === 10) !== dates) {
    return cmp.problem('inconsistent_observation', `${subtask.id}'s observed dates must be ${dates ? 'dates' : 'instants'} like its assignment`);
  }
  // Plain numbers and no closures: this runs once per ok outcome, 100,000 times in the bench.
  const start = pointMs(assigned.from);
  const end = pointMs(assigned.toExclusive);
  const min = pointMs(observed.minDate);
  const max = pointMs(observed.maxDate);
  const reach = max + recordUnit(format);
  if (min < start) {
    const outside = timeRegion(format, min, Math.min(start, reach));
    cmp.problem(
      'observed_outside_assignment',
      `${subtask.id}'s data reaches ${describeScope('time', outside, 'exact')}, before its assignment ${assigned.from}..${assigned.toExclusive}`,
      outside,
    );
  }
  if (max >= end) {
    const outside = timeRegion(format, Math.max(end, min), reach);
    cmp.problem(
      'observed_outside_assignment',
      `${subtask.id}'s data reaches ${describeScope('time', outside, 'exact')}, after its assignment ${assigned.from}..${assigned.toExclusive}`,
      outside,
    );
  }
  if (!cmp.findGaps) return;
  if (min > start) {
    const gap = timeRegion(format, start, Math.min(min, end));
    cmp.gap(
      'observed_starts_late',
      `${subtask.id}'s data starts ${observed.minDate}, after its assignment starts: gap ${describeScope('time', gap, 'exact')}`,
      gap,
    );
  }
  if (reach < end) {
    const gap = timeRegion(format, Math.max(reach, start), end);
    cmp.gap(
      'observed_ends_early',
      `${subtask.id}'s data ends ${observed.maxDate}, before its assignment ends (${assigned.toExclusive} exclusive): gap ${describeScope('time', gap, 'exact')}`,
      gap,
    );
  }
};

/**
 * Ids comparison of one outcome with its assignment through a small index of that
 * assignment, rebuilt per subtask. A chunk's index stays in cache, where lookups in the
 * million-id universe index would each miss it: at 1,000,000 ids this halves reconcile.
 * Stamps (one generation per subtask) replace per-id sets.
 */
const idsComparer = () => {
  const local = new Map<string, number>();
  let stamp = new Int32Array(0);
  let generation = 0;
  return (cmp: Comparison, subtask: DispatchedSubtask, observed: ObservedIds): void => {
    const assigned = 'ids' in subtask.assigned ? subtask.assigned.ids : [];
    local.clear();
    // A repeated assigned id keeps its last position; every lookup below agrees with it.
    for (let k = 0; k < assigned.length; k += 1) local.set(assigned[k] as string, k);
    if (stamp.length < assigned.length) stamp = new Int32Array(assigned.length);
    generation += 1;
    const unexpected: string[] = [];
    const repeated: string[] = [];
    for (const id of observed.ids) {
      const k = local.get(id);
      if (k === undefined) unexpected.push(id);
      else if (stamp[k] === generation) repeated.push(id);
      else stamp[k] = generation;
    }
    const missing: string[] = [];
    for (const [id, k] of local) if (stamp[k] !== generation) missing.push(id);
    if (repeated.length > 0)
      cmp.problem('inconsistent_observation', `${subtask.id} observed ids more than once: ${describeScope('ids', { ids: [...idSet(repeated)] }, 'exact')}`);
    if (unexpected.length > 0) {
      const region = { ids: [...idSet(unexpected)] };
      cmp.problem('ids_unexpected', `${subtask.id} observed ids it was not assigned: ${describeScope('ids', region, 'exact')}`, region);
    }
    if (missing.length > 0 && cmp.findGaps) {
      const region = { ids: [...idSet(missing)] };
      cmp.gap('ids_missing', `${subtask.id} did not observe assigned ids: ${describeScope('ids', region, 'exact')}`, region);
    }
  };
};

const comparePaths = (cmp: Comparison, subtask: DispatchedSubtask, observed: Scope): void => {
  const assigned = pathsAlgebra.normalise(subtask.assigned);
  const seen = pathsAlgebra.normalise(observed);
  for (const region of pathsAlgebra.toScopes(pathsAlgebra.difference(seen, assigned))) {
    cmp.problem('observed_outside_assignment', `${subtask.id} inspected ${describeScope('paths', region, 'exact')}, outside its assignment`, region);
  }
  if (!cmp.findGaps) return;
  for (const region of pathsAlgebra.toScopes(pathsAlgebra.difference(assigned, seen))) {
    cmp.gap('lines_not_inspected', `${subtask.id} did not inspect ${describeScope('paths', region, 'exact')}`, region);
  }
};

interface ReconcileState {
  readonly manifest: Manifest;
  readonly problems: Problem[];
  readonly observedGaps: ObservedGap[];
  readonly pieces: Map<string, WinningPiece[]>;
  /** Subtasks whose original handed over to its pieces: the prefix and its proof. */
  readonly handovers: Map<string, ResumedLine>;
  readonly compareIds: ReturnType<typeof idsComparer>;
  readonly format: TimeFormat | undefined;
}

/** Checks that a follow-up's scope is of the universe's dimension (tiles are checked by the tiling). */
const followUpDimension = (state: ReconcileState, subtask: DispatchedSubtask, index: number): boolean => {
  try {
    algebraFor(state.manifest.universe.dimension).normalise(subtask.assigned);
    return true;
  } catch (error) {
    if (!(error instanceof DimensionMismatchError || error instanceof ScopeError)) throw error;
    state.problems.push({
      code: 'dimension_mismatch',
      message: `subtask ${subtask.id}: ${error.message}`,
      path: `subtasks.${index}.assigned`,
      subtaskIds: [subtask.id],
    });
    return false;
  }
};

const compareOutcome = (state: ReconcileState, cmp: Comparison, subtask: DispatchedSubtask, outcome: Outcome): void => {
  const observed = outcome.observed;
  const issues =
    observed === null
      ? ['an ok outcome must carry its observed coverage']
      : observationIssues(state.manifest.universe.dimension, observed, { checkDuplicateIds: false });
  if (observed === null || issues.length > 0) return cmp.problem('inconsistent_observation', `${subtask.id}: ${issues.join('; ')}`);
  if ('minDate' in observed && state.format) compareTime(cmp, subtask, observed, state.format);
  else if ('ids' in observed) state.compareIds(cmp, subtask, observed);
  else if ('files' in observed) comparePaths(cmp, subtask, observed);
};

/**
 * A subtask whose `subdivide` hedge was won by its pieces has no observation of its own: its
 * coverage is its pieces'. The pieces are cut again from its immutable assignment (the same
 * pure cut the ledger wrote them with), the winning pieces are proved to tile its scope with the
 * round-1 tiling check, and each piece's observation is compared with the piece's assignment,
 * so a gap a piece left is a gap of that piece, never hidden inside one merged range. When the
 * original handed over, its outcome carries the checkpoint the handover froze: the pieces are cut
 * again from it, and the prefix plus the winning pieces are proved to tile the scope
 * (`handoverLine`, the rule a retry's prefix is proved by); the prefix is counted once.
 */
const comparePieces = (
  state: ReconcileState,
  cmp: Comparison,
  subtask: DispatchedSubtask,
  outcome: Outcome,
  outcomeIndex: number,
  pieceOutcomes: readonly Outcome[],
): void => {
  const pieces = subtask.hedge?.mode === 'subdivide' ? hedgeCopies(subtask, outcome.checkpoint) : [];
  const [first] = pieces;
  const handedOver = first?.lineage?.kind === 'hedge' && first.lineage.prefix !== undefined;
  const byId = new Map(pieces.map((piece) => [piece.id, piece]));
  const tiles: Tile[] = [];
  pieceOutcomes.forEach((outcome) => {
    const piece = byId.get(outcome.subtaskId);
    if (piece === undefined) {
      state.problems.push({
        code: 'unexpected_outcome',
        message: `outcome for ${outcome.subtaskId}, which is no piece of ${subtask.id}`,
        path: `pieces.${outcome.subtaskId}`,
        subtaskIds: [outcome.subtaskId],
      });
      return;
    }
    tiles.push({ id: piece.id, scope: piece.assigned, path: `pieces.${piece.id}.assigned` });
  });
  const line = handedOver ? handoverLine(subtask, outcome.checkpoint, tiles) : undefined;
  if (line !== undefined) {
    state.handovers.set(subtask.id, line);
    for (const problem of line.problems) state.problems.push(problem);
  } else {
    for (const problem of checkTiling(universeOfScope(subtask.assigned), tiles))
      state.problems.push({ ...problem, subtaskIds: [subtask.id, ...(problem.subtaskIds ?? [])] });
  }
  pieceOutcomes.forEach((outcome, k) => {
    const piece = byId.get(outcome.subtaskId);
    if (piece === undefined) return;
    if (outcome.state !== 'ok') {
      state.problems.push({
        code: 'inconsistent_observation',
        message: `${subtask.id} was won by its pieces, but ${piece.id} ended ${outcome.state}`,
        path: `pieces.${piece.id}`,
        subtaskIds: [piece.id],
      });
      return;
    }
    compareOutcome(state, cmp.reset(piece, outcomeIndex, k), piece, outcome);
    state.pieces.set(subtask.id, [...(state.pieces.get(subtask.id) ?? []), { subtask: piece, outcome }]);
  });
};

/**
 * Position of each subtask id in the manifest (its first occurrence); repeats are problems.
 * Later steps work on manifest positions and typed arrays, so each id is hashed only here
 * and once per outcome: at 100,000 partitions, map lookups are most of the cost.
 */
const indexSubtasks = (manifest: Manifest, problems: Problem[]): Map<string, number> => {
  const byId = new Map<string, number>();
  manifest.subtasks.forEach((subtask, i) => {
    const first = byId.get(subtask.id);
    if (first === undefined) byId.set(subtask.id, i);
    else
      problems.push({
        code: 'duplicate_subtask_id',
        message: `subtask id ${subtask.id} is dispatched more than once (first at subtasks.${first})`,
        path: `subtasks.${i}.id`,
        subtaskIds: [subtask.id],
      });
  });
  return byId;
};

/** For each manifest position, the index of its outcome (-1 for none); extra or repeated outcomes are problems. */
const matchOutcomes = (byId: ReadonlyMap<string, number>, count: number, outcomes: readonly Outcome[], problems: Problem[]): Int32Array => {
  const outcomeAt = new Int32Array(count).fill(-1);
  outcomes.forEach((outcome, k) => {
    const id = outcome.subtaskId;
    const i = byId.get(id);
    const path = `outcomes.${k}`;
    if (i === undefined) problems.push({ code: 'unexpected_outcome', message: `outcome for ${id}, which was never dispatched`, path, subtaskIds: [id] });
    else if (outcomeAt[i] !== -1)
      problems.push({ code: 'unexpected_outcome', message: `second outcome for ${id} ignored (outcomes.${outcomeAt[i]} was first)`, path, subtaskIds: [id] });
    else outcomeAt[i] = k;
  });
  return outcomeAt;
};

const NO_PIECES: ReadonlyMap<string, readonly Outcome[]> = new Map();

/**
 * Compares what was dispatched (the manifest) with what came back (the outcomes), before
 * anything is merged. Finds: assignment gaps and overlaps among round-1 subtasks (even in a
 * hand-edited manifest), subtasks with no outcome and outcomes nobody dispatched, and for each
 * `ok` outcome its observed data against its assignment: starting late, ending early, ids or
 * lines missing (observed gaps, numbered per subtask), and data outside the assignment.
 * A short observed range is a gap to re-check, not a failure. `pieces` holds, by subtask id, the
 * outcomes of the pieces that won a `subdivide` hedge's race: such a subtask is judged by them.
 *
 * @example
 * const { problems, observedGaps } = reconcile(manifest, outcomes);
 * // observedGaps: [{ subtaskId: 'B', number: 1, code: 'observed_ends_early',
 * //                  region: { from: '2025-06-28', toExclusive: '2025-07-01' } }]
 */
export const reconcile = (manifest: Manifest, outcomes: readonly Outcome[], pieces: ReadonlyMap<string, readonly Outcome[]> = NO_PIECES): Reconciliation => {
  const problems: Problem[] = [];
  const byId = indexSubtasks(manifest, problems);
  const isFirst = (subtask: DispatchedSubtask, i: number): boolean => byId.size === manifest.subtasks.length || byId.get(subtask.id) === i;
  const tiles: Tile[] = [];
  manifest.subtasks.forEach((subtask, i) => {
    if (subtask.lineage !== undefined || !isFirst(subtask, i)) return;
    tiles.push({ id: subtask.id, scope: subtask.assigned, path: `subtasks.${i}.assigned` });
  });
  const tiling = checkTiling(manifest.universe, tiles);
  for (const problem of tiling) problems.push(problem); // no spread: a broken plan can have 100,000 problems
  const outcomeAt = matchOutcomes(byId, manifest.subtasks.length, outcomes, problems);
  const state: ReconcileState = {
    manifest,
    problems,
    observedGaps: [],
    pieces: new Map(),
    handovers: new Map(),
    compareIds: idsComparer(),
    format: manifest.universe.dimension === 'time' ? readTimeRange(manifest.universe).format : undefined,
  };
  const mismatched = new Set(tiling.filter((p) => p.code === 'dimension_mismatch').flatMap((p) => p.subtaskIds ?? []));
  const firsts: DispatchedSubtask[] = [];
  const firstOutcomes: Array<Outcome | undefined> = [];
  const cmp = new Comparison(problems, state.observedGaps);
  manifest.subtasks.forEach((subtask, i) => {
    if (!isFirst(subtask, i)) return;
    const outcome = outcomes[outcomeAt[i] as number];
    firsts.push(subtask);
    firstOutcomes.push(outcome);
    if (!outcome) {
      problems.push({ code: 'missing_outcome', message: `subtask ${subtask.id} has no outcome`, path: `subtasks.${i}`, subtaskIds: [subtask.id] });
      return;
    }
    const usable = subtask.lineage === undefined ? mismatched.size === 0 || !mismatched.has(subtask.id) : followUpDimension(state, subtask, i);
    const won = pieces.get(subtask.id);
    if (outcome.state === 'ok' && usable && won !== undefined) comparePieces(state, cmp, subtask, outcome, outcomeAt[i] as number, won);
    else if (outcome.state === 'ok' && usable) compareOutcome(state, cmp.reset(subtask, outcomeAt[i] as number), subtask, outcome);
  });
  const chains = buildChains(firsts, (i) => firstOutcomes[i]);
  const resumed = resumedLines(chains, byId, outcomes, outcomeAt, problems);
  for (const [id, line] of state.handovers) resumed.set(id, line);
  return { problems, chains, observedGaps: state.observedGaps, pieces: state.pieces, resumed };
};

/**
 * The lines of work that resumed from a checkpoint (few: only lines with a timed-out attempt are
 * looked at), with their tiling proofs' problems added to the reconciliation's.
 */
const resumedLines = (
  chains: Chains,
  byId: ReadonlyMap<string, number>,
  outcomes: readonly Outcome[],
  outcomeAt: Int32Array,
  problems: Problem[],
): Map<string, ResumedLine> => {
  const resumed = new Map<string, ResumedLine>();
  const outcomeOf = (id: string): Outcome | undefined => outcomes[outcomeAt[byId.get(id) ?? -1] ?? -1];
  for (const chain of [...chains.partitions, ...chains.rechecks]) {
    if (chain.attempts.length === 1 && chain.state !== 'timed_out') continue;
    const line = resumedLine(chain.attempts, outcomeOf);
    if (line === undefined) continue;
    resumed.set(chain.origin.id, line);
    for (const problem of line.problems) problems.push(problem);
  }
  return resumed;
};

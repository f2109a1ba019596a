/**
 * Checkpoints as pure rules: what a checkpoint may say (it stays inside its assignment and only
 * grows), which part of a timed-out attempt counts as read (its prefix), what is left to send
 * again (the rest), and the proof that prefixes and the rest tile the line of work's scope.
 * The ledger stores checkpoints and the SDK writes them; docs/workers.md ("Checkpoints") explains them.
 */
import type { Checkpoint, Dimension, DispatchedSubtask, Observed, Outcome, Problem, Scope } from '../contract';
import { algebraFor, type Region } from './dimensions';
import { DimensionMismatchError, ScopeError } from './errors';
import { dimensionOf } from './scope';
import { checkTiling, universeOfScope, type Tile } from './tiling';
import { readTimeRange } from './time';
import { DAY_MS, formatTimePoint } from './time-point';

/**
 * The region of several scopes of one dimension; `like` is a region of that dimension (the
 * assignment's) that fixes the empty region's form, since a time set carries its format.
 */
const regionOf = (dimension: Dimension, scopes: readonly Scope[], like: Region): Region => {
  const algebra = algebraFor(dimension);
  return scopes.reduce((acc, scope) => algebra.union(acc, algebra.normalise(scope)), algebra.difference(like, like));
};

/** The most checkpoints one subtask stores, across all its generations: the ledger refuses more, the SDK plans within it. */
export const MAX_CHECKPOINTS = 32;

/**
 * Why a checkpoint may not be stored after `previous` for an assignment, or nothing: every region
 * it covers lies inside the assignment (a read outside it is refused by the tools, and never
 * lands in a checkpoint), and it only grows: it covers at least what `previous` covered, with at
 * least as many records, a later sequence number and no older generation.
 *
 * @example
 * checkpointIssues('time', { from: '2025-04-01', toExclusive: '2025-07-01' }, undefined, { …, covered: [{ from: '2025-03-01', toExclusive: '2025-04-01' }] })
 * // ['covered 2025-03-01..2025-04-01 lies outside the assignment 2025-04-01..2025-07-01']
 */
export const checkpointIssues = (
  dimension: Dimension,
  assigned: Scope,
  previous: Pick<Checkpoint, 'covered' | 'observed' | 'sequence' | 'generation'> | undefined,
  next: Pick<Checkpoint, 'covered' | 'observed' | 'sequence' | 'generation' | 'partial'>,
): string[] => {
  const algebra = algebraFor(dimension);
  const issues: string[] = [];
  try {
    const scope = algebra.normalise(assigned);
    const covered = regionOf(dimension, next.covered, scope);
    const outside = algebra.difference(covered, scope);
    if (!algebra.isEmpty(outside)) {
      issues.push(`covered ${algebra.describe(outside, 'exact')} lies outside the assignment ${algebra.describe(scope, 'exact')}`);
    }
    if (next.partial !== undefined) {
      const partial = regionOf(dimension, next.partial.covered, scope);
      const beyond = algebra.difference(partial, covered);
      if (!algebra.isEmpty(beyond)) issues.push(`partial findings rest on ${algebra.describe(beyond, 'exact')}, which the checkpoint does not cover`);
    }
    if (previous !== undefined) {
      const lost = algebra.difference(regionOf(dimension, previous.covered, scope), covered);
      if (!algebra.isEmpty(lost)) issues.push(`a checkpoint only grows, but ${algebra.describe(lost, 'exact')} is no longer covered`);
      if (next.observed.recordCount < previous.observed.recordCount) {
        issues.push(`a checkpoint only grows, but its records fell from ${previous.observed.recordCount} to ${next.observed.recordCount}`);
      }
      if (next.sequence <= previous.sequence) issues.push(`sequence ${next.sequence} is not after ${previous.sequence}`);
      if (next.generation < previous.generation) issues.push(`generation ${next.generation} is older than ${previous.generation}`);
    }
  } catch (error) {
    if (error instanceof DimensionMismatchError || error instanceof ScopeError) return [`covered is not a ${dimension} region: ${error.message}`];
    throw error;
  }
  return issues;
};

/** A timed-out attempt's prefix and the rest of its scope. */
export interface CheckpointSplit {
  /** What the attempt read, with partial findings over exactly it. */
  readonly prefix: Scope[];
  /** What it did not read: one scope, the next attempt's assignment. */
  readonly rest: Scope;
}

/**
 * Splits an attempt's scope at its checkpoint, or `undefined` when nothing of it counts as read.
 * Only a checkpoint with partial findings counts: without findings the data was read but its
 * results are lost, so coverage must not claim it. The prefix is what those findings rest on,
 * inside the scope; it must leave a non-empty rest that is one scope (for time: the prefix starts
 * where the scope starts, so the rest is one range), or nothing counts, since findings over
 * records outside the prefix would be counted twice by a retry.
 *
 * @example
 * splitAtCheckpoint({ from: '2025-04-01', toExclusive: '2025-07-01' },
 *   { …, partial: { covered: [{ from: '2025-04-01', toExclusive: '2025-06-01' }], … } })
 * // { prefix: [{ from: '2025-04-01', toExclusive: '2025-06-01' }], rest: { from: '2025-06-01', toExclusive: '2025-07-01' } }
 */
export const splitAtCheckpoint = (assigned: Scope, checkpoint: Pick<Checkpoint, 'partial'> | undefined): CheckpointSplit | undefined => {
  const partial = checkpoint?.partial;
  if (partial === undefined || partial.covered.length === 0) return undefined;
  const dimension = dimensionOf(assigned);
  const algebra = algebraFor(dimension);
  try {
    const scope = algebra.normalise(assigned);
    const covered = regionOf(dimension, partial.covered, scope);
    const prefix = algebra.intersect(covered, scope);
    // Findings that rest on data outside the scope cannot be split from it: nothing counts.
    if (!algebra.equals(prefix, covered) || algebra.isEmpty(prefix)) return undefined;
    const rest = algebra.toScopes(algebra.difference(scope, prefix));
    const [only] = rest;
    if (only === undefined || rest.length !== 1) return undefined;
    return { prefix: algebra.toScopes(prefix), rest: only };
  } catch (error) {
    if (error instanceof DimensionMismatchError || error instanceof ScopeError) return undefined;
    throw error;
  }
};

/** One attempt's counted prefix: what it read before its deadline, and the findings over it. */
export interface CountedPrefix {
  readonly attempt: DispatchedSubtask;
  readonly prefix: Scope[];
  readonly observed: Observed;
  readonly findings: unknown;
}

/** A line of work that resumed from checkpoints: the prefixes counted, and what is still unread or was sent on. */
export interface ResumedLine {
  /** The first attempt of the line. */
  readonly origin: DispatchedSubtask;
  readonly prefixes: readonly CountedPrefix[];
  /** The latest attempt's own rest when the latest attempt itself timed out with a prefix (not sent yet). */
  readonly unsent?: Scope;
  /** True when the prefix was handed over to hedge pieces at `afterSeconds`, not cut off by a deadline. */
  readonly handedOver?: boolean;
  /** Problems of the proof that prefixes plus the rest tile the origin's scope (none when they do). */
  readonly problems: readonly Problem[];
}

/**
 * The prefixes a line of work counts, first attempt to latest, and the proof that they tile its
 * scope with the rest. An attempt's prefix counts when its outcome timed out with partial
 * findings ({@link splitAtCheckpoint}) and the attempt after it (if any) was assigned exactly
 * the rest: a retry planned before the prefix was known, or that re-reads the whole, makes the
 * prefix not count, so no record is ever counted twice. The proof: the counted prefixes and the
 * latest attempt's unread part (its rest, or its whole scope) tile the origin's scope with
 * `checkTiling`, no gap and no overlap; its problems carry the line's ids. `undefined` when no
 * prefix counts.
 *
 * @example
 * resumedLine([B, B_r2], (id) => outcomes.get(id))
 * // { origin: B, prefixes: [{ attempt: B, prefix: [{ from: '2025-04-01', toExclusive: '2025-06-01' }], … }], problems: [] }
 */
export const resumedLine = (attempts: readonly DispatchedSubtask[], outcomeOf: (id: string) => Outcome | undefined): ResumedLine | undefined => {
  const [origin] = attempts;
  if (origin === undefined) return undefined;
  const prefixes: CountedPrefix[] = [];
  let unsent: Scope | undefined;
  attempts.forEach((attempt, i) => {
    const outcome = outcomeOf(attempt.id);
    if (outcome?.state !== 'timed_out') return;
    const split = splitAtCheckpoint(attempt.assigned, outcome.checkpoint);
    const partial = outcome.checkpoint?.partial;
    if (split === undefined || partial === undefined) return;
    const next = attempts[i + 1];
    const dimension = dimensionOf(attempt.assigned);
    if (next !== undefined && !sameRegion(dimension, next.assigned, split.rest)) return;
    prefixes.push({ attempt, prefix: split.prefix, observed: partial.observed, findings: partial.findings });
    if (next === undefined) unsent = split.rest;
  });
  if (prefixes.length === 0) return undefined;
  const latest = attempts[attempts.length - 1] as DispatchedSubtask;
  const problems = proveLine(origin, prefixes, [{ id: unsent === undefined ? latest.id : `${latest.id} (rest)`, scope: unsent ?? latest.assigned }]);
  return { origin, prefixes, ...(unsent === undefined ? {} : { unsent }), problems };
};

/**
 * The proof that a line's counted prefixes and what read the rest (`rest`: a retry, or the
 * pieces a handover gave the rest to) tile the origin's scope, no gap and no overlap, with
 * `checkTiling`; its problems name the origin first. Shared by a timed-out attempt's retry and a
 * hedge handover, so both are judged by one rule.
 */
const proveLine = (origin: DispatchedSubtask, prefixes: readonly CountedPrefix[], rest: readonly Tile[]): Problem[] => {
  const tiles: Tile[] = prefixes.flatMap((p) => p.prefix.map((scope) => ({ id: p.attempt.id, scope })));
  tiles.push(...rest);
  return checkTiling(universeOfScope(origin.assigned), tiles).map((problem) => ({
    ...problem,
    message: `${origin.id}'s prefixes and rest do not tile its scope: ${problem.message}`,
    subtaskIds: [origin.id, ...(problem.subtaskIds ?? []).filter((id) => id !== origin.id)],
  }));
};

/**
 * The line of a subtask whose original handed over to its `subdivide` pieces: the prefix its
 * frozen checkpoint's partial findings rest on ({@link splitAtCheckpoint}), counted once, and
 * the proof that prefix plus the winning pieces' assignments tile its scope. `undefined` when
 * the checkpoint splits nothing (no handover: the pieces tile the whole scope).
 *
 * @example
 * handoverLine(B, frozenCheckpoint, [{ id: 'B.h1', scope: june1to15 }, { id: 'B.h2', scope: june16to30 }])
 * // { origin: B, prefixes: [{ attempt: B, prefix: [{ from: '2025-04-01', toExclusive: '2025-06-01' }], … }], handedOver: true, problems: [] }
 */
export const handoverLine = (
  origin: DispatchedSubtask,
  checkpoint: Pick<Checkpoint, 'partial'> | undefined,
  pieces: readonly Tile[],
): ResumedLine | undefined => {
  const split = splitAtCheckpoint(origin.assigned, checkpoint);
  const partial = checkpoint?.partial;
  if (split === undefined || partial === undefined) return undefined;
  const prefixes: CountedPrefix[] = [{ attempt: origin, prefix: split.prefix, observed: partial.observed, findings: partial.findings }];
  return { origin, prefixes, handedOver: true, problems: proveLine(origin, prefixes, pieces) };
};

const sameRegion = (dimension: Dimension, a: Scope, b: Scope): boolean => {
  const algebra = algebraFor(dimension);
  try {
    return algebra.equals(algebra.normalise(a), algebra.normalise(b));
  } catch (error) {
    if (error instanceof DimensionMismatchError || error instanceof ScopeError) return false;
    throw error;
  }
};

/**
 * What a line of work has read through its counted prefixes, as one region's contract scopes.
 *
 * @example
 * prefixRegion('time', line) // [{ from: '2025-04-01', toExclusive: '2025-06-01' }]
 */
export const prefixRegion = (dimension: Dimension, line: ResumedLine): Scope[] => {
  const algebra = algebraFor(dimension);
  return algebra.toScopes(
    regionOf(
      dimension,
      line.prefixes.flatMap((p) => p.prefix),
      algebra.normalise(line.origin.assigned),
    ),
  );
};

/**
 * A region as a statement quotes what was read: time ranges with inclusive ends joined by `..`
 * (`2025-04-01..2025-05-31`), ids and paths as their prose description.
 *
 * @example
 * describeRead('time', [{ from: '2025-04-01', toExclusive: '2025-06-01' }]) // '2025-04-01..2025-05-31'
 */
export const describeRead = (dimension: Dimension, scopes: readonly Scope[]): string => {
  const [first] = scopes;
  if (first === undefined) return 'nothing';
  if (dimension !== 'time') {
    const algebra = algebraFor(dimension);
    return algebra.describe(regionOf(dimension, scopes, algebra.normalise(first)), 'prose');
  }
  return scopes
    .flatMap((scope) => ('from' in scope ? [scope] : []))
    .map((range) => {
      const set = readTimeRange(range);
      const [start, end] = set.bounds as [number, number];
      const last = set.format.form === 'date' ? end - DAY_MS : end;
      return `${formatTimePoint(start, set.format)}..${formatTimePoint(last, set.format)}`;
    })
    .join(', ');
};

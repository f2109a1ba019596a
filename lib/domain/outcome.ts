import type { Dimension, Observed, Problem, TerminalState } from '../contract';
import { pointMs } from './time-point';

/** What is known about a subtask's result when it is classified. */
export interface ClassificationInput {
  readonly dimension: Dimension;
  /** The run was cancelled before the result was accepted. */
  readonly cancelled?: boolean;
  /** Nothing valid arrived before the absolute deadline. */
  readonly timedOut?: boolean;
  /** The worker's output passed its kind's output schema; `false` with `outputIssues`. */
  readonly outputValid: boolean;
  readonly outputIssues?: readonly string[];
  /** Observed coverage derived by the tool layer; `null` when nothing was recorded. */
  readonly observed: Observed | null;
  readonly sourcesReached: number;
  /**
   * How many times the worker asked one of its sources for assigned data (a request the tool
   * accepted, whether or not the source answered). `0` means the worker chose to read nothing:
   * its assignment is unread by choice, not behind an unreachable source. Unknown when absent.
   */
  readonly sourcesAsked?: number;
}

export interface Classification {
  readonly state: TerminalState;
  readonly reason?: string;
  /** `empty` with no source reached: a source was unreachable, not "nothing found". */
  readonly sourceUnreachable?: boolean;
}

/** Options of {@link observationIssues}. */
export interface ObservationCheckOptions {
  /**
   * Look for repeated observed ids (default true). Reconcile turns this off because it finds
   * repeats during its own pass over the ids, without building a second set of a million.
   */
  readonly checkDuplicateIds?: boolean;
}

/**
 * Problems that make an observed block unusable as evidence. An observation that contradicts
 * itself cannot be reconciled, so the outcome is `invalid` rather than trusted.
 *
 * @example
 * observationIssues('time', { minDate: '2025-06-27', maxDate: '2025-04-01', recordCount: 3 })
 * // ['minDate 2025-06-27 is after maxDate 2025-04-01']
 */
export const observationIssues = (dimension: Dimension, observed: Observed, options: ObservationCheckOptions = {}): string[] => {
  const issues: string[] = [];
  if (dimension === 'time') {
    if (!('minDate' in observed)) return ['observed block is not a time observation (minDate, maxDate, recordCount)'];
    const { minDate, maxDate, recordCount } = observed;
    if (recordCount === 0 && (minDate !== null || maxDate !== null)) issues.push('recordCount is 0 but minDate/maxDate are set');
    if (recordCount > 0 && (minDate === null || maxDate === null)) issues.push(`recordCount is ${recordCount} but minDate/maxDate are missing`);
    if (minDate !== null && maxDate !== null) {
      // pointMs is the allocation-free reader: reconcile runs this for every ok outcome.
      if (pointMs(minDate) > pointMs(maxDate)) issues.push(`minDate ${minDate} is after maxDate ${maxDate}`);
    }
  } else if (dimension === 'ids') {
    if (!('ids' in observed)) return ['observed block is not an ids observation (ids, recordCount)'];
    if (options.checkDuplicateIds !== false && new Set(observed.ids).size !== observed.ids.length) issues.push('observed ids contain duplicates');
    if (observed.recordCount < observed.ids.length) issues.push(`recordCount ${observed.recordCount} is less than the ${observed.ids.length} ids observed`);
  } else {
    if (!('files' in observed)) return ['observed block is not a paths observation (files, recordCount)'];
    if (observed.recordCount === 0 && observed.files.some((f) => f.lines && f.lines.length > 0)) issues.push('recordCount is 0 but line ranges are set');
  }
  return issues;
};

/**
 * {@link observationIssues} as contract problems (`inconsistent_observation`), the form
 * docs/architecture.md names `checkObservation`. Any problem makes the outcome `invalid`.
 *
 * @example
 * checkObservation('ids', { ids: ['a', 'a'], recordCount: 2 })
 * // [{ code: 'inconsistent_observation', message: 'observed ids contain duplicates' }]
 */
export const checkObservation = (dimension: Dimension, observed: Observed): Problem[] =>
  observationIssues(dimension, observed).map((message) => ({ code: 'inconsistent_observation', message }));

const recordCount = (observed: Observed): number => observed.recordCount;

/** The reason of an `ok` outcome whose worker asked no source for assigned data (it skipped it, or every request was refused). */
export const READ_NOTHING = 'the worker asked its sources for none of its assignment: nothing was read';

/**
 * How an outcome is classified. The first split is time, decided by the parent's clock; the second
 * is what arrived: schema-invalid → `invalid`; valid and empty → `empty` (a source was asked and
 * answered nothing, or none could be reached); valid with nothing asked, or with records → `ok`.
 *
 * @example
 * classifyOutcome({ dimension: 'time', outputValid: true, sourcesReached: 0,
 *   observed: { minDate: null, maxDate: null, recordCount: 0 } })
 * // { state: 'empty', reason: 'no source was reachable', sourceUnreachable: true }
 */
export const classifyOutcome = (input: ClassificationInput): Classification => {
  if (input.cancelled) return { state: 'cancelled', reason: 'the run was cancelled' };
  if (input.timedOut) return { state: 'timed_out', reason: 'no result before the deadline' };
  if (!input.outputValid) {
    const detail = input.outputIssues?.length ? `: ${input.outputIssues.slice(0, 3).join('; ')}` : '';
    return { state: 'invalid', reason: `output failed its schema${detail}` };
  }
  if (input.observed === null) return { state: 'invalid', reason: 'no observed coverage was recorded' };
  const issues = observationIssues(input.dimension, input.observed);
  if (issues.length > 0) return { state: 'invalid', reason: `inconsistent observation: ${issues.join('; ')}` };
  if (recordCount(input.observed) === 0) {
    // Nothing asked, nothing read: the worker skipped its assignment (the starter's `ignore`). Its
    // output stands, and reconcile reports the whole assignment as not observed (a gap to re-check).
    if (input.sourcesAsked === 0) return { state: 'ok', reason: READ_NOTHING };
    return input.sourcesReached === 0
      ? { state: 'empty', reason: 'no source was reachable', sourceUnreachable: true }
      : { state: 'empty', reason: `no records in ${input.sourcesReached} source${input.sourcesReached === 1 ? '' : 's'} reached` };
  }
  return { state: 'ok' };
};

import type { Coverage, Dimension } from '../contract';

/** Options shared by every domain error: the underlying cause, when there is one. */
export interface DomainErrorOptions {
  readonly cause?: unknown;
}

/**
 * A scope that cannot be read: an impossible date, an inverted range, a line range whose first
 * line is after its last. `field` names the offending field relative to the scope.
 *
 * @example
 * throw new ScopeError({ field: 'from', value: '2025-02-29', reason: 'is not a real calendar day' });
 */
export class ScopeError extends Error {
  override readonly name = 'ScopeError';
  readonly field: string;
  readonly value: unknown;
  readonly reason: string;

  constructor(context: { field: string; value: unknown; reason: string }, options: DomainErrorOptions = {}) {
    super(`${context.field} ${context.reason} (got ${JSON.stringify(context.value)})`, { cause: options.cause });
    this.field = context.field;
    this.value = context.value;
    this.reason = context.reason;
  }
}

/**
 * A scope of one dimension used where another was expected, or a time scope written as dates
 * where the universe uses instants (or the other way round).
 *
 * @example
 * throw new DimensionMismatchError({ expected: 'time', actual: 'ids' });
 */
export class DimensionMismatchError extends Error {
  override readonly name = 'DimensionMismatchError';
  readonly expected: Dimension | string;
  readonly actual: Dimension | string;

  constructor(context: { expected: Dimension | string; actual: Dimension | string }, options: DomainErrorOptions = {}) {
    super(`expected a ${context.expected} scope, got ${context.actual}`, { cause: options.cause });
    this.expected = context.expected;
    this.actual = context.actual;
  }
}

/** Why a split cannot be produced, in the planner's problem vocabulary. */
export type SplitErrorCode = 'plan_too_large' | 'invalid_request' | 'scope_outside_universe' | 'dimension_mismatch';

/**
 * A split that code cannot produce: more parts than whole days, boundaries out of order, a
 * calendar unit on an ids universe. The planner turns it into a problem naming `field`.
 *
 * @example
 * throw new SplitError({ code: 'plan_too_large', field: 'parts', reason: 'cannot cut 3 days into 4 whole-day parts' });
 */
export class SplitError extends Error {
  override readonly name = 'SplitError';
  readonly code: SplitErrorCode;
  readonly field: string;
  readonly reason: string;

  constructor(context: { code: SplitErrorCode; field: string; reason: string }, options: DomainErrorOptions = {}) {
    super(`${context.field}: ${context.reason}`, { cause: options.cause });
    this.code = context.code;
    this.field = context.field;
    this.reason = context.reason;
  }
}

/**
 * A required subtask did not end `ok`, or its observed gap was not resolved, under
 * `onRequiredGap: "fail"`. The run fails, but its answer still carries `coverage`.
 *
 * @example
 * const decision = decideStatus(manifest, coverage, reconciliation);
 * if (decision.status === 'failed') throw decision.error; // error.coverage is still reported
 */
export class RequiredGapError extends Error {
  override readonly name = 'RequiredGapError';
  readonly coverage: Coverage;
  /** `"<subtaskId>:<reason>"` for each required line of work that is not covered. */
  readonly unmet: readonly string[];

  constructor(context: { coverage: Coverage; unmet: readonly string[] }, options: DomainErrorOptions = {}) {
    super(`required coverage is missing: ${context.unmet.join(', ')}`, { cause: options.cause });
    this.coverage = context.coverage;
    this.unmet = context.unmet;
  }
}

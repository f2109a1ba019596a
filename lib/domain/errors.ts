import type { Coverage, Dimension } from '../contract';
import { degradedReasonText, type DegradedReason } from './degraded';

/**
 * Base of the domain's errors; catch it to handle any of them.
 *
 * @example
 * try { fileScope(path, lines); } catch (error) { if (error instanceof DomainError) problems.push(error.message); }
 */
export class DomainError extends Error {
  override readonly name: string = 'DomainError';
}

/**
 * A scope that cannot be read: an impossible date, an inverted range, a line range whose first
 * line is after its last. `field` names the offending field relative to the scope.
 *
 * @example
 * throw new ScopeError('from', '2025-02-29', 'is not a real calendar day');
 */
export class ScopeError extends DomainError {
  override readonly name = 'ScopeError';
  constructor(
    readonly field: string,
    readonly value: unknown,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`${field} ${reason} (got ${JSON.stringify(value)})`, options);
  }
}

/**
 * A scope of one dimension used where another was expected, or a time scope written as dates
 * where the universe uses instants (or the other way round).
 *
 * @example
 * throw new DimensionMismatchError('time', 'ids');
 */
export class DimensionMismatchError extends DomainError {
  override readonly name = 'DimensionMismatchError';
  constructor(
    readonly expected: Dimension | string,
    readonly actual: Dimension | string,
    options?: ErrorOptions,
  ) {
    super(`expected a ${expected} scope, got ${actual}`, options);
  }
}

/** Why a split cannot be produced, in the planner's problem vocabulary. */
export type SplitErrorCode = 'plan_too_large' | 'invalid_request' | 'scope_outside_universe' | 'dimension_mismatch';

/**
 * A split that code cannot produce: more parts than whole days, boundaries out of order, a
 * calendar unit on an ids universe. The planner turns it into a problem naming `field`.
 *
 * @example
 * throw new SplitError('plan_too_large', 'parts', 'cannot cut 3 days into 4 whole-day parts');
 */
export class SplitError extends DomainError {
  override readonly name = 'SplitError';
  constructor(
    readonly code: SplitErrorCode,
    readonly field: string,
    readonly reason: string,
    options?: ErrorOptions,
  ) {
    super(`${field}: ${reason}`, options);
  }
}

/**
 * A required subtask did not end `ok`, or its observed gap was not resolved, under
 * `onRequiredGap: "fail"`. The run fails, but its answer still carries `coverage`.
 * `unmet` holds who and why for each required line of work that is not covered; the message names
 * them in their wire form (`"<subtaskId>:<reason>"`).
 *
 * @example
 * const decision = decideStatus(manifest, coverage, reconciliation);
 * if (decision.status === 'failed') throw decision.error; // error.coverage is still reported
 */
export class RequiredGapError extends DomainError {
  override readonly name = 'RequiredGapError';
  constructor(
    readonly coverage: Coverage,
    readonly unmet: readonly DegradedReason[],
    options?: ErrorOptions,
  ) {
    super(`required coverage is missing: ${unmet.map(degradedReasonText).join(', ')}`, options);
  }
}

/**
 * Degraded reasons: what keeps a run's coverage from being complete, as typed objects from the
 * domain to the answer. The wire keeps the `"who:why"` string form (`coverage.degradedReason`, a
 * required gap's error message), written by {@link degradedReasonText} only.
 */
import type { ProblemCode } from '../contract';
import type { ReportedState } from './lineage';

/**
 * Why something keeps coverage from being complete: a problem's code, how a line of work or a
 * re-check ended, or an empty re-check nobody else confirmed.
 */
export type DegradedWhy = ProblemCode | ReportedState | 'unconfirmed_empty';

/**
 * One thing that keeps coverage from being complete: who it is about (a subtask id, `A+B` for a
 * problem between subtasks, `universe` for the plan as a whole) and why.
 */
export interface DegradedReason {
  readonly who: string;
  readonly why: DegradedWhy;
}

/**
 * A degraded reason in its wire form, `"<who>:<why>"` (`coverage.degradedReason`, a required
 * gap's error message): written here and nowhere else, and never parsed back.
 *
 * @example
 * degradedReasonText({ who: 'C.r2', why: 'timed_out' }) // 'C.r2:timed_out'
 */
export const degradedReasonText = (reason: DegradedReason): string => `${reason.who}:${reason.why}`;

/**
 * The reasons once each, in their first order (two reasons are the same when their wire forms are).
 *
 * @example
 * uniqueReasons([{ who: 'A', why: 'empty' }, { who: 'A', why: 'empty' }]) // [{ who: 'A', why: 'empty' }]
 */
export const uniqueReasons = (reasons: readonly DegradedReason[]): DegradedReason[] => [
  ...new Map(reasons.map((reason) => [degradedReasonText(reason), reason] as const)).values(),
];

/**
 * The budget rule, in one place: what one subtask may spend. The planner checks it against the
 * run's budget, the ledger writes it into each subtask's counters, a hedge's copies share it, and
 * `/testing` counts it down in memory; all four read it from here, so they cannot disagree.
 */
import type { SubtaskBudget } from '../contract';

/** What one subtask may spend: a number of model calls, and a cost in integer cost units. */
export interface Allowance {
  readonly modelCalls: number;
  readonly cost: number;
}

/**
 * A subtask's allowance: its `modelCalls`, and `modelCalls × estimatedCostPerCall` to spend on
 * them (each call reserves its estimate up front, so the calls can never cost more). A subtask
 * without a budget may spend nothing.
 *
 * @example
 * allowanceOf({ modelCalls: 4, estimatedCostPerCall: 7 }) // { modelCalls: 4, cost: 28 }
 * allowanceOf(undefined) // { modelCalls: 0, cost: 0 }
 */
export const allowanceOf = (budget: SubtaskBudget | undefined): Allowance =>
  budget === undefined ? { modelCalls: 0, cost: 0 } : { modelCalls: budget.modelCalls, cost: budget.modelCalls * budget.estimatedCostPerCall };

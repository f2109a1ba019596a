import type { ProblemCode } from '../contract';

/** A problem of a refused request, as the planner or the API reports it. */
export interface ReportedProblem {
  readonly code: string;
  readonly path?: string;
  readonly message: string;
  readonly subtaskIds?: readonly string[];
  readonly from?: string;
  readonly toExclusive?: string;
}

/** A problem with what would fix it, for a model to repair its request and check it again. */
export type RepairableProblem = ReportedProblem & { readonly fix: string };

const region = (p: ReportedProblem): string => (p.from !== undefined && p.toExclusive !== undefined ? `${p.from}..${p.toExclusive}` : 'that region');
const subtasks = (p: ReportedProblem): string => (p.subtaskIds && p.subtaskIds.length > 0 ? p.subtaskIds.join(' and ') : 'the subtasks named');

/**
 * What would fix each kind of problem, in one place. Scopes are half-open, so most tiling fixes
 * are "make one subtask's `toExclusive` equal the next one's `from`".
 */
const FIXES: Readonly<Record<ProblemCode, (problem: ReportedProblem) => string>> = {
  invalid_request: (p) => `give ${p.path ? `\`${p.path}\`` : 'the field'} a value its schema allows (see the message)`,
  assignment_gap: (p) => `assign ${region(p)} to a subtask: widen a neighbour (its toExclusive or from) or add a subtask for it`,
  assignment_overlap: (p) =>
    `give ${region(p)} to one subtask only: ${subtasks(p)} both cover it; end the earlier one's toExclusive where the later one's from starts`,
  scope_outside_universe: () => "keep every scope inside the universe: from no earlier than the universe's from, toExclusive no later than its toExclusive",
  dimension_mismatch: () => "write every scope in the universe's dimension (from/toExclusive for time, ids for ids, files for paths)",
  duplicate_subtask_id: () => 'give each subtask its own id',
  duplicate_universe_id: () => "list each id of the universe's ids once",
  unknown_worker: () => 'use a worker kind this deployment runs (the message lists them)',
  invalid_input: () => "give the worker the input its kind's schema takes (see the message)",
  deadline_out_of_horizon: () => "lower deadlineSeconds to at most the deployment's horizon (see the message)",
  unassigned_question: () => "list the question in some subtask's questionIds, or drop it from questions",
  duplicate_question: () => 'give each question its own id',
  unknown_question: () => "name only questions of the request's questions in questionIds",
  plan_too_large: () => 'split into fewer subtasks (larger scopes), or into several runs',
  budget_exceeds_run: () => "lower the subtask's budget, or raise the run's budget",
  unknown_model: () => 'name a model this deployment allows, or leave model out',
  missing_outcome: () => 'nothing to fix in the request: a subtask reported no outcome',
  unexpected_outcome: () => 'nothing to fix in the request: an outcome arrived for no dispatched subtask',
  observed_ends_early: () => 'follow up the rest of the assignment (a gap)',
  observed_starts_late: () => 'follow up the start of the assignment (a gap)',
  observed_outside_assignment: () => 'nothing to fix in the request: a worker read outside its assignment',
  ids_missing: () => 'follow up the ids not read (a gap)',
  ids_unexpected: () => 'nothing to fix in the request: a worker read ids outside its assignment',
  lines_not_inspected: () => 'follow up the lines not inspected (a gap)',
  inconsistent_observation: () => "nothing to fix in the request: a worker's observation contradicts itself",
};

const isProblemCode = (code: string): code is ProblemCode => Object.hasOwn(FIXES, code);

/**
 * A problem with its fix.
 *
 * @example
 * withFix({ code: 'assignment_overlap', path: 'subtasks.1.scope.from', message: '…', subtaskIds: ['A', 'B'], from: '2025-03-01', toExclusive: '2025-04-01' }).fix
 * // 'give 2025-03-01..2025-04-01 to one subtask only: A and B both cover it; …'
 */
export const withFix = (problem: ReportedProblem): RepairableProblem => ({
  ...problem,
  fix: isProblemCode(problem.code) ? FIXES[problem.code](problem) : 'see the message',
});

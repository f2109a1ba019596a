import { z } from 'zod';
import { DispatchedSubtask, IdsScope, type Lineage, parseTimePoint, PathsScope, SubtaskBudget, TimeRange, type Dimension } from '../contract';
import { InvalidAssignment } from './errors';

/**
 * A dispatched subtask as the SDK runs it: the contract's `DispatchedSubtask` with the fields
 * that are optional before dispatch (the absolute deadline, the allowance) made mandatory.
 *
 * @example
 * RunnableSubtask.safeParse(claim.subtask).success // false when the absolute deadline is missing
 */
export const RunnableSubtask = DispatchedSubtask.extend({
  deadline: z.iso.datetime({ offset: true }),
  budget: SubtaskBudget,
});
export type RunnableSubtask = z.infer<typeof RunnableSubtask>;

/**
 * The scope of each dimension, as a worker of that dimension receives it.
 *
 * @example
 * const scope: ScopeByDimension['time'] = { from: '2025-04-01', toExclusive: '2025-07-01' };
 */
export interface ScopeByDimension {
  time: z.infer<typeof TimeRange>;
  ids: z.infer<typeof IdsScope>;
  paths: z.infer<typeof PathsScope>;
}

const scopeSchemas = { time: TimeRange, ids: IdsScope, paths: PathsScope } as const;

/**
 * What a worker was asked to do: immutable, and identical for every generation that runs it.
 * The SDK freezes it deeply, so a worker cannot widen its own scope by mutating it.
 *
 * @example
 * run: async (ctx) => ctx.assignment.scope.from // '2025-04-01', whichever generation runs it
 */
export interface Assignment<D extends Dimension = Dimension, I = unknown> {
  readonly subtaskId: string;
  readonly worker: string;
  readonly round: number;
  readonly questionIds: readonly string[];
  readonly dimension: D;
  readonly scope: Readonly<ScopeByDimension[D]>;
  /** The kind's validated input (the inquiry). */
  readonly input: I;
  /** Absolute deadline, as dispatched. */
  readonly deadline: string;
  readonly deadlineMs: number;
  /** Model calls and the fixed cost estimate of each call. */
  readonly allowance: Readonly<{ modelCalls: number; estimatedCostPerCall: number }>;
  /**
   * How the subtask came about beyond the plan: a retry, a re-check, or a hedge copy
   * (`{ kind: 'hedge', of, mode, copy }`, racing subtask `of`; docs/hedging.md). Absent for a
   * planned subtask.
   */
  readonly lineage?: Readonly<Lineage>;
}

/**
 * Parses what the worker Lambda hands over. A subtask without a deadline or an allowance cannot
 * be run safely, and only a bug upstream produces one, so this throws instead of recording.
 *
 * @example
 * const subtask = parseRunnableSubtask(claim.subtask); // InvalidAssignment if the deadline is missing
 */
export const parseRunnableSubtask = (value: unknown): RunnableSubtask => {
  const parsed = RunnableSubtask.safeParse(value);
  if (parsed.success) return parsed.data;
  const id = z.object({ id: z.string() }).safeParse(value);
  throw new InvalidAssignment(
    id.success ? id.data.id : undefined,
    parsed.error.issues.map((issue) => `${issue.path.join('.') || '(root)'}: ${issue.message}`),
  );
};

/**
 * Reads the assigned scope in the kind's dimension, or says why it is not one.
 *
 * @example
 * scopeFor('time', { ids: ['a'] }) // { ok: false, problem: 'the assigned scope is not in the time dimension' }
 */
export const scopeFor = <D extends Dimension>(dimension: D, assigned: unknown): { ok: true; scope: ScopeByDimension[D] } | { ok: false; problem: string } => {
  const parsed = scopeSchemas[dimension].safeParse(assigned);
  return parsed.success
    ? { ok: true, scope: parsed.data as ScopeByDimension[D] }
    : { ok: false, problem: `the assigned scope is not in the ${dimension} dimension` };
};

/**
 * Freezes a JSON-like value and everything inside it.
 *
 * @example
 * const scope = deepFreeze({ ids: ['a'] });
 * Object.isFrozen(scope.ids) // true
 */
export const deepFreeze = <T>(value: T): T => {
  if (value !== null && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const inner of Object.values(value)) deepFreeze(inner);
  }
  return value;
};

/**
 * Builds the frozen assignment a worker receives.
 *
 * @example
 * const assignment = buildAssignment(subtask, 'time', scope, {});
 * Object.isFrozen(assignment.scope) // true
 */
export const buildAssignment = <D extends Dimension, I>(subtask: RunnableSubtask, dimension: D, scope: ScopeByDimension[D], input: I): Assignment<D, I> =>
  deepFreeze({
    subtaskId: subtask.id,
    worker: subtask.worker,
    round: subtask.round,
    questionIds: structuredClone(subtask.questionIds),
    dimension,
    scope: structuredClone(scope),
    input: structuredClone(input),
    deadline: subtask.deadline,
    deadlineMs: deadlineMsOf(subtask.deadline),
    allowance: { modelCalls: subtask.budget.modelCalls, estimatedCostPerCall: subtask.budget.estimatedCostPerCall },
    ...(subtask.lineage === undefined ? {} : { lineage: structuredClone(subtask.lineage) }),
  });

/**
 * Epoch milliseconds of an ISO instant that `RunnableSubtask` already validated.
 *
 * @example
 * deadlineMsOf('2025-06-01T00:00:45Z') // 1748736045000
 */
export const deadlineMsOf = (deadline: string): number => parseTimePoint(deadline)?.ms ?? Date.parse(deadline);

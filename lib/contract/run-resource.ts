import { z } from 'zod';
import { Universe } from './scope';
import { RunBudget, SubtaskId } from './run-request';
import { Answer } from './coverage';
import { DispatchedSubtask, HedgeWinner, Observed, Outcome, SubtaskState, Usage } from './outcome';

export const RunStatus = z.enum(['running', 'succeeded', 'failed', 'cancelled']);
export type RunStatus = z.infer<typeof RunStatus>;

/** A result that arrived after its subtask was sealed. Kept as evidence; it never changes the state. */
export const LateEvidence = z.object({
  receivedAt: z.string(),
  generation: z.int().min(1),
  /** Why it was refused: the subtask was sealed, or the run cancelled. */
  refusedBecause: z.enum(['sealed', 'cancelled', 'deadline_passed', 'run_ended']),
  outcome: Outcome,
});
export type LateEvidence = z.infer<typeof LateEvidence>;

/** One dispatched subtask as `GET /runs/{runId}` shows it. */
export const SubtaskView = DispatchedSubtask.omit({ input: true }).extend({
  state: SubtaskState,
  observed: Observed.nullable(),
  sources: z.array(z.string()),
  sourcesReached: z.int().min(0),
  usage: Usage,
  reason: z.string().optional(),
  refusals: Outcome.shape.refusals,
  baseline: Outcome.shape.baseline,
  /** Subtask states `empty` with `sourcesReached: 0` are flagged: a source was unreachable, not empty. */
  sourceUnreachable: z.boolean().optional(),
  late: z.array(LateEvidence).optional(),
  /** On a hedged subtask whose race a copy won: the replica, or every piece. */
  hedgeWinner: HedgeWinner.optional(),
  /** On a hedged subtask once its race started: its copies (replicas or pieces), their scopes and states. */
  hedgeCopies: z.array(z.object({ id: SubtaskId, assigned: DispatchedSubtask.shape.assigned, state: SubtaskState })).optional(),
});
export type SubtaskView = z.infer<typeof SubtaskView>;

export const RunProgress = z.object({
  dispatched: z.int().min(0),
  terminal: z.int().min(0),
  byState: z.record(z.string(), z.int().min(0)),
});
export type RunProgress = z.infer<typeof RunProgress>;

/**
 * Present when a run resource carries only a page of its subtasks (or none): a run with more than
 * `PAGED_RUN_SUBTASKS` subtasks, or a caller that asked with `?subtasks=page|none`. The rest are
 * read from `GET /runs/{runId}/subtasks`, starting at `next`.
 */
export const SubtasksPage = z.object({
  /** Subtasks in this resource's `subtasks`: the first of the run's subtasks in id order. */
  returned: z.int().min(0),
  /** The run's committed subtasks, as `progress.dispatched` counts them. */
  total: z.int().min(0),
  /** The path of the page that follows (`/runs/{runId}/subtasks?cursor=…`); absent when `subtasks` holds them all. */
  next: z.string().optional(),
});
export type SubtasksPage = z.infer<typeof SubtasksPage>;

/** `GET /runs/{runId}` and `tessera run FILE --json`. */
export const RunResource = z.object({
  runId: z.string(),
  status: RunStatus,
  goal: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  universe: Universe,
  round: z.int().min(0),
  progress: RunProgress,
  budget: RunBudget,
  usage: Usage,
  /** Every subtask in dispatch order; only a page of them, in id order, when `subtasksPage` is present. */
  subtasks: z.array(SubtaskView),
  /** Present when `subtasks` is a page (see {@link SubtasksPage}); absent when it holds every subtask. */
  subtasksPage: SubtasksPage.optional(),
  /** Present once the run has ended; its `coverage` is always present then, failed runs included. */
  answer: Answer.nullable(),
  /** Set when the run failed for a reason other than its coverage policy. */
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
export type RunResource = z.infer<typeof RunResource>;

/**
 * Something the planner foresees but does not refuse. `capacity_short`: the worker kind's
 * capacity (its `maxConcurrency × batchSize`) cannot finish the plan's subtasks of that kind by
 * their deadlines, given the kind's declared typical duration.
 */
export const PlanWarning = z.object({
  code: z.enum(['capacity_short']),
  worker: z.string(),
  /** The request field to change: `split.deadlineSeconds`, `subtasks.3.deadlineSeconds`. */
  path: z.string(),
  message: z.string(),
});
export type PlanWarning = z.infer<typeof PlanWarning>;

/** `202 Accepted` body of `POST /runs`. */
export const RunAccepted = z.object({
  runId: z.string(),
  status: RunStatus,
  location: z.string(),
  /** What the planner foresees but does not refuse; empty when nothing (absent from older servers). */
  warnings: z.array(PlanWarning).default([]),
});
export type RunAccepted = z.infer<typeof RunAccepted>;

/**
 * The most issues one error answer lists. A request can have tens of thousands of problems (one
 * per bad id); listing them all would make the answer larger than the request, and past Lambda's
 * 6 MB response limit a 400 would become API Gateway's 500. The rest are counted in `issuesOmitted`.
 */
export const MAX_LISTED_ISSUES = 100;

/** Error body of every non-2xx answer except API Gateway's own 401. */
export const ErrorBody = z.object({
  error: z.object({
    code: z.string(),
    message: z.string(),
    /** The problems, each naming its field: the first {@link MAX_LISTED_ISSUES} found. */
    issues: z
      .array(z.object({ path: z.string(), code: z.string(), message: z.string(), subtaskIds: z.array(z.string()).optional() }).passthrough())
      .optional(),
    /** How many more problems were found than `issues` lists; absent when it lists them all. */
    issuesOmitted: z.int().min(1).optional(),
    requestId: z.string().optional(),
  }),
});
export type ErrorBody = z.infer<typeof ErrorBody>;

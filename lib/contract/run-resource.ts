import { z } from 'zod';
import { Universe } from './scope';
import { RunBudget, SubtaskId } from './run-request';
import { Answer } from './coverage';
import { Checkpoint, DispatchedSubtask, HedgeWinner, Observed, Outcome, SubtaskState, Usage } from './outcome';

export const RunStatus = z
  .enum(['running', 'succeeded', 'failed', 'cancelled'])
  .describe('running; succeeded (its answer may still be incomplete: see answer.coverage.complete); failed (its coverage is still given); cancelled.');
export type RunStatus = z.infer<typeof RunStatus>;

/** A result that arrived after its subtask was sealed. Kept as evidence; it never changes the state. */
export const LateEvidence = z
  .object({
    receivedAt: z.string().describe('When it arrived, an ISO instant.'),
    generation: z.int().min(1).describe('The claim generation that produced it.'),
    /** Why it was refused: the subtask was sealed, or the run cancelled. */
    refusedBecause: z.enum(['sealed', 'cancelled', 'deadline_passed', 'run_ended']).describe('Why it was refused.'),
    outcome: Outcome,
  })
  .describe('A result that arrived after its subtask was sealed: kept as evidence, it never changes the state.');
export type LateEvidence = z.infer<typeof LateEvidence>;

/** One dispatched subtask as `GET /runs/{runId}` shows it. */
export const SubtaskView = DispatchedSubtask.omit({ input: true })
  .extend({
    state: SubtaskState,
    observed: Observed.nullable().describe('What its tools recorded; null before it ends, or when nothing was recorded.'),
    sources: z.array(z.string()).describe('The sources that answered.'),
    sourcesReached: z.int().min(0).describe('How many sources answered; empty with 0 means a source was unreachable.'),
    usage: Usage,
    reason: z.string().optional().describe('Why it ended so, for people.'),
    refusals: Outcome.shape.refusals,
    baseline: Outcome.shape.baseline,
    /** Subtask states `empty` with `sourcesReached: 0` are flagged: a source was unreachable, not empty. */
    sourceUnreachable: z.boolean().optional().describe('Set on empty with sourcesReached 0: a source was unreachable, not empty.'),
    late: z.array(LateEvidence).optional().describe('Results that arrived after it was sealed.'),
    /** While it runs, and after a timeout: what its worker's last checkpoint had read (live coverage; the prefix a retry skips). */
    checkpoint: Checkpoint.optional().describe("While it runs, and after a timeout: its worker's last checkpoint (live coverage; the prefix a retry skips)."),
    /** On a hedged subtask whose race a copy won: the replica, or every piece. */
    hedgeWinner: HedgeWinner.optional(),
    /** On a `subdivide` subtask whose original handed over to its pieces: when; its `checkpoint` is the prefix, the pieces read the rest. */
    handedOverAt: z
      .string()
      .optional()
      .describe('On a subdivide subtask whose original handed over to its pieces: when (its checkpoint is the prefix; the pieces read the rest).'),
    /** On a hedged subtask once its race started: its copies (replicas or pieces), their scopes and states. */
    hedgeCopies: z
      .array(z.object({ id: SubtaskId, assigned: DispatchedSubtask.shape.assigned, state: SubtaskState }))
      .optional()
      .describe('On a hedged subtask once its race started: its copies (replicas or pieces), their scopes and states.'),
  })
  .describe('One dispatched subtask as GET /runs/{runId} shows it.');
export type SubtaskView = z.infer<typeof SubtaskView>;

export const RunProgress = z
  .object({
    dispatched: z.int().min(0).describe('Subtasks dispatched so far, every round.'),
    terminal: z.int().min(0).describe('Of those, the ones that ended.'),
    byState: z.record(z.string(), z.int().min(0)).describe('Subtasks by state (ok, pending, timed_out…).'),
  })
  .describe('How far the run is.');
export type RunProgress = z.infer<typeof RunProgress>;

/**
 * Present when a run resource carries only a page of its subtasks (or none): a run with more than
 * `PAGED_RUN_SUBTASKS` subtasks, or a caller that asked with `?subtasks=page|none`. The rest are
 * read from `GET /runs/{runId}/subtasks`, starting at `next`.
 */
export const SubtasksPage = z
  .object({
    /** Subtasks in this resource's `subtasks`: the first of the run's subtasks in id order. */
    returned: z.int().min(0).describe("Subtasks in this resource's subtasks: the first of the run's subtasks in id order."),
    /** The run's committed subtasks, as `progress.dispatched` counts them. */
    total: z.int().min(0).describe("The run's committed subtasks, as progress.dispatched counts them."),
    /** The path of the page that follows (`/runs/{runId}/subtasks?cursor=…`); absent when `subtasks` holds them all. */
    next: z.string().optional().describe('The path of the page that follows (/runs/{runId}/subtasks?cursor=…).'),
  })
  .describe('Present when subtasks is only a page of them (or none).');
export type SubtasksPage = z.infer<typeof SubtasksPage>;

/** `GET /runs/{runId}` and `tessera run FILE --json`. */
export const RunResource = z
  .object({
    runId: z.string().describe('The run id.'),
    status: RunStatus,
    goal: z.string().describe("The request's goal."),
    createdAt: z.string().describe('When the run was accepted, an ISO instant.'),
    updatedAt: z.string().describe('When the run last changed, an ISO instant.'),
    universe: Universe,
    round: z.int().min(0).describe('The latest round dispatched (0 before the first).'),
    progress: RunProgress,
    budget: RunBudget,
    usage: Usage,
    /** Every subtask in dispatch order; only a page of them, in id order, when `subtasksPage` is present. */
    subtasks: z.array(SubtaskView).describe('Every subtask in dispatch order; only a page of them, in id order, when subtasksPage is present.'),
    /** Present when `subtasks` is a page (see {@link SubtasksPage}); absent when it holds every subtask. */
    subtasksPage: SubtasksPage.optional(),
    /** Present once the run has ended; its `coverage` is always present then, failed runs included. */
    answer: Answer.nullable().describe('Present once the run has ended, failed runs included; null while it runs.'),
    /** Set when the run failed for a reason other than its coverage policy. */
    error: z
      .object({
        code: z.string().describe('The error name (RequiredGapError, ExecutionFailed…).'),
        message: z.string().describe('What happened, for people.'),
      })
      .optional()
      .describe('Why the run failed.'),
  })
  .describe('GET /runs/{runId} and tessera run FILE --json.');
export type RunResource = z.infer<typeof RunResource>;

/**
 * Something the planner foresees but does not refuse. `capacity_short`: the worker kind's
 * capacity (its `maxConcurrency × batchSize`) cannot finish the plan's subtasks of that kind by
 * their deadlines, given the kind's declared typical duration.
 */
export const PlanWarning = z
  .object({
    code: z.enum(['capacity_short']).describe("capacity_short: the kind's capacity cannot finish the plan's subtasks by their deadlines."),
    worker: z.string().describe('The worker kind concerned.'),
    /** The request field to change: `split.deadlineSeconds`, `subtasks.3.deadlineSeconds`. */
    path: z.string().describe('The request field to change (split.deadlineSeconds).'),
    message: z.string().describe('The warning in words.'),
  })
  .describe('Something the planner foresees but does not refuse.');
export type PlanWarning = z.infer<typeof PlanWarning>;

/** `202 Accepted` body of `POST /runs`. */
export const RunAccepted = z
  .object({
    runId: z.string().describe('The new run id.'),
    status: RunStatus,
    location: z.string().describe('The path of the run resource (/runs/{runId}).'),
    /** What the planner foresees but does not refuse; empty when nothing (absent from older servers). */
    warnings: z.array(PlanWarning).default([]).describe('What the planner foresees but does not refuse.'),
  })
  .describe('202 Accepted body of POST /runs.');
export type RunAccepted = z.infer<typeof RunAccepted>;

/**
 * The most issues one error answer lists. A request can have tens of thousands of problems (one
 * per bad id); listing them all would make the answer larger than the request, and past Lambda's
 * 6 MB response limit a 400 would become API Gateway's 500. The rest are counted in `issuesOmitted`.
 */
export const MAX_LISTED_ISSUES = 100;

/** Error body of every non-2xx answer except API Gateway's own 401. */
export const ErrorBody = z
  .object({
    error: z
      .object({
        code: z.string().describe('The error code (ValidationError, RunNotFound…).'),
        message: z.string().describe('What went wrong, for people.'),
        issues: z
          .array(
            z
              .object({
                path: z.string().describe('The request field, dotted with numeric indexes.'),
                code: z.string().describe('The problem code (assignment_gap, invalid_request…).'),
                message: z.string().describe('The problem in words.'),
                subtaskIds: z.array(z.string()).optional().describe('The subtasks concerned.'),
              })
              .passthrough(),
          )
          .optional()
          .describe(`The problems with the request, each naming its field: the first ${MAX_LISTED_ISSUES} found.`),
        issuesOmitted: z.int().min(1).optional().describe('How many more problems were found than `issues` lists; absent when it lists them all.'),
        requestId: z.string().optional().describe('The request id, for the logs.'),
      })
      .describe('The error.'),
  })
  .describe("Error body of every non-2xx answer except API Gateway's own.");
export type ErrorBody = z.infer<typeof ErrorBody>;

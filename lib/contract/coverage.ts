import { z } from 'zod';
import { FileScope, ItemId, TimePoint, Universe } from './scope';
import { Policy, QuestionId, SubtaskId, WorkerKind } from './run-request';
import { DispatchedSubtask, Outcome } from './outcome';

/**
 * A region of the universe in the universe's own dimension: `from`/`toExclusive` for time,
 * `ids` for ids, `files` for paths. Exactly the fields of that dimension are present.
 */
const regionFields = {
  from: TimePoint.optional(),
  toExclusive: TimePoint.optional(),
  ids: z.array(ItemId).optional(),
  files: z.array(FileScope).optional(),
};

export const ProblemCode = z.enum([
  // a field of the request fails its schema (wrong type, missing, out of range)
  'invalid_request',
  // plan problems: a request with any of these is rejected before anything is written
  'assignment_gap',
  'assignment_overlap',
  'scope_outside_universe',
  'dimension_mismatch',
  'duplicate_subtask_id',
  'duplicate_universe_id',
  'unknown_worker',
  'invalid_input',
  'deadline_out_of_horizon',
  'unassigned_question',
  'duplicate_question',
  'unknown_question',
  'plan_too_large',
  'budget_exceeds_run',
  'unknown_model',
  // reconcile problems: found when outcomes are compared with the manifest
  'missing_outcome',
  'unexpected_outcome',
  'observed_ends_early',
  'observed_starts_late',
  'observed_outside_assignment',
  'ids_missing',
  'ids_unexpected',
  'lines_not_inspected',
  'inconsistent_observation',
]);
export type ProblemCode = z.infer<typeof ProblemCode>;

/** One precise problem: what, where (a field path or a region), and which subtasks. */
export const Problem = z.object({
  code: ProblemCode,
  message: z.string(),
  /** Field path in the request, dotted with numeric indexes: `subtasks.1.scope.from`. */
  path: z.string().optional(),
  subtaskIds: z.array(SubtaskId).optional(),
  ...regionFields,
});
export type Problem = z.infer<typeof Problem>;

export const GapStatus = z.enum(['confirmed_empty', 'data_found', 'unchecked', 'recheck_failed', 'source_unreachable']);
export type GapStatus = z.infer<typeof GapStatus>;

/** Why an assigned region was never read: its line of work's latest attempt did not end `ok`. */
export const UnreadReason = z.enum(['timed_out', 'invalid', 'empty', 'cancelled', 'source_unreachable', 'missing_outcome']);
export type UnreadReason = z.infer<typeof UnreadReason>;

/**
 * Part of the universe without `ok` data. Every such region is listed: the `ok` observations
 * and the gaps together cover the whole universe.
 */
export const CoverageGap = z.object({
  ...regionFields,
  /**
   * `assignment`: no subtask was given it. `observed`: assigned, but the data stopped short.
   * `unread`: assigned, but its subtask (latest attempt) did not end `ok`, so nobody read it.
   */
  kind: z.enum(['assignment', 'observed', 'unread']),
  /** The subtask whose observed data left this gap, or (`unread`) the latest attempt that did not read it. */
  subtaskId: SubtaskId.optional(),
  /** For `unread` gaps: how that attempt ended (`source_unreachable` is `empty` with no source reached). */
  reason: UnreadReason.optional(),
  status: GapStatus,
  /** Worker kind the gap was re-checked against, such as `transaction-feed`. */
  recheckedAgainst: WorkerKind.optional(),
  recheckSubtaskId: SubtaskId.optional(),
  /** Records the re-check found in the gap. */
  records: z.int().min(0).optional(),
  /**
   * Present when the policy allowed a retry or re-check of this gap but none was dispatched:
   * `history_bound`, the follow-up did not fit the history of the run's execution (docs/deadlines.md).
   */
  notFollowedUp: z.enum(['history_bound']).optional(),
});
export type CoverageGap = z.infer<typeof CoverageGap>;

export const CoverageOverlap = z.object({ ...regionFields, subtaskIds: z.array(SubtaskId).min(2) });
export type CoverageOverlap = z.infer<typeof CoverageOverlap>;

/**
 * What an answer actually covered, computed only from the manifest and the outcomes.
 * Every answer carries one; it is never optional.
 */
export const Coverage = z.object({
  /**
   * True exactly when nothing is left in doubt: no gap other than one a re-check settled
   * (`confirmed_empty`, `data_found`), no `degradedReason` and no missing question.
   */
  complete: z.boolean(),
  missingQuestions: z.array(QuestionId),
  /** `"<subtaskId>:<state>"` for every line of work that did not end `ok`. */
  degradedReason: z.array(z.string()),
  /** Number of first-round subtasks the universe was split into. */
  partitions: z.int().min(0),
  overlaps: z.array(CoverageOverlap),
  gaps: z.array(CoverageGap),
  /** Every problem reconcile found, including the ones summarised above. */
  problems: z.array(Problem).default([]),
  /** One line rendered from the fields above, for people. */
  statement: z.string(),
});
export type Coverage = z.infer<typeof Coverage>;

export const Answer = z.object({
  text: z.string(),
  /** Merged findings of the `ok` outcomes, shaped by the worker kinds (`totalDeductible`). */
  result: z.record(z.string(), z.unknown()),
  coverage: Coverage,
});
export type Answer = z.infer<typeof Answer>;

/** How reports name a worker kind's source and its records: `transaction feed`, `transactions`. */
export const SourceLabel = z.object({
  label: z.string().min(1),
  recordNoun: z.string().min(1),
  alternateSource: WorkerKind.optional(),
});
export type SourceLabel = z.infer<typeof SourceLabel>;

/** What the parent dispatched: the only source of truth for coverage. */
export const Manifest = z.object({
  universe: Universe,
  subtasks: z.array(DispatchedSubtask),
  policy: Policy.optional(),
  questions: z.array(z.object({ id: QuestionId, text: z.string().optional() })).optional(),
  sources: z.record(WorkerKind, SourceLabel).optional(),
});
export type Manifest = z.infer<typeof Manifest>;
export type ManifestInput = z.input<typeof Manifest>;

/** Input of `tessera reconcile FILE`: an offline audit of any run. */
export const ReconcileInput = Manifest.extend({ outcomes: z.array(Outcome) });
export type ReconcileInput = z.input<typeof ReconcileInput>;

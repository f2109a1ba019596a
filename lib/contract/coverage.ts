import { z } from 'zod';
import { FileScope, ItemId, TimePoint, Universe } from './scope';
import { Policy, QuestionId, SubtaskId, WorkerKind } from './run-request';
import { DispatchedSubtask, Outcome, TerminalState } from './outcome';
import { AnswerSynthesis, Conflict } from './synthesis';

/**
 * A region of the universe in the universe's own dimension: `from`/`toExclusive` for time,
 * `ids` for ids, `files` for paths. Exactly the fields of that dimension are present.
 */
const regionFields = {
  from: TimePoint.optional().describe('Time: the first point of the region (inclusive).'),
  toExclusive: TimePoint.optional().describe('Time: the end of the region (exclusive).'),
  ids: z.array(ItemId).optional().describe('Ids: the ids of the region.'),
  files: z.array(FileScope).optional().describe('Paths: the files (and line ranges) of the region.'),
};

export const ProblemCode = z
  .enum([
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
  ])
  .describe('What kind of problem: a request field (invalid_request), the plan (assignment_gap…), or what reconcile found (observed_ends_early…).');
export type ProblemCode = z.infer<typeof ProblemCode>;

/** One precise problem: what, where (a field path or a region), and which subtasks. */
export const Problem = z
  .object({
    code: ProblemCode,
    message: z.string().describe('The problem in words, naming the field or subtask and the reason.'),
    /** Field path in the request, dotted with numeric indexes: `subtasks.1.scope.from`. */
    path: z.string().optional().describe('Field path, dotted with numeric indexes (subtasks.1.scope.from).'),
    subtaskIds: z.array(SubtaskId).optional().describe('The subtasks the problem is about.'),
    ...regionFields,
  })
  .describe('One precise problem: what, where (a field path or a region of the universe), and which subtasks.');
export type Problem = z.infer<typeof Problem>;

/**
 * What the re-check of an observed gap concluded. Only a source other than the one that left the
 * gap can confirm it empty: `confirmed_empty` and `data_found` settle a gap, every other status
 * leaves it unsettled (`coverage.complete` is then false).
 */
export const GapStatus = z
  .enum(['confirmed_empty', 'data_found', 'unchecked', 'recheck_failed', 'source_unreachable', 'unconfirmed_empty'])
  .describe(
    'What the re-check of the gap concluded. confirmed_empty: another kind than the one that left the gap reached its source and found nothing (settled). ' +
      'data_found: the re-check read records in the gap, which are folded into the answer (settled). ' +
      'unconfirmed_empty: the re-check returned nothing, but no other source vouched for it: ' +
      'it ran on the kind that left the gap, or read nothing at all (unsettled). ' +
      'source_unreachable: the re-check reached no source (unsettled). recheck_failed: the re-check timed out, was invalid or cancelled (unsettled). ' +
      'unchecked: no re-check was dispatched (unsettled).',
  );
export type GapStatus = z.infer<typeof GapStatus>;

/**
 * The gap statuses that settle a gap: a re-check confirmed it empty from another source, or
 * found its data. A coverage with any other gap is not `complete`.
 *
 * @example
 * coverage.gaps.filter((gap) => !SETTLED_GAP_STATUSES.includes(gap.status)) // what is left in doubt
 */
export const SETTLED_GAP_STATUSES: readonly GapStatus[] = Object.freeze(['confirmed_empty', 'data_found'] as const);

/**
 * Why an assigned region was never read: its line of work's latest attempt did not end `ok`.
 * Every terminal state but `ok` is one (so a new terminal state is an unread reason by
 * construction), then `source_unreachable` and `missing_outcome`.
 */
export const UnreadReason = z
  .enum([...TerminalState.exclude(['ok']).options, 'source_unreachable', 'missing_outcome'])
  .describe('For unread gaps: how the latest attempt ended (source_unreachable is empty with no source reached).');
export type UnreadReason = z.infer<typeof UnreadReason>;

/**
 * Part of the universe without `ok` data. Every such region is listed: the `ok` observations
 * and the gaps together cover the whole universe.
 */
export const CoverageGap = z
  .object({
    ...regionFields,
    /**
     * `assignment`: no subtask was given it. `observed`: assigned, but the data stopped short.
     * `unread`: assigned, but its subtask (latest attempt) did not end `ok`, so nobody read it.
     */
    kind: z
      .enum(['assignment', 'observed', 'unread'])
      .describe('assignment: no subtask was given it; observed: assigned, but the data stopped short; unread: its subtask did not end ok.'),
    /** The subtask whose observed data left this gap, or (`unread`) the latest attempt that did not read it. */
    subtaskId: SubtaskId.optional().describe('The subtask whose observed data left the gap, or (unread) the latest attempt that did not read it.'),
    /** For `unread` gaps: how that attempt ended (`source_unreachable` is `empty` with no source reached). */
    reason: UnreadReason.optional(),
    status: GapStatus,
    /** Worker kind the gap was re-checked against, such as `transaction-feed`. */
    recheckedAgainst: WorkerKind.optional().describe(
      'The worker kind that re-checked the gap (transaction-feed); the kind that left it when it has no alternate source.',
    ),
    recheckSubtaskId: SubtaskId.optional().describe('The latest attempt of the re-check (B.g1, or its retry B.g1.r2).'),
    /** Records the re-check found in the gap. */
    records: z.int().min(0).optional().describe('Records the re-check found in the gap (0 when it found none).'),
    /**
     * Kept for compatibility, never set: every round runs as batches of child executions, so no
     * follow-up the policy allows is cut for the run's execution history (docs/deadlines.md,
     * "One round path"). Clients may still read `history_bound` from earlier answers.
     */
    notFollowedUp: z
      .enum(['history_bound'])
      .optional()
      .describe(
        "Unused: no longer set. history_bound once meant the policy allowed a retry or re-check that did not fit the run's execution history; " +
          'every round now runs as batches of child executions, so nothing is cut.',
      ),
  })
  .describe('A part of the universe without ok data; the ok observations and the gaps together cover the universe.');
export type CoverageGap = z.infer<typeof CoverageGap>;

export const CoverageOverlap = z
  .object({ ...regionFields, subtaskIds: z.array(SubtaskId).min(2).describe('The subtasks whose assignments overlap there.') })
  .describe('A region assigned to more than one subtask.');
export type CoverageOverlap = z.infer<typeof CoverageOverlap>;

/**
 * What an answer actually covered, computed only from the manifest and the outcomes.
 * Every answer carries one; it is never optional.
 */
export const Coverage = z
  .object({
    /**
     * True exactly when nothing is left in doubt: no gap other than one a re-check settled
     * (`confirmed_empty`, `data_found`), no `degradedReason` and no missing question.
     */
    complete: z
      .boolean()
      .describe('True exactly when nothing is left in doubt: every gap settled (confirmed_empty, data_found), no degradedReason, no missing question.'),
    missingQuestions: z.array(QuestionId).describe('Questions whose subtasks did not end ok, or that no subtask was given.'),
    /** `"<subtaskId>:<state>"` for every line of work that did not end `ok`. */
    degradedReason: z
      .array(z.string())
      .describe('"<subtaskId>:<why>" for everything that keeps the coverage from being complete (C.r2:timed_out, B.g1:unconfirmed_empty).'),
    /** Number of first-round subtasks the universe was split into. */
    partitions: z.int().min(0).describe('Number of first-round subtasks the universe was split into.'),
    overlaps: z.array(CoverageOverlap).describe('Regions assigned to more than one subtask.'),
    gaps: z.array(CoverageGap).describe('Every region of the universe without ok data.'),
    /** Every problem reconcile found, including the ones summarised above. */
    problems: z.array(Problem).default([]).describe('Every problem reconcile found, including the ones summarised above.'),
    /** Ok findings that claim different values for the same key; absent when there are none (docs/workers.md, "Synthesis"). */
    conflicts: z.array(Conflict).optional().describe('Ok findings that claim different values for the same key; absent when none.'),
    /**
     * Present when the request asked for a model synthesizer: true exactly when the answer is its
     * synthesis and the audit found no problem. It says nothing about coverage (`complete` does).
     */
    synthesisAuditedClean: z
      .boolean()
      .optional()
      .describe('Present when synthesis was requested: true exactly when the answer is the model synthesis and its audit is clean.'),
    /** One line rendered from the fields above, for people. */
    statement: z.string().describe('One line rendered from the fields above, for people.'),
  })
  .describe('What an answer actually covered, computed only from the manifest and the outcomes (never from model text).');
export type Coverage = z.infer<typeof Coverage>;

export const Answer = z
  .object({
    text: z.string().describe('The answer in words, ending with the coverage statement.'),
    /** Merged findings of the `ok` outcomes, shaped by the worker kinds (`totalDeductible`). */
    result: z.record(z.string(), z.unknown()).describe('Merged findings of the ok outcomes, shaped by the worker kinds (totalDeductible).'),
    coverage: Coverage,
    /** Present when the request asked for synthesis: the claims, their citations and the audit. */
    synthesis: AnswerSynthesis.optional(),
  })
  .describe('The answer of an ended run, failed runs included: its text, merged result and coverage.');
export type Answer = z.infer<typeof Answer>;

/** How reports name a worker kind's source and its records: `transaction feed`, `transactions`. */
export const SourceLabel = z
  .object({
    label: z.string().min(1).describe('How reports name the source (transaction feed).'),
    recordNoun: z.string().min(1).describe('How reports name its records (transactions).'),
    alternateSource: WorkerKind.optional().describe(
      "The kind that re-checks this kind's gaps against another source; without one, the kind re-reads them itself.",
    ),
  })
  .describe("How reports name a worker kind's source and its records.");
export type SourceLabel = z.infer<typeof SourceLabel>;

/** What the parent dispatched: the only source of truth for coverage. */
export const Manifest = z
  .object({
    universe: Universe,
    subtasks: z.array(DispatchedSubtask).describe('Every subtask dispatched, every round.'),
    policy: Policy.optional(),
    questions: z
      .array(z.object({ id: QuestionId, text: z.string().optional().describe('The question in words.') }))
      .optional()
      .describe("The request's questions."),
    sources: z.record(WorkerKind, SourceLabel).optional().describe('How reports name each worker kind, with its alternate source.'),
  })
  .describe('What the parent dispatched: the only source of truth for coverage.');
export type Manifest = z.infer<typeof Manifest>;
export type ManifestInput = z.input<typeof Manifest>;

/** Input of `tessera reconcile FILE`: an offline audit of any run. */
export const ReconcileInput = Manifest.extend({ outcomes: z.array(Outcome).describe('The outcome of each dispatched subtask.') }).describe(
  'Input of tessera reconcile FILE: a manifest and its outcomes, for an offline audit of any run.',
);
export type ReconcileInput = z.input<typeof ReconcileInput>;

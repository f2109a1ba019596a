import { z } from 'zod';
import { FileScope, ItemId, Scope, TimePoint } from './scope';
import { Hedge, HedgeMode, QuestionId, SubtaskBudget, SubtaskId, WorkerInput, WorkerKind } from './run-request';

/** Every dispatched subtask ends in exactly one of these. */
export const TerminalState = z
  .enum(['ok', 'timed_out', 'invalid', 'empty', 'cancelled'])
  .describe('How a subtask ended: ok (valid output; records, or nothing asked), timed_out, invalid, empty (a source asked, no records), cancelled.');
export type TerminalState = z.infer<typeof TerminalState>;

/** Lifecycle states before a subtask is terminal. */
export const LiveState = z.enum(['pending', 'running']).describe('A subtask not ended yet: pending (not claimed) or running.');
export const SubtaskState = z.union([LiveState, TerminalState]).describe("A subtask's state: live, or how it ended.");
export type SubtaskState = z.infer<typeof SubtaskState>;

/**
 * Coverage observed in the data a worker touched, derived by the tool layer from the rows it
 * processed, never written by the worker or a model. `minDate`/`maxDate` are inclusive and are
 * `null` exactly when `recordCount` is 0.
 */
const recordCount = z.int().min(0).describe('Records the tools returned.');
export const ObservedTime = z.object({
  minDate: TimePoint.nullable().describe("The first record's point (inclusive); null exactly when recordCount is 0."),
  maxDate: TimePoint.nullable().describe("The last record's point (inclusive); null exactly when recordCount is 0."),
  recordCount,
});
export const ObservedIds = z.object({ ids: z.array(ItemId).describe('The ids the tools returned records for, or looked up.'), recordCount });
export const ObservedPaths = z.object({ files: z.array(FileScope).describe('The files and line ranges the tools returned.'), recordCount });
export const Observed = z
  .union([ObservedTime, ObservedIds, ObservedPaths])
  .describe('Coverage observed in the data the worker touched, recorded by its tools, never written by the worker or a model.');
export type Observed = z.infer<typeof Observed>;
export type ObservedTime = z.infer<typeof ObservedTime>;
export type ObservedIds = z.infer<typeof ObservedIds>;
export type ObservedPaths = z.infer<typeof ObservedPaths>;

export const Usage = z
  .object({
    modelCalls: z.int().min(0).describe('Model calls reserved (and charged, whatever their outcome).'),
    estimatedCost: z.int().min(0).describe('Estimated cost units of those calls.'),
  })
  .describe('Model calls and estimated cost spent.');
export type Usage = z.infer<typeof Usage>;

/** A scoped tool refused a request outside the assignment. */
export const Refusal = z
  .object({
    tool: z.string().describe('The tool that refused.'),
    reason: z.string().describe('Why: outside the assignment, arguments that do not match the tool…'),
    /** What was asked for, summarised (never a payload). */
    requested: z.string().optional().describe('What was asked for, summarised (never a payload).'),
  })
  .describe('A scoped tool refused a request outside the assignment.');
export type Refusal = z.infer<typeof Refusal>;

/** Comparison with a deterministic baseline, when the worker kind declares one (the catering example). */
export const BaselineComparison = z
  .object({
    matched: z.boolean().describe("Whether the worker's findings equal the baseline's."),
    workerModelCalls: z.int().min(0).describe('Model calls the worker made.'),
    baselineModelCalls: z.int().min(0).describe('Model calls the baseline made (none, by construction).'),
  })
  .describe('Comparison with a deterministic baseline, when the worker kind declares one (the catering example).');

/**
 * What a checkpoint's findings rest on: the findings a kind that declares partial findings
 * reported with `ctx.checkpoint(findings)`, and the coverage its tools had observed at that call.
 * Stored in the same write as the checkpoint, so findings never travel without their observation.
 */
export const CheckpointPartial = z
  .object({
    covered: z.array(Scope).describe('The regions of the assignment its tools had answered when the findings were reported.'),
    observed: Observed.describe('The records those regions returned.'),
    findings: z.unknown().describe("The kind's partial findings over exactly those records."),
  })
  .describe('Partial findings with the observation they rest on.');
export type CheckpointPartial = z.infer<typeof CheckpointPartial>;

/**
 * What a running worker's tools had observed so far, stored in the ledger by the SDK while it
 * runs. It belongs to the claim's generation, only grows and never leaves the assignment. A
 * timed-out outcome carries the last one: its `partial` (when the kind declared partial
 * findings) is the prefix reconcile counts as read; the rest is sent again.
 */
export const Checkpoint = z
  .object({
    generation: z.int().min(1).describe('The claim generation that wrote it.'),
    sequence: z.int().min(1).describe('Its number among the checkpoints written for the subtask (1-based, across generations).'),
    writtenAt: z.string().describe('When it was written, an ISO instant in UTC.'),
    covered: z.array(Scope).describe('The regions of the assignment its tools have answered so far (whole requested ranges, ids, lines).'),
    observed: Observed.describe('The records its tools returned so far.'),
    sources: z.array(z.string()).default([]).describe('The sources that answered so far.'),
    sourcesReached: z.int().min(0).default(0).describe('How many sources answered so far.'),
    usage: Usage.default({ modelCalls: 0, estimatedCost: 0 }),
    partial: CheckpointPartial.optional(),
  })
  .describe("What a running worker's tools had observed so far, with partial findings when its kind declares them.");
export type Checkpoint = z.infer<typeof Checkpoint>;
export type CheckpointInput = z.input<typeof Checkpoint>;

/** The outcome of one dispatched subtask, as recorded in the ledger. */
export const Outcome = z
  .object({
    subtaskId: SubtaskId,
    state: TerminalState,
    observed: Observed.nullable().describe('What its tools recorded; null when nothing was recorded (it never ran, or timed out).'),
    sources: z.array(z.string()).default([]).describe('The sources that answered (a statement, a file, a feed).'),
    sourcesReached: z.int().min(0).default(0).describe('How many sources answered; empty with 0 means a source was unreachable.'),
    /** The worker kind's validated output. Synthesis reads it only when `state` is `ok`. */
    findings: z.unknown().optional().describe("The worker kind's validated output; synthesis reads it only when state is ok."),
    usage: Usage.default({ modelCalls: 0, estimatedCost: 0 }),
    /** Why the subtask is not ok, for people: `deadline 2025-…Z passed; never claimed`. */
    reason: z.string().max(500).optional().describe('Why it ended so, for people (deadline 2025-…Z passed; never claimed).'),
    refusals: z.array(Refusal).default([]).describe('Requests its tools refused.'),
    baseline: BaselineComparison.optional(),
    /**
     * On a `timed_out` outcome: the last checkpoint its worker wrote before the deadline; on a
     * subtask that handed over to its hedge pieces: the checkpoint it handed over at (the prefix).
     */
    checkpoint: Checkpoint.optional().describe(
      'On a timed_out outcome: the last checkpoint its worker wrote before the deadline; ' +
        'on a subtask that handed over to its hedge pieces: the checkpoint it handed over at (the prefix).',
    ),
  })
  .describe('The outcome of one dispatched subtask, as recorded in the ledger.');
export type Outcome = z.infer<typeof Outcome>;
export type OutcomeInput = z.input<typeof Outcome>;

/** Who won a hedged subtask's race: a replica, or every piece (an original that wins records no winner). */
export const HedgeWinner = z
  .discriminatedUnion('by', [
    z.object({ by: z.enum(['original', 'replica']).describe('The original or a replica won.'), id: SubtaskId }),
    z.object({ by: z.literal('pieces').describe('The pieces won, together.'), ids: z.array(SubtaskId).min(1).describe('Every winning piece.') }),
  ])
  .describe("Who won a hedged subtask's race.");
export type HedgeWinner = z.infer<typeof HedgeWinner>;

/** How a subtask came to exist beyond the first round. */
export const Lineage = z
  .discriminatedUnion('kind', [
    z.object({
      kind: z.literal('retry').describe('A retry of subtask of.'),
      of: SubtaskId,
      attempt: z.int().min(2).describe('The attempt number, from 2.'),
      /** What earlier attempts read before their deadlines (their checkpoints' partial findings): this retry's scope is the rest. */
      prefix: z
        .array(Scope)
        .optional()
        .describe("What earlier attempts read before their deadlines (their checkpoints' partial findings); the retry is assigned only the rest."),
    }),
    z.object({ kind: z.literal('recheck').describe('The re-check of a gap subtask of left.'), of: SubtaskId, gap: Scope.describe('The gap it re-checks.') }),
    /** A hedge copy of subtask `of`: replica or piece number `copy` (1-based), racing it on its allowance. */
    z.object({
      kind: z.literal('hedge').describe('A hedge copy of subtask of, racing it on its allowance.'),
      of: SubtaskId,
      mode: HedgeMode,
      copy: z.int().min(1).describe('The replica or piece number, from 1.'),
      /** On a piece of a hedge the original handed over: what it read before (its checkpoint's partial findings); the pieces tile only the rest. */
      prefix: z
        .array(Scope)
        .optional()
        .describe("On a piece of a hedge the original handed over: what it read before (its checkpoint's partial findings); the pieces tile only the rest."),
    }),
  ])
  .describe('How a subtask came to exist beyond the first round.');
export type Lineage = z.infer<typeof Lineage>;

/** One dispatched subtask with its immutable assignment. */
export const DispatchedSubtask = z
  .object({
    id: SubtaskId,
    worker: WorkerKind,
    round: z.int().min(1).describe('The round that dispatched it: 1 for the plan, 2… for retries and re-checks.'),
    questionIds: z.array(QuestionId).default([]).describe('The questions it answers.'),
    required: z.boolean().default(false).describe('The answer needs it (policy.onRequiredGap applies to its gaps).'),
    justification: z.string().optional().describe('Why the answer needs it, when required.'),
    assigned: Scope.describe("Its immutable assignment, in the universe's dimension."),
    /** Absolute deadline, an ISO instant in UTC. */
    deadline: z.string().optional().describe('Its absolute deadline, an ISO instant in UTC, fixed at dispatch.'),
    deadlineSeconds: z.int().min(1).optional().describe('Seconds from dispatch to the deadline, as requested.'),
    budget: SubtaskBudget.optional(),
    input: WorkerInput.optional(),
    model: z.string().optional().describe('The model it was given, when the request named one.'),
    lineage: Lineage.optional(),
    /** The hedge the subtask declared; its copies carry `lineage.kind: "hedge"` instead. */
    hedge: Hedge.optional(),
  })
  .describe('One dispatched subtask with its immutable assignment.');
export type DispatchedSubtask = z.infer<typeof DispatchedSubtask>;

import { z } from 'zod';
import { FileScope, ItemId, Scope, TimePoint } from './scope';
import { Hedge, HedgeMode, QuestionId, SubtaskBudget, SubtaskId, WorkerInput, WorkerKind } from './run-request';

/** Every dispatched subtask ends in exactly one of these. */
export const TerminalState = z.enum(['ok', 'timed_out', 'invalid', 'empty', 'cancelled']);
export type TerminalState = z.infer<typeof TerminalState>;

/** Lifecycle states before a subtask is terminal. */
export const LiveState = z.enum(['pending', 'running']);
export const SubtaskState = z.union([LiveState, TerminalState]);
export type SubtaskState = z.infer<typeof SubtaskState>;

/**
 * Coverage observed in the data a worker touched, derived by the tool layer from the rows it
 * processed, never written by the worker or a model. `minDate`/`maxDate` are inclusive and are
 * `null` exactly when `recordCount` is 0.
 */
export const ObservedTime = z.object({
  minDate: TimePoint.nullable(),
  maxDate: TimePoint.nullable(),
  recordCount: z.int().min(0),
});
export const ObservedIds = z.object({ ids: z.array(ItemId), recordCount: z.int().min(0) });
export const ObservedPaths = z.object({ files: z.array(FileScope), recordCount: z.int().min(0) });
export const Observed = z.union([ObservedTime, ObservedIds, ObservedPaths]);
export type Observed = z.infer<typeof Observed>;
export type ObservedTime = z.infer<typeof ObservedTime>;
export type ObservedIds = z.infer<typeof ObservedIds>;
export type ObservedPaths = z.infer<typeof ObservedPaths>;

export const Usage = z.object({ modelCalls: z.int().min(0), estimatedCost: z.int().min(0) });
export type Usage = z.infer<typeof Usage>;

/** A scoped tool refused a request outside the assignment. */
export const Refusal = z.object({
  tool: z.string(),
  reason: z.string(),
  /** What was asked for, summarised (never a payload). */
  requested: z.string().optional(),
});
export type Refusal = z.infer<typeof Refusal>;

/** Comparison with a deterministic baseline, when the worker kind declares one (the catering example). */
export const BaselineComparison = z.object({
  matched: z.boolean(),
  workerModelCalls: z.int().min(0),
  baselineModelCalls: z.int().min(0),
});

/** The outcome of one dispatched subtask, as recorded in the ledger. */
export const Outcome = z.object({
  subtaskId: SubtaskId,
  state: TerminalState,
  observed: Observed.nullable(),
  sources: z.array(z.string()).default([]),
  sourcesReached: z.int().min(0).default(0),
  /** The worker kind's validated output. Synthesis reads it only when `state` is `ok`. */
  findings: z.unknown().optional(),
  usage: Usage.default({ modelCalls: 0, estimatedCost: 0 }),
  /** Why the subtask is not ok, for people: `deadline 2025-…Z passed; never claimed`. */
  reason: z.string().max(500).optional(),
  refusals: z.array(Refusal).default([]),
  baseline: BaselineComparison.optional(),
});
export type Outcome = z.infer<typeof Outcome>;
export type OutcomeInput = z.input<typeof Outcome>;

/** Who won a hedged subtask's race: a replica, or every piece (an original that wins records no winner). */
export const HedgeWinner = z.discriminatedUnion('by', [
  z.object({ by: z.enum(['original', 'replica']), id: SubtaskId }),
  z.object({ by: z.literal('pieces'), ids: z.array(SubtaskId).min(1) }),
]);
export type HedgeWinner = z.infer<typeof HedgeWinner>;

/** How a subtask came to exist beyond the first round. */
export const Lineage = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('retry'), of: SubtaskId, attempt: z.int().min(2) }),
  z.object({ kind: z.literal('recheck'), of: SubtaskId, gap: Scope }),
  /** A hedge copy of subtask `of`: replica or piece number `copy` (1-based), racing it on its allowance. */
  z.object({ kind: z.literal('hedge'), of: SubtaskId, mode: HedgeMode, copy: z.int().min(1) }),
]);
export type Lineage = z.infer<typeof Lineage>;

/** One dispatched subtask with its immutable assignment. */
export const DispatchedSubtask = z.object({
  id: SubtaskId,
  worker: WorkerKind,
  round: z.int().min(1),
  questionIds: z.array(QuestionId).default([]),
  required: z.boolean().default(false),
  justification: z.string().optional(),
  assigned: Scope,
  /** Absolute deadline, an ISO instant in UTC. */
  deadline: z.string().optional(),
  deadlineSeconds: z.int().min(1).optional(),
  budget: SubtaskBudget.optional(),
  input: WorkerInput.optional(),
  model: z.string().optional(),
  lineage: Lineage.optional(),
  /** The hedge the subtask declared; its copies carry `lineage.kind: "hedge"` instead. */
  hedge: Hedge.optional(),
});
export type DispatchedSubtask = z.infer<typeof DispatchedSubtask>;

import { z } from 'zod';
import { FileScope, Scope, TimePoint, Universe } from './scope';
import { PlainText } from './text';

/** Subtask and question identifiers appear in reports such as `C:timed_out`, so keep them short. */
export const SubtaskId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/, 'must be 1-64 letters, digits, ".", "_", "+" or "-", starting with a letter or digit');
export type SubtaskId = z.infer<typeof SubtaskId>;

export const QuestionId = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits, ".", "_" or "-"');

/** A worker kind name such as `tax-statements`. Whether it exists is checked against the worker catalog. */
export const WorkerKind = z.string().regex(/^[a-z][a-z0-9-]{0,62}$/, 'must be lower-case letters, digits and "-"');

/**
 * The most subtasks one run request may make, written or split (the planner's `MAX_SUBTASKS`).
 * Rounds larger than one execution's history run in batches of child executions
 * (docs/deadlines.md, "Runs past one execution's history").
 */
export const MAX_RUN_SUBTASKS = 10_000;

/**
 * Bounds of every budget figure. The ledger keeps allowances as exact integers and multiplies
 * a subtask's calls by its cost per call; with these bounds every figure and that product stay
 * below `Number.MAX_SAFE_INTEGER` (2^53 - 1), so nothing is refused or rounded after planning.
 */
export const BUDGET_LIMITS = {
  /** Model calls of one subtask or one run. */
  modelCalls: 1_000_000,
  /** Estimated cost units of one model call. */
  costPerCall: 1_000_000_000,
  /** Cost units of one run: the largest subtask allowance, `modelCalls × costPerCall`. */
  costLimit: 1_000_000_000_000_000,
} as const;

const modelCalls = z
  .int()
  .min(1, 'must be a positive whole number of model calls')
  .max(BUDGET_LIMITS.modelCalls, `must be at most ${BUDGET_LIMITS.modelCalls.toLocaleString('en')} model calls`);

/** The allowance fixed into one assignment. Cost is in integer cost units (pence, cents). */
export const SubtaskBudget = z.object({
  modelCalls,
  estimatedCostPerCall: z
    .int()
    .min(0, 'must not be negative')
    .max(BUDGET_LIMITS.costPerCall, `must be at most ${BUDGET_LIMITS.costPerCall.toLocaleString('en')} cost units per call`),
});
export type SubtaskBudget = z.infer<typeof SubtaskBudget>;

/** The run-wide allowance shared by every subtask and every round. */
export const RunBudget = z.object({
  modelCalls,
  costLimit: z
    .int()
    .min(1, 'must be a positive whole number of cost units')
    .max(BUDGET_LIMITS.costLimit, `must be at most ${BUDGET_LIMITS.costLimit.toLocaleString('en')} cost units`),
});
export type RunBudget = z.infer<typeof RunBudget>;

/** Worker-kind-specific input (the inquiry). Validated against the kind's own schema. */
export const WorkerInput = z.record(z.string(), z.unknown());

/** Bounds of a hedge's `copies`. */
export const HEDGE_COPIES = { min: 2, max: 8 } as const;

/**
 * How a hedge races a slow subtask: `replicate` runs more copies of the same assignment;
 * `subdivide` runs narrower pieces that tile the subtask's scope (see docs/hedging.md).
 */
export const HedgeMode = z.enum(['replicate', 'subdivide']);
export type HedgeMode = z.infer<typeof HedgeMode>;

/**
 * A hedge: when the subtask has not ended `afterSeconds` after its dispatch, start copies that
 * race it. Every copy and piece spends from the subtask's one allowance; the first complete
 * cover wins.
 */
export const Hedge = z.object({
  /** Seconds after dispatch; must be less than the subtask's `deadlineSeconds`. */
  afterSeconds: z.int().min(1, 'must be at least 1 second'),
  mode: HedgeMode,
  /**
   * `replicate`: copies in flight including the original (2 means one replica).
   * `subdivide`: the number of pieces the scope is cut into.
   */
  copies: z
    .int()
    .min(HEDGE_COPIES.min, `must be at least ${HEDGE_COPIES.min}`)
    .max(HEDGE_COPIES.max, `must be at most ${HEDGE_COPIES.max}`)
    .default(HEDGE_COPIES.min),
});
export type Hedge = z.infer<typeof Hedge>;

const delegationFields = {
  worker: WorkerKind,
  questionIds: z.array(QuestionId).default([]),
  required: z.boolean().default(false),
  /** Why the run cannot answer without this subtask. Mandatory when `required` is true. */
  justification: PlainText.trim().min(1).max(500).optional(),
  /** Seconds from dispatch to the subtask's absolute deadline. The horizon is checked by the planner. */
  deadlineSeconds: z.int().min(1, 'must be at least 1 second'),
  budget: SubtaskBudget,
  input: WorkerInput.optional(),
  /** Model adapter for this subtask, such as `offline` or a Bedrock model id allowed by the deployment. */
  model: PlainText.min(1).max(128).optional(),
  /** Start copies that race the subtask when it is slow. */
  hedge: Hedge.optional(),
};

const requireJustification = (value: { required: boolean; justification?: string | undefined }, ctx: z.RefinementCtx) => {
  if (value.required && !value.justification) {
    ctx.addIssue({ code: 'custom', path: ['justification'], message: 'is required when required is true: say why the answer needs this subtask' });
  }
};

/** A hedge must be due before the deadline, or it could never start. */
const requireHedgeBeforeDeadline = (value: { deadlineSeconds: number; hedge?: Hedge | undefined }, ctx: z.RefinementCtx) => {
  if (value.hedge !== undefined && value.hedge.afterSeconds >= value.deadlineSeconds) {
    ctx.addIssue({
      code: 'custom',
      path: ['hedge', 'afterSeconds'],
      message: `must be less than deadlineSeconds (${value.deadlineSeconds}; got ${value.hedge.afterSeconds}): a hedge due at the deadline could never start`,
    });
  }
};

/** One delegation written by hand. Its scope must match the universe's dimension. */
export const SubtaskSpec = z
  .object({ id: SubtaskId, scope: Scope, ...delegationFields })
  .superRefine(requireJustification)
  .superRefine(requireHedgeBeforeDeadline);
export type SubtaskSpec = z.infer<typeof SubtaskSpec>;

/**
 * A split decision that code turns into a tiling. Give exactly one of `parts`, `by`,
 * `boundaries` (time), `chunkSize` (ids) or `groups` (paths).
 */
export const SplitSpec = z
  .object({
    ...delegationFields,
    parts: z.int().min(1).max(MAX_RUN_SUBTASKS).optional(),
    by: z.enum(['day', 'week', 'month', 'quarter', 'year']).optional(),
    boundaries: z.array(TimePoint).min(1).optional(),
    chunkSize: z.int().min(1).optional(),
    groups: z.array(z.array(FileScope).min(1)).min(1).optional(),
    /** Prefix for generated subtask ids; ids are the prefix plus a 1-based number. Default: letters A, B, C… */
    idPrefix: z.string().regex(/^[A-Za-z][A-Za-z0-9-]{0,15}$/).optional(),
  })
  .superRefine(requireJustification)
  .superRefine(requireHedgeBeforeDeadline)
  .superRefine((split, ctx) => {
    const given = (['parts', 'by', 'boundaries', 'chunkSize', 'groups'] as const).filter((k) => split[k] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({ code: 'custom', path: [], message: `give exactly one of parts, by, boundaries, chunkSize or groups (got ${given.length === 0 ? 'none' : given.join(', ')})` });
    }
  });
export type SplitSpec = z.infer<typeof SplitSpec>;

export const RetryPolicy = z.object({
  timed_out: z.int().min(0).max(3).default(1),
  invalid: z.int().min(0).max(3).default(1),
  empty: z.int().min(0).max(3).default(0),
});

/** What to do about non-ok outcomes. Defaults follow the Scout example. */
export const Policy = z.object({
  retry: RetryPolicy.default({ timed_out: 1, invalid: 1, empty: 0 }),
  onRequiredGap: z.enum(['fail', 'degrade']).default('fail'),
  onOptionalGap: z.literal('degrade').default('degrade'),
  /** Total rounds including the first; follow-ups and retries run in rounds 2…maxRounds. */
  maxRounds: z.int().min(1).max(5).default(2),
});
export type Policy = z.infer<typeof Policy>;

/** A question the goal needs answered; lets the planner report one no subtask was given. */
export const Question = z.object({ id: QuestionId, text: PlainText.min(1).max(500).optional() });

/** `POST /runs` body and `tessera run FILE` input. */
export const RunRequest = z
  .object({
    goal: PlainText.trim().min(1).max(2000),
    universe: Universe,
    subtasks: z.array(SubtaskSpec).min(1).max(MAX_RUN_SUBTASKS).optional(),
    split: SplitSpec.optional(),
    questions: z.array(Question).max(200).optional(),
    policy: Policy.default({ retry: { timed_out: 1, invalid: 1, empty: 0 }, onRequiredGap: 'fail', onOptionalGap: 'degrade', maxRounds: 2 }),
    budget: RunBudget,
  })
  .superRefine((request, ctx) => {
    if ((request.subtasks === undefined) === (request.split === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['subtasks'], message: 'give either subtasks or split, not both and not neither' });
    }
  });
export type RunRequest = z.infer<typeof RunRequest>;
/** The request as a caller writes it, before defaults are applied. */
export type RunRequestInput = z.input<typeof RunRequest>;

import { z } from 'zod';
import { FileScope, Scope, TimePoint, Universe } from './scope';
import { PlainText } from './text';

/** Subtask and question identifiers appear in reports such as `C:timed_out`, so keep them short. */
export const SubtaskId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._+-]{0,63}$/, 'must be 1-64 letters, digits, ".", "_", "+" or "-", starting with a letter or digit')
  .describe(
    'A subtask id (A, B.g1, C.r2): 1-64 letters, digits, ".", "_", "+" or "-". ' +
      'Generated follow-ups append .r<n> (retry), .g<n> (re-check) or .h<n> (hedge copy).',
  );
export type SubtaskId = z.infer<typeof SubtaskId>;

export const QuestionId = z
  .string()
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, 'must be 1-64 letters, digits, ".", "_" or "-"')
  .describe('A question id (q1): 1-64 letters, digits, ".", "_" or "-".');

/** A worker kind name such as `tax-statements`. Whether it exists is checked against the worker catalog. */
export const WorkerKind = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,62}$/, 'must be lower-case letters, digits and "-"')
  .describe('A worker kind of the deployment (tax-statements): lower-case letters, digits and "-".');

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
  .max(BUDGET_LIMITS.modelCalls, `must be at most ${BUDGET_LIMITS.modelCalls.toLocaleString('en')} model calls`)
  .describe('Model calls allowed: each call is reserved against this allowance before it is made.');

/** The allowance fixed into one assignment. Cost is in integer cost units (pence, cents). */
export const SubtaskBudget = z
  .object({
    modelCalls,
    estimatedCostPerCall: z
      .int()
      .min(0, 'must not be negative')
      .max(BUDGET_LIMITS.costPerCall, `must be at most ${BUDGET_LIMITS.costPerCall.toLocaleString('en')} cost units per call`)
      .describe('Estimated cost units (pence, cents) of one model call; the subtask may spend modelCalls × this.'),
  })
  .describe('The allowance fixed into one assignment, charged for every call, copy and retry of it.');
export type SubtaskBudget = z.infer<typeof SubtaskBudget>;

/** The run-wide allowance shared by every subtask and every round. */
export const RunBudget = z
  .object({
    modelCalls,
    costLimit: z
      .int()
      .min(1, 'must be a positive whole number of cost units')
      .max(BUDGET_LIMITS.costLimit, `must be at most ${BUDGET_LIMITS.costLimit.toLocaleString('en')} cost units`)
      .describe('Cost units the whole run may spend, every subtask and round together.'),
  })
  .describe('The run-wide allowance shared by every subtask and every round.');
export type RunBudget = z.infer<typeof RunBudget>;

/** Worker-kind-specific input (the inquiry). Validated against the kind's own schema. */
export const WorkerInput = z.record(z.string(), z.unknown()).describe("The worker kind's own input (the inquiry), validated against that kind's input schema.");

/** Bounds of a hedge's `copies`. */
export const HEDGE_COPIES = { min: 2, max: 8 } as const;

/**
 * How a hedge races a slow subtask: `replicate` runs more copies of the same assignment;
 * `subdivide` runs narrower pieces that tile the subtask's scope (see docs/hedging.md).
 */
export const HedgeMode = z
  .enum(['replicate', 'subdivide'])
  .describe('replicate: more copies of the same assignment; subdivide: narrower pieces that tile its scope.');
export type HedgeMode = z.infer<typeof HedgeMode>;

/**
 * A hedge: when the subtask has not ended `afterSeconds` after its dispatch, start copies that
 * race it. Every copy and piece spends from the subtask's one allowance; the first complete
 * cover wins.
 */
export const Hedge = z
  .object({
    /** Seconds after dispatch; must be less than the subtask's `deadlineSeconds`. */
    afterSeconds: z
      .int()
      .min(1, 'must be at least 1 second')
      .describe('Seconds after dispatch when copies start if the subtask has not ended; less than deadlineSeconds.'),
    mode: HedgeMode,
    /**
     * `replicate`: copies in flight including the original (2 means one replica).
     * `subdivide`: the number of pieces the scope is cut into.
     */
    copies: z
      .int()
      .min(HEDGE_COPIES.min, `must be at least ${HEDGE_COPIES.min}`)
      .max(HEDGE_COPIES.max, `must be at most ${HEDGE_COPIES.max}`)
      .default(HEDGE_COPIES.min)
      .describe('replicate: copies in flight including the original; subdivide: the number of pieces. 2-8, default 2.'),
  })
  .describe('Start copies that race the subtask when it is slow; every copy spends from its one allowance (docs/hedging.md).');
export type Hedge = z.infer<typeof Hedge>;

const delegationFields = {
  worker: WorkerKind,
  questionIds: z.array(QuestionId).default([]).describe('The questions this subtask answers; one left unanswered is a missing question.'),
  required: z.boolean().default(false).describe('The answer needs this subtask: under policy.onRequiredGap "fail", its gaps left unsettled fail the run.'),
  /** Why the run cannot answer without this subtask. Mandatory when `required` is true. */
  justification: PlainText.trim().min(1).max(500).optional().describe('Why the run cannot answer without this subtask; mandatory when required is true.'),
  /** Seconds from dispatch to the subtask's absolute deadline. The horizon is checked by the planner. */
  deadlineSeconds: z
    .int()
    .min(1, 'must be at least 1 second')
    .describe("Seconds from dispatch to the subtask's absolute deadline; at most the deployment's horizon (900 by default)."),
  budget: SubtaskBudget,
  input: WorkerInput.optional(),
  /** Model adapter for this subtask, such as `offline` or a Bedrock model id allowed by the deployment. */
  model: PlainText.min(1).max(128).optional().describe("The model for this subtask (offline, or a Bedrock model id the deployment's workers allow)."),
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
  .object({
    id: SubtaskId,
    scope: Scope.describe("What this subtask is assigned, in the universe's dimension; the subtasks must tile the universe."),
    ...delegationFields,
  })
  .superRefine(requireJustification)
  .superRefine(requireHedgeBeforeDeadline)
  .describe('One delegation written by hand.');
export type SubtaskSpec = z.infer<typeof SubtaskSpec>;

/**
 * A split decision that code turns into a tiling. Give exactly one of `parts`, `by`,
 * `boundaries` (time), `chunkSize` (ids) or `groups` (paths).
 */
export const SplitSpec = z
  .object({
    ...delegationFields,
    parts: z.int().min(1).max(MAX_RUN_SUBTASKS).optional().describe('Cut the universe into this many equal parts.'),
    by: z.enum(['day', 'week', 'month', 'quarter', 'year']).optional().describe('Time: one subtask per calendar day, week, month, quarter or year.'),
    boundaries: z.array(TimePoint).min(1).optional().describe('Time: cut the universe at these points.'),
    chunkSize: z.int().min(1).optional().describe('Ids: one subtask per this many ids, in universe order.'),
    groups: z.array(z.array(FileScope).min(1)).min(1).optional().describe('Paths: one subtask per group of files.'),
    /** Prefix for generated subtask ids; ids are the prefix plus a 1-based number. Default: letters A, B, C… */
    idPrefix: z
      .string()
      .regex(/^[A-Za-z][A-Za-z0-9-]{0,15}$/)
      .optional()
      .describe('Prefix for generated subtask ids (the prefix plus a 1-based number); letters A, B, C… without it.'),
  })
  .superRefine(requireJustification)
  .superRefine(requireHedgeBeforeDeadline)
  .superRefine((split, ctx) => {
    const given = (['parts', 'by', 'boundaries', 'chunkSize', 'groups'] as const).filter((k) => split[k] !== undefined);
    if (given.length !== 1) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `give exactly one of parts, by, boundaries, chunkSize or groups (got ${given.length === 0 ? 'none' : given.join(', ')})`,
      });
    }
  })
  .describe('A split that code turns into a tiling of the universe: exactly one of parts, by, boundaries, chunkSize or groups.');
export type SplitSpec = z.infer<typeof SplitSpec>;

/** How many times each kind of non-ok ending is retried (docs/api.md, "The policy"). */
export const RetryPolicy = z
  .object({
    timed_out: z
      .int()
      .min(0)
      .max(3)
      .default(1)
      .describe('Retries of a line of work whose latest attempt timed out (same scope, worker and allowance), 0-3. Default 1.'),
    invalid: z
      .int()
      .min(0)
      .max(3)
      .default(1)
      .describe('Retries of a line of work whose latest attempt was invalid (output failed its schema, the worker threw), 0-3. Default 1.'),
    empty: z.int().min(0).max(3).default(0).describe('Retries of a line of work whose latest attempt found no records (or reached no source), 0-3. Default 0.'),
  })
  .describe('Retries per way a subtask can end without data, each in a later round (up to maxRounds).');

/** What to do about non-ok outcomes. Defaults follow the Scout example; docs/api.md, "The policy", explains each field. */
export const Policy = z
  .object({
    retry: RetryPolicy.default({ timed_out: 1, invalid: 1, empty: 0 }),
    onRequiredGap: z
      .enum(['fail', 'degrade'])
      .default('fail')
      .describe(
        'A required subtask left uncovered (its latest attempt not ok, or an observed gap no other source settled): ' +
          'fail ends the run failed, still with its coverage; degrade lets it succeed with coverage.complete false. Default fail.',
      ),
    onOptionalGap: z
      .literal('degrade')
      .default('degrade')
      .describe('An optional subtask left uncovered: the run succeeds with coverage.complete false. degrade is the only choice, and the default.'),
    /** Total rounds including the first; follow-ups and retries run in rounds 2…maxRounds. */
    maxRounds: z
      .int()
      .min(1)
      .max(5)
      .default(2)
      .describe('Rounds including the first, 1-5: retries and gap re-checks run in rounds 2…maxRounds, never after. 1 means no follow-ups. Default 2.'),
  })
  .describe('What to do about subtasks that end without data: retries, re-checks (rounds) and whether an uncovered required subtask fails the run.');
export type Policy = z.infer<typeof Policy>;

/** A question the goal needs answered; lets the planner report one no subtask was given. */
export const Question = z
  .object({ id: QuestionId, text: PlainText.min(1).max(500).optional().describe('The question in words, for people.') })
  .describe('A question the goal needs answered.');

/** What a run request asks of synthesis: a model synthesizer, within its own allowance. */
export const SynthesisRequest = z
  .object({
    /** The synthesizer's allowance: each call (the first and the repair) is reserved from the run's budget first. */
    budget: SubtaskBudget.describe("The synthesizer's allowance, reserved call by call from the run's budget (the first call, a repair, a tree's partials)."),
    /** The model, when the request names one: `offline`, or a Bedrock model id the deployment allows. */
    model: PlainText.min(1).max(128).optional().describe("The synthesizer's model, when not the deployment's choice (offline, or an allowed Bedrock id)."),
  })
  .describe('Ask for a model synthesizer: claims citing findings, audited by tessera; the deterministic merge is the fallback. Absent: the merge.');
export type SynthesisRequest = z.infer<typeof SynthesisRequest>;

/** `POST /runs` body and `tessera run FILE` input. */
export const RunRequest = z
  .object({
    goal: PlainText.trim().min(1).max(2000).describe('What the run is for, in words (1-2000 characters).'),
    universe: Universe,
    subtasks: z.array(SubtaskSpec).min(1).max(MAX_RUN_SUBTASKS).optional().describe('Subtasks written by hand that tile the universe; give these or split.'),
    split: SplitSpec.optional(),
    questions: z.array(Question).max(200).optional().describe('The questions the goal needs answered; each must be given to some subtask.'),
    policy: Policy.default({ retry: { timed_out: 1, invalid: 1, empty: 0 }, onRequiredGap: 'fail', onOptionalGap: 'degrade', maxRounds: 2 }),
    budget: RunBudget,
    /** Ask for a model synthesizer (docs/workers.md, "Synthesis"); absent, the answer is the kinds' deterministic merge. */
    synthesis: SynthesisRequest.optional(),
  })
  .superRefine((request, ctx) => {
    if ((request.subtasks === undefined) === (request.split === undefined)) {
      ctx.addIssue({ code: 'custom', path: ['subtasks'], message: 'give either subtasks or split, not both and not neither' });
    }
  })
  .describe('POST /runs body and tessera run FILE input: one question of a universe, split into subtasks.');
export type RunRequest = z.infer<typeof RunRequest>;
/** The request as a caller writes it, before defaults are applied. */
export type RunRequestInput = z.input<typeof RunRequest>;

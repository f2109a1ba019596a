/**
 * Inputs and results of the ledger's operations, as zod schemas: the ledger parses what it is
 * given at its boundary, because its callers are Lambda handlers fed by SQS, Step Functions and
 * HTTP, and a malformed id must not become a malformed key.
 */
import { z } from 'zod';
import { Answer, Checkpoint, DispatchedSubtask, MAX_RUN_SUBTASKS, RunRequest, RunStatus, SubtaskId, TenantId, isWellFormed } from '../contract';
import { InvalidLedgerInput } from './errors';
import { SHARDING } from './keys';

// TenantId is the contract's tenant rule: an id the API accepted always makes a valid key.
/** A run id as the ledger keys it; a path id that breaks this rule names no run. */
export const RunId = z.string().min(1).max(128).refine(isWellFormed, 'must be well-formed Unicode');
const Instant = z.iso.datetime({ offset: true });

export const CreateRunInput = z.object({
  tenantId: TenantId,
  runId: RunId,
  /** The `Idempotency-Key` header; remembered for 24 hours. */
  idempotencyKey: z.string().min(1).max(255).optional(),
  /** Defaults to `hashRequest(request)`; pass one to hash something else (such as the raw body). */
  requestHash: z.string().min(1).max(200).optional(),
  request: RunRequest,
  createdAt: Instant.optional(),
  /**
   * Subtasks the plan holds when the run is created: it fixes how many partitions the run's
   * subtask items are spread over (`shardCount`). Omitted: one partition.
   */
  plannedSubtasks: z.int().min(0).optional(),
  /**
   * Round 1 as the api planned it (deadlines still relative): stored with the run, so Dispatch
   * appends exactly this plan and never plans the request again.
   */
  plan: z.array(DispatchedSubtask).max(MAX_RUN_SUBTASKS).optional(),
});
export type CreateRunInput = z.input<typeof CreateRunInput>;

export const AppendRoundInput = z.object({
  tenantId: TenantId,
  runId: RunId,
  round: z.int().min(1),
  /** Each needs an absolute `deadline`, or a `deadlineSeconds` counted from `dispatchedAt`. */
  subtasks: z.array(DispatchedSubtask).min(1).max(MAX_RUN_SUBTASKS),
  /**
   * The instant the round was dispatched. Pass a stable one (such as the Step Functions state's
   * entered time) so a retried dispatch computes the same deadlines; defaults to now.
   */
  dispatchedAt: Instant.optional(),
});
export type AppendRoundInput = z.input<typeof AppendRoundInput>;

export const RunRef = z.object({ tenantId: TenantId, runId: RunId });
export type RunRef = z.input<typeof RunRef>;

export const TenantDayRef = z.object({ tenantId: TenantId, day: z.iso.date() });

/**
 * The run's shard count (`RUN.shards`), when the caller already knows it: claims carry it, so a
 * holder's writes need no lookup. Omitted: the ledger reads it from the run item once per run.
 */
export const Shards = z.int().min(1).max(SHARDING.maxShards);

export const SubtaskRef = z.object({ tenantId: TenantId, runId: RunId, subtaskId: SubtaskId, shards: Shards.optional() });
export type SubtaskRef = z.input<typeof SubtaskRef>;

export const ClaimInput = SubtaskRef.extend({
  workerId: z.string().min(1).max(256),
  /** How long the claim is exclusive. Use the worker's timeout, so a crashed worker's lease ends with it. */
  leaseMs: z
    .int()
    .min(1)
    .max(24 * 3600 * 1000),
});
export type ClaimInput = z.input<typeof ClaimInput>;

/**
 * The right to work on one subtask, for one generation. Reservations and the outcome are accepted
 * only while `generation` is the subtask's current generation.
 */
export const Claim = SubtaskRef.extend({
  workerId: z.string(),
  generation: z.int().min(1),
  leaseExpiresAt: z.string(),
  /** The subtask's absolute deadline (ISO UTC). */
  deadline: z.string(),
  /** The immutable assignment, as stored at dispatch. */
  subtask: DispatchedSubtask,
  /** The last checkpoint an earlier generation wrote, when this claim replaces one (a crash): the worker resumes from it. */
  checkpoint: Checkpoint.optional(),
  /**
   * When the subtask's `subdivide` hedge is due and it may hand over to the pieces (ISO UTC), while
   * the race has not started (`handoverDueMs`): the SDK flushes its findings just before and holds
   * new model calls across it (docs/hedging.md, "Handover").
   */
  handoverDueAt: z.string().optional(),
});
export type Claim = z.infer<typeof Claim>;

export const DeliveryFailureInput = SubtaskRef.extend({
  /** SQS `ApproximateReceiveCount` of the failed delivery. */
  receiveCount: z.int().min(1),
  errorName: z.string().min(1).max(200),
  /** True when the message went to the dead-letter queue after this failure. */
  deadLettered: z.boolean().optional(),
});
export type DeliveryFailureInput = z.input<typeof DeliveryFailureInput>;

export const WaiterInput = SubtaskRef.extend({ taskToken: z.string().min(1).max(8192) });
export type WaiterInput = z.input<typeof WaiterInput>;

export const FinishRunInput = z.object({
  tenantId: TenantId,
  runId: RunId,
  status: RunStatus.exclude(['running']),
  answer: Answer,
  error: z.object({ code: z.string(), message: z.string() }).optional(),
});
export type FinishRunInput = z.input<typeof FinishRunInput>;

/**
 * Parses an operation's input, turning zod issues into `InvalidLedgerInput` with field paths.
 *
 * @example
 * const input = parseInput(ClaimInput, raw, 'claimSubtask');
 */
export const parseInput = <Schema extends z.ZodType>(schema: Schema, value: unknown, operation: string): z.infer<Schema> => {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const raw = (typeof value === 'object' && value !== null ? value : {}) as { tenantId?: unknown; runId?: unknown };
  throw new InvalidLedgerInput(
    {
      operation,
      tenantId: typeof raw.tenantId === 'string' ? raw.tenantId : undefined,
      runId: typeof raw.runId === 'string' ? raw.runId : undefined,
      issues: result.error.issues.map((issue) => `${issue.path.join('.') || '(input)'}: ${issue.message}`),
    },
    { cause: result.error },
  );
};

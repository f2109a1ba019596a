/**
 * The stored shape of every ledger item, as zod schemas. Items are parsed when they come back
 * from DynamoDB (including the `ALL_OLD` images inside condition failures), so the rest of the
 * adapter works with typed values and a foreign or corrupted item fails loudly as `CorruptItem`.
 */
import { z } from 'zod';
import {
  Answer,
  BaselineComparison,
  Checkpoint,
  DispatchedSubtask,
  HedgeWinner,
  LateEvidence,
  Observed,
  Refusal,
  RunProgress,
  RunRequest,
  RunStatus,
  SubtaskState,
  TerminalState,
  Universe,
} from '../contract';
import { CorruptItem, type LedgerErrorContext } from './errors';
import { PartsRef } from './parts';
import { SHARDING } from './keys';

const key = { pk: z.string(), sk: z.string() };
const count = z.int().min(0);

/** Run control item (`RUN`): small on purpose, because every reservation rewrites it. */
export const RunItem = z.object({
  ...key,
  entity: z.literal('run'),
  tenantId: z.string(),
  runId: z.string(),
  status: RunStatus,
  requestHash: z.string(),
  idempotencyKey: z.string().optional(),
  createdAt: z.string(),
  updatedAt: z.string(),
  /** Run budget: immutable limits and the counters that count down from them. */
  callsLimit: count,
  costLimit: count,
  callsLeft: z.int(),
  costLeft: z.int(),
  /**
   * Partitions holding the run's subtask-level items (docs/ledger.md, "Write-sharded runs"); fixed
   * at creation from the planned subtask count. Absent on a run of one shard.
   */
  shards: z.int().min(2).max(SHARDING.maxShards).optional(),
  /** Highest committed round (0 before the first dispatch). */
  round: count,
  /** `roundSizes[r - 1]` is the number of subtasks committed in round r. */
  roundSizes: z.array(count),
  cancelledAt: z.string().optional(),
  finishedAt: z.string().optional(),
  answer: Answer.optional(),
  error: z.object({ code: z.string(), message: z.string() }).optional(),
  /**
   * The block of the tenant's day allowance this run holds (lib/ledger/leases.ts): absent when it
   * holds none. Reservations charge `blockCallsLeft`/`blockCostLeft` beside the run counters.
   */
  blockId: z.string().optional(),
  blockDay: z.string().optional(),
  blockCalls: count.optional(),
  blockCost: count.optional(),
  blockCallsLeft: z.int().optional(),
  blockCostLeft: z.int().optional(),
  blockGrantedAt: z.number().optional(),
  blockExpiresAt: z.number().optional(),
});
export type RunItem = z.infer<typeof RunItem>;

/** Run description item (`META`), written once with the run. */
export const MetaItem = z.object({
  ...key,
  entity: z.literal('meta'),
  goal: z.string(),
  universe: Universe,
  request: RunRequest,
  /** Round 1 as the api planned it, when the run was created with its plan (`createRun`'s `plan`). */
  plan: z.array(DispatchedSubtask).optional(),
  createdAt: z.string(),
});
export type MetaItem = z.infer<typeof MetaItem>;

/**
 * Run summary item (`SUMMARY`), written with the run: the entry of the run list index, and the
 * run's change `version`, bumped after every subtask state change, round commit and run status
 * change, so that a waiting reader can tell "something changed" from one small GetItem.
 * `progress` and `complete` are stored once the run has ended (they never change after that);
 * while it runs, `GET /runs` counts its subtasks instead.
 */
export const SummaryItem = z.object({
  ...key,
  entity: z.literal('summary'),
  tenantId: z.string(),
  runId: z.string(),
  status: RunStatus,
  goal: z.string(),
  createdAt: z.string(),
  updatedAt: z.string(),
  version: count,
  listPk: z.string(),
  listSk: z.string(),
  complete: z.boolean().optional(),
  progress: RunProgress.optional(),
});
export type SummaryItem = z.infer<typeof SummaryItem>;

/** The last failed delivery of a subtask's message, so a seal can say why nothing arrived. */
export const DeliveryFailure = z.object({
  receiveCount: z.int().min(1),
  errorName: z.string(),
  at: z.string(),
  deadLettered: z.boolean().optional(),
});
export type DeliveryFailure = z.infer<typeof DeliveryFailure>;

/** What a worker reported, as stored on its subtask (usage is not stored: it is the counters). */
export const StoredOutcome = z.object({
  state: TerminalState,
  observed: Observed.nullable(),
  sources: z.array(z.string()),
  sourcesReached: count,
  findings: z.json().optional(),
  reason: z.string().optional(),
  refusals: z.array(Refusal),
  baseline: BaselineComparison.optional(),
});
export type StoredOutcome = z.infer<typeof StoredOutcome>;

/**
 * The stored form of an outcome: its fields as `StoredOutcome` keeps them, everything else dropped.
 *
 * @example
 * toStoredOutcome(boundOutcome(outcome)).findings // plain JSON, within the ledger's bounds
 */
export const toStoredOutcome = (outcome: Omit<StoredOutcome, 'findings'> & { readonly findings?: unknown }): StoredOutcome =>
  StoredOutcome.parse({
    state: outcome.state,
    observed: outcome.observed,
    sources: outcome.sources,
    sourcesReached: outcome.sourcesReached,
    findings: outcome.findings,
    reason: outcome.reason,
    refusals: outcome.refusals,
    baseline: outcome.baseline,
  });

/** Who won a hedged race, as stored on the subtask (see `firstCompleteCover` in lib/domain/hedge.ts). */
export const HedgeWinnerItem = HedgeWinner;
export type HedgeWinnerItem = z.infer<typeof HedgeWinnerItem>;

/** Why a subtask was closed without a result of its own. */
export const ClosedBy = z.enum(['cancel', 'run_succeeded', 'run_failed', 'run_cancelled']);
export type ClosedBy = z.infer<typeof ClosedBy>;

/** One dispatched subtask (`SUB#<id>`): its immutable assignment, lifecycle and allowance. */
export const SubtaskItem = z.object({
  ...key,
  entity: z.literal('subtask'),
  subtaskId: z.string(),
  round: z.int().min(1),
  /** Position inside its round, so the manifest keeps dispatch order. */
  position: count,
  assignment: DispatchedSubtask,
  assignmentHash: z.string(),
  dispatchedAt: z.string(),
  deadlineMs: z.number(),
  /** Allowance: fixed per-call estimate, immutable limits, counters counting down. */
  costPerCall: count,
  callsLimit: count,
  costLimit: count,
  callsLeft: z.int(),
  costLeft: z.int(),
  state: SubtaskState,
  generation: count,
  workerId: z.string().optional(),
  claimId: z.string().optional(),
  claimedAt: z.string().optional(),
  leaseExpiresAt: z.number().optional(),
  releasedAt: z.string().optional(),
  taskToken: z.string().optional(),
  lastDeliveryFailure: DeliveryFailure.optional(),
  outcome: StoredOutcome.optional(),
  outcomeGeneration: count.optional(),
  finishedAt: z.string().optional(),
  sealedAt: z.string().optional(),
  closedAt: z.string().optional(),
  closedBy: ClosedBy.optional(),
  /** On a hedge copy: the subtask it races, whose allowance it spends (`assignment.lineage.of`). */
  hedgeOf: z.string().optional(),
  /** On a hedged subtask: when its copies were written (once). */
  hedgeStartedAt: z.string().optional(),
  /**
   * On a hedged subtask whose original handed over to its pieces: when. Its `checkpoint` is frozen
   * from then on (the prefix the pieces do not read), and its holder's writes are refused.
   */
  handedOverAt: z.string().optional(),
  /** On a hedged subtask: the pieces that ended ok so far, in commit order. */
  piecesOk: z.array(z.string()).optional(),
  /** On a hedged subtask ended by its race: who won (the original, a replica, or every piece). */
  hedgeWinner: HedgeWinnerItem.optional(),
  /** The latest checkpoint its workers wrote (lib/ledger/checkpoints.ts), kept after it ends: a timed-out outcome carries it. */
  checkpoint: Checkpoint.optional(),
  checkpointSequence: count.optional(),
  updatedAt: z.string(),
});
export type SubtaskItem = z.infer<typeof SubtaskItem>;

/**
 * A subtask item as stored, before its parts are read back: a large assignment or outcome is
 * replaced by a reference to its parts (`lib/ledger/parts.ts`). Condition-failure images are
 * parsed with this schema; they are only read for the lifecycle fields.
 */
export const StoredSubtaskItem = SubtaskItem.extend({
  assignment: DispatchedSubtask.optional(),
  assignmentParts: PartsRef.optional(),
  outcomeParts: PartsRef.optional(),
});
export type StoredSubtaskItem = z.infer<typeof StoredSubtaskItem>;

/**
 * Attributes that hold what a worker observed or produced. Only the worker (and the deadline
 * seal) may write them: the construct gives the API role an explicit Deny on writes naming any of
 * these, so no API bug can forge or overwrite an outcome.
 *
 * @example
 * OUTCOME_ATTRIBUTES.includes('outcomeParts') // true: a large outcome is stored in parts
 */
export const OUTCOME_ATTRIBUTES = [
  // a subtask's outcome, the reference to its parts when it is large, and the generation that wrote it
  'outcome',
  'outcomeParts',
  'outcomeGeneration',
  // the outcome's own fields, denied too in case an item ever stores them at the top level
  'observed',
  'findings',
  'sources',
  'sourcesReached',
  'refusals',
  'baseline',
  'late',
  // who won a hedged race and which pieces ended ok: forging them would forge the subtask's result
  'hedgeWinner',
  'piecesOk',
  // the mark that turns the checkpoint into a counted prefix: forging it would forge the prefix
  'handedOverAt',
  // what a running worker observed so far: forging it would forge a timed-out subtask's prefix
  'checkpoint',
  'checkpointSequence',
] as const satisfies readonly (keyof StoredSubtaskItem | keyof StoredOutcome | 'late')[];

/** A result refused after its subtask was sealed or its run stopped (`LATE#<id>#<generation>`). */
export const LateItem = LateEvidence.extend({
  ...key,
  entity: z.literal('late'),
  subtaskId: z.string(),
});
export type LateItem = z.infer<typeof LateItem>;

/** `POST /runs` idempotency record (`T#<tenant>#IDEM#<key>`), expiring after 24 hours. */
export const IdempotencyItem = z.object({
  ...key,
  entity: z.literal('idempotency'),
  runId: z.string(),
  requestHash: z.string(),
  createdAt: z.string(),
  ttl: z.int(),
});
export type IdempotencyItem = z.infer<typeof IdempotencyItem>;

/**
 * A tenant's allowance account for one UTC day (`T#<tenant>#DAY#<day>`), counting up:
 * `callsUsed`/`costUsed` are what returned blocks actually charged (settled usage);
 * `callsCommitted`/`costCommitted` are settled usage plus every block still held, in full, and are
 * what the allowance condition reads; `grants` counts blocks granted to a run that held none of
 * this day. A day item written before leased blocks has only the used counters
 * (`callsCommitted` is then read as `callsUsed`).
 */
export const TenantDayItem = z.object({
  ...key,
  entity: z.literal('tenant-day'),
  tenantId: z.string(),
  day: z.string(),
  callsUsed: count.default(0),
  costUsed: count.default(0),
  callsCommitted: count.optional(),
  costCommitted: count.optional(),
  grants: count.default(0),
  ttl: z.int(),
});
export type TenantDayItem = z.infer<typeof TenantDayItem>;

/**
 * One run's block of a tenant-day allowance (`T#<tenant>#DAY#<day>` / `BLOCK#<runId>`): present
 * with a `blockId` while the run holds it, without one once it was returned or reclaimed. The
 * counters of the block live on the run item; this record says who holds what until when.
 */
export const TenantBlockItem = z.object({
  ...key,
  entity: z.literal('tenant-block'),
  tenantId: z.string(),
  runId: z.string(),
  day: z.string(),
  blockId: z.string().optional(),
  calls: count,
  cost: count,
  grantedAt: z.number(),
  expiresAt: z.number(),
  returnedAt: z.number().optional(),
  ttl: z.int(),
});
export type TenantBlockItem = z.infer<typeof TenantBlockItem>;

/**
 * Parses a stored item with its schema, turning a mismatch into `CorruptItem`.
 *
 * @example
 * const sub = parseItem(SubtaskItem, output.Attributes, { runId });
 */
export const parseItem = <Schema extends z.ZodType>(schema: Schema, item: unknown, context: LedgerErrorContext): z.infer<Schema> => {
  const result = schema.safeParse(item);
  if (result.success) return result.data;
  const sk = typeof item === 'object' && item !== null && 'sk' in item ? String((item as { sk: unknown }).sk) : '(no key)';
  throw new CorruptItem(
    { ...context, key: sk, issues: result.error.issues.map((issue) => `${issue.path.join('.')}: ${issue.message}`) },
    { cause: result.error },
  );
};

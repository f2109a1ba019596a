/**
 * The run ledger: tessera's durable state on DynamoDB, spoken in the domain's words. See
 * docs/ledger.md for the table layout, the access patterns and the cost of each operation.
 */
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { CheckpointInput, OutcomeInput } from '../contract';
import { writeCheckpoint, type CheckpointWrite } from './checkpoints';
import { appendRound, type AppendedRound } from './rounds';
import { readBatch, writeBatches, type BatchEntry, type BatchRef, type WriteBatchesInput } from './batches';
import { reserveBudget, tenantUsage, type Reservation, type TenantUsage } from './budget';
import {
  claimSubtask,
  getSubtask,
  recordDeliveryFailure,
  registerWaiter,
  releaseClaim,
  sealTimedOut,
  type SealResult,
  type WaiterRegistration,
} from './claims';
import { cancelRun, finishRun, type CancelledRun, type ClosedRun } from './closing';
import { readSynthesis, recordSynthesis, reserveSynthesisCall, type SynthesisCall, type SynthesisRef, type SynthesisReservation } from './synthesis';
import type { AnswerSynthesis } from '../contract';
import { LedgerConfigurationError } from './errors';
import { DEFAULT_CONFLICT_RETRY, type ConflictRetry } from './failures';
import type { AppendRoundInput, Claim, ClaimInput, CreateRunInput, DeliveryFailureInput, FinishRunInput, SubtaskRef, WaiterInput } from './inputs';
import { RunRef, parseInput } from './inputs';
import { SUBTASKS_PER_SHARD } from './keys';
import { contextDefaults, type DailyAllowance, type LedgerContext } from './io';
import type { SubtaskItem } from './items';
import { startHedge, type StartedHedge } from './hedges';
import { recordOutcome, type RecordedOutcome } from './outcomes';
import { createRun, loadRun, loadRunPage, readManifest, type CreatedRun, type ManifestRead, type RunPageRequest, type RunRead } from './runs';
import type { RunRecord } from './view';
import { readSubtaskPage, type SubtaskPageRead, type SubtaskPageRequest } from './subtask-pages';
import { listRuns, runCreatedAt, runVersion, type RunListPage, type RunListRequest } from './summary';

/** How to build a ledger. */
export interface LedgerOptions {
  /** A document client made with `marshallOptions: { removeUndefinedValues: true }`. */
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /**
   * Clock in epoch milliseconds; leases, deadlines and the tenant's UTC day are judged by it.
   * @default Date.now
   */
  readonly now?: () => number;
  /**
   * The tenant's allowance per UTC day across all runs. Without one, daily usage is still counted
   * but never refused.
   * @default undefined
   */
  readonly dailyAllowance?: DailyAllowance;
  /**
   * Retries of writes that lose a race with a concurrent transaction.
   * @default DEFAULT_CONFLICT_RETRY (8 attempts, full jitter from 20 ms, 1 s cap)
   */
  readonly conflictRetry?: ConflictRetry;
  /**
   * Planned subtasks per partition of a new run's subtask items: a run planned with more gets
   * ⌈planned / this⌉ partitions (docs/ledger.md, "Write-sharded runs"). Tests lower it to shard small runs.
   * @default SUBTASKS_PER_SHARD (500)
   */
  readonly subtasksPerShard?: number;
}

/** The ledger's operations. Every refusal is a `LedgerError` subclass (see errors.ts). */
export interface Ledger {
  /**
   * Creates a run idempotently (same key + same request → the existing run, `created: false`;
   * same key + other request → `IdempotencyConflict`).
   * @example const { run, created } = await ledger.createRun({ tenantId, runId, idempotencyKey, request });
   */
  createRun(input: CreateRunInput): Promise<CreatedRun>;
  /**
   * Everything stored about a run, or `undefined` (also for another tenant's run). Map it with `toRunResource`.
   * @example const record = await ledger.getRun(tenantId, runId);
   */
  getRun(tenantId: string, runId: string): Promise<RunRecord | undefined>;
  /**
   * A run with only the first `limit` of its subtasks (none for 0) and its progress, without
   * reading every subtask item: what a large run's paged forms need (map it with
   * `toPagedRunResource`); a run of at most `wholeUpTo` subtasks is read whole (`toRunResource`).
   * @example const read = await ledger.getRunPage({ tenantId, runId, limit: 100, wholeUpTo: 1000 });
   */
  getRunPage(request: RunPageRequest): Promise<RunRead | undefined>;
  /**
   * The committed manifest and the outcomes of ended subtasks, for reconcile.
   * @example const { manifest, outcomes, unfinished } = await ledger.readManifest(tenantId, runId);
   */
  readManifest(tenantId: string, runId: string): Promise<ManifestRead>;
  /**
   * Writes a round's subtasks (chunked) and commits the round. Idempotent per round.
   * @example await ledger.appendRound({ tenantId, runId, round: 1, subtasks, dispatchedAt });
   */
  appendRound(input: AppendRoundInput): Promise<AppendedRound>;
  /**
   * Writes a batched round's batches (which subtasks each batch holds); idempotent. Returns how many.
   * @example await ledger.writeBatches({ tenantId, runId, round: 1, batches: [[{ subtaskId: 'A', deadline }]] });
   */
  writeBatches(input: WriteBatchesInput): Promise<number>;
  /**
   * The subtasks of one batch, in order; `BatchNotFound` when dispatch never wrote it.
   * @example const entries = await ledger.readBatch({ tenantId, runId, round: 1, batch: 0 });
   */
  readBatch(ref: BatchRef): Promise<BatchEntry[]>;
  /**
   * One page of a run's committed subtasks in id order, read by key range (never the whole run);
   * `not_found` also for another tenant's run.
   * @example const read = await ledger.subtaskPage({ tenantId, runId, limit: 100, after: 'B' });
   */
  subtaskPage(request: SubtaskPageRequest): Promise<SubtaskPageRead>;
  /**
   * Claims a subtask for one delivery (lease + next generation).
   * @example const claim = await ledger.claimSubtask({ tenantId, runId, subtaskId, workerId, leaseMs: 60_000 });
   */
  claimSubtask(input: ClaimInput): Promise<Claim>;
  /**
   * Gives a claim back early so the next delivery need not wait for the lease.
   * @example await ledger.releaseClaim(claim);
   */
  releaseClaim(claim: Claim): Promise<void>;
  /**
   * Reserves one model/tool call on the subtask and run counters and the run's block of the tenant-day allowance at once (leasing a block when it needs one).
   * @example await ledger.reserveBudget(claim); const reply = await model.call(prompt);
   */
  reserveBudget(claim: Claim): Promise<Reservation>;
  /**
   * The tenant's usage on a UTC day (default: today by the ledger's clock), across all its runs.
   * @example const { modelCalls } = await ledger.tenantUsage(tenantId);
   */
  tenantUsage(tenantId: string, day?: string): Promise<TenantUsage>;
  /**
   * Records the claimed subtask's outcome; returns the waiter's task token, if any.
   * @example const { taskToken } = await ledger.recordOutcome(claim, outcome);
   */
  recordOutcome(claim: Claim, outcome: OutcomeInput): Promise<RecordedOutcome>;
  /**
   * Stores the claimed subtask's latest checkpoint (current generation only, while it runs; see checkpoints.ts).
   * @example await ledger.writeCheckpoint(claim, checkpoint);
   */
  writeCheckpoint(claim: Claim, checkpoint: CheckpointInput): Promise<CheckpointWrite>;
  /**
   * Remembers a failed delivery so the seal can explain it.
   * @example await ledger.recordDeliveryFailure({ tenantId, runId, subtaskId, receiveCount: 3, errorName: 'WorkerCrashed', deadLettered: true });
   */
  recordDeliveryFailure(input: DeliveryFailureInput): Promise<{ readonly recorded: boolean; readonly state: SubtaskItem['state'] }>;
  /**
   * Stores the Map iteration's task token unless the subtask already ended.
   * @example const registration = await ledger.registerWaiter({ tenantId, runId, subtaskId, taskToken });
   */
  registerWaiter(input: WaiterInput): Promise<WaiterRegistration>;
  /**
   * Starts a hedged subtask's race once: writes its copies (replicas or pieces) and returns them to enqueue.
   * @example const { copies } = await ledger.startHedge({ tenantId, runId, subtaskId });
   */
  startHedge(input: SubtaskRef): Promise<StartedHedge>;
  /**
   * Seals a live subtask `timed_out` after its deadline.
   * @example const { sealed, reason } = await ledger.sealTimedOut({ tenantId, runId, subtaskId });
   */
  sealTimedOut(input: SubtaskRef): Promise<SealResult>;
  /**
   * One subtask as stored, or `undefined`.
   * @example const item = await ledger.getSubtask({ tenantId, runId, subtaskId });
   */
  getSubtask(input: SubtaskRef): Promise<SubtaskItem | undefined>;
  /**
   * Cancels a run: one conditional write of the run item (and its allowance block and summary);
   * its subtasks are swept when it closes (`finishRun`). Idempotent.
   * @example const { status, answered } = await ledger.cancelRun(tenantId, runId);
   */
  cancelRun(tenantId: string, runId: string): Promise<CancelledRun>;
  /**
   * Ends a run with its answer and closes any unfinished subtask.
   * @example await ledger.finishRun({ tenantId, runId, status: 'succeeded', answer });
   */
  finishRun(input: FinishRunInput): Promise<ClosedRun>;
  /**
   * Reserves one synthesizer call of a closing from the run's budget; a call an earlier attempt
   * reserved is not charged again (`charged: false`).
   * @example await ledger.reserveSynthesisCall({ tenantId, runId, round: 2, call: 1, estimatedCostPerCall: 3, modelCalls: 2 });
   */
  reserveSynthesisCall(input: SynthesisCall): Promise<SynthesisReservation>;
  /**
   * The synthesis an earlier attempt of this closing stored, if any.
   * @example const stored = await ledger.readSynthesis({ tenantId, runId, round: 2 });
   */
  readSynthesis(ref: SynthesisRef): Promise<AnswerSynthesis | undefined>;
  /**
   * Stores a closing's synthesis before `finishRun`; the first stored wins and is returned.
   * @example const kept = await ledger.recordSynthesis({ tenantId, runId, round: 2 }, synthesis);
   */
  recordSynthesis(ref: SynthesisRef, synthesis: AnswerSynthesis): Promise<AnswerSynthesis>;
  /**
   * One page of the tenant's runs, newest first, from the run list index (never a scan).
   * @example const { runs, last } = await ledger.listRuns({ tenantId, status: 'running', limit: 20 });
   */
  listRuns(request: RunListRequest): Promise<RunListPage>;
  /**
   * The run's change version (one GetItem of its small summary item), `undefined` when it has none.
   * @example if ((await ledger.runVersion(tenantId, runId)) !== seen) reread();
   */
  runVersion(tenantId: string, runId: string): Promise<number | undefined>;
  /**
   * When one of the tenant's runs was created, from its summary; `undefined` when there is no such run.
   * @example const createdAt = await ledger.runCreatedAt(tenantId, runId);
   */
  runCreatedAt(tenantId: string, runId: string): Promise<string | undefined>;
}

const removesUndefined = (client: DynamoDBDocumentClient): boolean => client.config.translateConfig?.marshallOptions?.removeUndefinedValues === true;

/**
 * Builds the ledger over one table.
 *
 * @example
 * const client = DynamoDBDocumentClient.from(new DynamoDBClient({}), { marshallOptions: { removeUndefinedValues: true } });
 * const ledger = createLedger({ client, tableName: config.TABLE_NAME, dailyAllowance: { modelCalls: 1000, costLimit: 50_000 } });
 * const claim = await ledger.claimSubtask({ tenantId, runId, subtaskId, workerId, leaseMs: 60_000 });
 */
export const createLedger = (options: LedgerOptions): Ledger => {
  if (!removesUndefined(options.client)) {
    throw new LedgerConfigurationError({ detail: 'createLedger needs a DynamoDBDocumentClient made with marshallOptions.removeUndefinedValues: true' });
  }
  const ctx: LedgerContext = {
    client: options.client,
    tableName: options.tableName,
    now: options.now ?? contextDefaults.now,
    dailyAllowance: options.dailyAllowance,
    conflictRetry: options.conflictRetry ?? DEFAULT_CONFLICT_RETRY,
    newId: contextDefaults.newId,
    subtasksPerShard: options.subtasksPerShard ?? SUBTASKS_PER_SHARD,
    shardCache: new Map(),
  };
  /** A read of one run whose ids are validated first, as `operation`. */
  const ofRun =
    <T>(operation: string, read: (context: LedgerContext, tenantId: string, runId: string) => Promise<T>) =>
    (tenantId: string, runId: string): Promise<T> => {
      const valid = parseInput(RunRef, { tenantId, runId }, operation);
      return read(ctx, valid.tenantId, valid.runId);
    };
  return {
    createRun: (input) => createRun(ctx, input),
    getRun: ofRun('getRun', loadRun),
    getRunPage: (request) => {
      const valid = parseInput(RunRef, { tenantId: request.tenantId, runId: request.runId }, 'getRunPage');
      return loadRunPage(ctx, { ...request, ...valid });
    },
    readManifest: ofRun('readManifest', readManifest),
    subtaskPage: (request) => {
      const valid = parseInput(RunRef, { tenantId: request.tenantId, runId: request.runId }, 'subtaskPage');
      return readSubtaskPage(ctx, { ...request, ...valid });
    },
    appendRound: (input) => appendRound(ctx, input),
    writeBatches: (input) => writeBatches(ctx, input),
    readBatch: (ref) => readBatch(ctx, ref),
    claimSubtask: (input) => claimSubtask(ctx, input),
    releaseClaim: (claim) => releaseClaim(ctx, claim),
    reserveBudget: (claim) => reserveBudget(ctx, claim),
    tenantUsage: (tenantId, day) => tenantUsage(ctx, tenantId, day),
    recordOutcome: (claim, outcome) => recordOutcome(ctx, claim, outcome),
    writeCheckpoint: (claim, checkpoint) => writeCheckpoint(ctx, claim, checkpoint),
    recordDeliveryFailure: (input) => recordDeliveryFailure(ctx, input),
    registerWaiter: (input) => registerWaiter(ctx, input),
    sealTimedOut: (input) => sealTimedOut(ctx, input),
    startHedge: (input) => startHedge(ctx, input),
    getSubtask: (input) => getSubtask(ctx, input),
    cancelRun: (tenantId, runId) => cancelRun(ctx, tenantId, runId),
    finishRun: (input) => finishRun(ctx, input),
    reserveSynthesisCall: (input) => reserveSynthesisCall(ctx, input),
    readSynthesis: (ref) => readSynthesis(ctx, ref),
    recordSynthesis: (ref, synthesis) => recordSynthesis(ctx, ref, synthesis),
    listRuns: (request) => listRuns(ctx, request),
    runVersion: ofRun('runVersion', runVersion),
    runCreatedAt: ofRun('runCreatedAt', runCreatedAt),
  };
};

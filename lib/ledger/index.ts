/**
 * The run ledger (DynamoDB adapter): manifest, claims, budgets, outcomes, seals and cancellation.
 * See docs/ledger.md.
 */
export { createLedger, type Ledger, type LedgerOptions } from './ledger';
export * from './errors';
export { LEDGER_TABLE, RUN_LIST_INDEX, ledgerTableDefinition } from './table';
export type { RunListPage, RunListPosition, RunListRequest } from './summary';
export {
  Claim,
  RunId,
  type ClaimInput,
  type CreateRunInput,
  type AppendRoundInput,
  type DeliveryFailureInput,
  type FinishRunInput,
  type SubtaskRef,
  type WaiterInput,
} from './inputs';
export type { DailyAllowance } from './io';
export type { SummaryItem, RunItem, MetaItem, SubtaskItem, LateItem, DeliveryFailure, StoredOutcome } from './items';
export type { SubtaskPageRead, SubtaskPageRequest } from './subtask-pages';
export {
  runProgress,
  toRunResource,
  toPagedRunResource,
  toSubtaskViews,
  toOutcome,
  toSubtaskView,
  subtaskUsage,
  runUsage,
  isTerminal,
  type RunPageRecord,
  type RunRecord,
} from './view';
export { hashRequest, IDEMPOTENCY_TTL_SECONDS, type CreatedRun, type ManifestRead, type RunPageRequest, type RunRead } from './runs';
export { SUBTASKS_PER_TRANSACTION, type AppendedRound } from './rounds';
export { SHARDING, SUBTASKS_PER_SHARD, shardCount, shardOf } from './keys';
export { TENANT_DAY_RETENTION_SECONDS, type Reservation, type TenantUsage } from './budget';
export type { RecordedOutcome } from './outcomes';
export type { StartedHedge } from './hedges';
export type { SealResult, WaiterRegistration } from './claims';
export type { CancelledRun, ClosedRun } from './closing';
export { boundOutcome, itemSize, FINDINGS_LIMIT_BYTES, OUTCOME_LIMIT_BYTES, ANSWER_LIMIT_BYTES } from './size';
export { DEFAULT_CONFLICT_RETRY, type ConflictRetry } from './failures';
export { sealReason, closeReason } from './reason';
export { BatchEntry, BatchRef, batchKey, type WriteBatchesInput } from './batches';
export { SynthesisCall, SynthesisRef, type SynthesisReservation } from './synthesis';
export { MAX_CHECKPOINTS, MAX_CHECKPOINT_BYTES, type CheckpointWrite } from './checkpoints';

/**
 * Errors of the run ledger. The adapter turns every DynamoDB refusal into one of these, named in
 * the domain's words and carrying what a caller needs to decide what to do next: the tenant,
 * run and subtask it concerns, the fields of that refusal (generation, limit, state…), and the
 * SDK error as `cause`.
 *
 * A caller branches on `instanceof` (or `name`); messages are for people and logs.
 */
import type { RunStatus, SubtaskState } from '../contract';

/** Where in the ledger an error happened. Every field is optional because not every operation has a subtask. */
export interface LedgerErrorContext {
  readonly tenantId?: string | undefined;
  readonly runId?: string | undefined;
  readonly subtaskId?: string | undefined;
}

const where = (context: LedgerErrorContext): string => {
  const parts = [
    context.runId === undefined ? undefined : `run ${context.runId}`,
    context.subtaskId === undefined ? undefined : `subtask ${context.subtaskId}`,
  ].filter((part): part is string => part !== undefined);
  return parts.length > 0 ? ` (${parts.join(', ')})` : '';
};

/**
 * Base class of every ledger error.
 *
 * @example
 * try { await ledger.claimSubtask(input); }
 * catch (error) { if (error instanceof LedgerError) logger.warn(error.name, { runId: error.runId }); }
 */
export class LedgerError extends Error {
  override readonly name: string = 'LedgerError';
  readonly tenantId: string | undefined;
  readonly runId: string | undefined;
  readonly subtaskId: string | undefined;
  /**
   * `message` is followed by where it happened: ` (run r1, subtask A)`. Every field of `details`
   * becomes a field of the error, so a subclass only declares the fields it carries.
   */
  constructor(message?: string, details: LedgerErrorContext = {}, options?: ErrorOptions) {
    super(`${message ?? ''}${where(details)}`, options);
    Object.assign(this, details);
  }
}

/**
 * Names of the ledger errors worth another attempt a little later (`WriteConflict`). A Step
 * Functions task that fails with one of them is retried; the state machine imports this list.
 */
export const TRANSIENT_LEDGER_ERRORS = ['WriteConflict', 'WritesUnprocessed'] as const;

const lateNote = (kept: boolean | undefined): string => (kept ? '; the result was kept as late evidence' : '');

/**
 * The same idempotency key (or run id) was used with a different request. The API answers 409.
 *
 * @example
 * new IdempotencyConflict({ tenantId: 't1', runId: 'r2', idempotencyKey: 'k', existingRunId: 'r1' })
 */
export class IdempotencyConflict extends LedgerError {
  override readonly name = 'IdempotencyConflict';
  declare readonly idempotencyKey: string | undefined;
  declare readonly existingRunId: string;
  constructor(details: LedgerErrorContext & Pick<IdempotencyConflict, 'idempotencyKey' | 'existingRunId'>, options?: ErrorOptions) {
    const message =
      details.idempotencyKey === undefined
        ? `run id ${details.existingRunId} already exists with a different request`
        : `idempotency key ${JSON.stringify(details.idempotencyKey)} was first used for run ${details.existingRunId} with a different request`;
    super(message, details, options);
  }
}

/**
 * Something tried to change a dispatched subtask's assignment (scope, worker kind, deadline,
 * allowance), or a stored assignment no longer matches its hash.
 *
 * @example
 * new ImmutableAssignment({ runId: 'r1', subtaskId: 'B', detail: 'round 1 already dispatched B with another assignment' })
 */
export class ImmutableAssignment extends LedgerError {
  override readonly name = 'ImmutableAssignment';
  declare readonly detail: string;
  constructor(details: LedgerErrorContext & Pick<ImmutableAssignment, 'detail'>, options?: ErrorOptions) {
    super(`assignment is immutable: ${details.detail}`, details, options);
  }
}

/**
 * Another delivery holds a live lease on the subtask. A duplicate SQS delivery treats this as a no-op.
 *
 * @example
 * if (error instanceof ClaimHeld) return; // the holder will finish or its lease will expire
 */
export class ClaimHeld extends LedgerError {
  override readonly name = 'ClaimHeld';
  declare readonly generation: number;
  declare readonly leaseExpiresAt: string;
  declare readonly workerId: string | undefined;
  constructor(details: LedgerErrorContext & Pick<ClaimHeld, 'generation' | 'leaseExpiresAt' | 'workerId'>, options?: ErrorOptions) {
    super(`generation ${details.generation} holds the lease until ${details.leaseExpiresAt}`, details, options);
  }
}

/**
 * The subtask already ended (ok, invalid, empty or timed_out). A delivery of it is a no-op.
 *
 * @example
 * new AlreadyTerminal({ runId: 'r1', subtaskId: 'A', state: 'ok' }).message // 'subtask already ended ok (run r1, subtask A)'
 */
export class AlreadyTerminal extends LedgerError {
  override readonly name = 'AlreadyTerminal';
  declare readonly state: SubtaskState;
  constructor(details: LedgerErrorContext & Pick<AlreadyTerminal, 'state'>, options?: ErrorOptions) {
    super(`subtask already ended ${details.state}`, details, options);
  }
}

/**
 * A hedged race is over: the subtask ended (the first complete cover won, or it was sealed), so
 * this copy, piece or original may not spend or record any more. What it reserved stays charged.
 *
 * @example
 * new HedgeLost({ runId: 'r1', subtaskId: 'A', state: 'ok', winner: 'A.h1' }).message
 * // 'hedged subtask already ended ok, won by A.h1 (run r1, subtask A)'
 */
export class HedgeLost extends LedgerError {
  override readonly name = 'HedgeLost';
  declare readonly state: SubtaskState;
  declare readonly winner: string | undefined;
  constructor(details: LedgerErrorContext & Pick<HedgeLost, 'state' | 'winner'>, options?: ErrorOptions) {
    super(`hedged subtask already ended ${details.state}${details.winner === undefined ? '' : `, won by ${details.winner}`}`, details, options);
  }
}

/**
 * The subtask's original handed over to its `subdivide` hedge pieces at `afterSeconds`
 * (docs/hedging.md, "Handover"): its stored checkpoint is the prefix, the pieces read the rest,
 * and from then on the original may not claim, spend, checkpoint or record an outcome.
 *
 * @example
 * new HandedOver({ runId: 'r1', subtaskId: 'B', handedOverAt: '2040-06-01T12:00:10.000Z' }).message
 * // 'the subtask handed over to its hedge pieces at 2040-06-01T12:00:10.000Z (run r1, subtask B)'
 */
export class HandedOver extends LedgerError {
  override readonly name = 'HandedOver';
  declare readonly handedOverAt: string;
  constructor(details: LedgerErrorContext & Pick<HandedOver, 'handedOverAt'>, options?: ErrorOptions) {
    super(`the subtask handed over to its hedge pieces at ${details.handedOverAt}`, details, options);
  }
}

/** Why a claim no longer authorises its holder. */
export const LEASE_LOST_REASONS = {
  superseded: 'superseded',
  leaseExpired: 'lease_expired',
  released: 'released',
} as const;
export type LeaseLostReason = (typeof LEASE_LOST_REASONS)[keyof typeof LEASE_LOST_REASONS];

/**
 * The claim is stale: a replacement took a newer generation, the lease expired before a
 * reservation, or the claim was released. A stale holder may not spend, record or release.
 *
 * @example
 * new LeaseLost({ runId: 'r1', subtaskId: 'A', generation: 1, currentGeneration: 2, reason: 'superseded' })
 */
export class LeaseLost extends LedgerError {
  override readonly name = 'LeaseLost';
  declare readonly generation: number;
  declare readonly currentGeneration: number;
  declare readonly reason: LeaseLostReason;
  constructor(details: LedgerErrorContext & Pick<LeaseLost, 'generation' | 'currentGeneration' | 'reason'>, options?: ErrorOptions) {
    super(`claim generation ${details.generation} is no longer current (${details.reason}; current generation ${details.currentGeneration})`, details, options);
  }
}

/** Which counter refused a reservation: a subtask's, the run's, the tenant's day, or the request's synthesis allowance. */
export const BUDGET_LIMITS = { subtask: 'subtask', run: 'run', tenant: 'tenant', synthesis: 'synthesis' } as const;
export type BudgetLimit = (typeof BUDGET_LIMITS)[keyof typeof BUDGET_LIMITS];
export type BudgetCounter = 'calls' | 'cost';

/**
 * A reservation would exceed the subtask's allowance, the run budget or the tenant's daily
 * allowance. `remaining` is what that counter had left; `requested` what the call needed
 * (1 call, or the assignment's estimated cost per call).
 *
 * @example
 * if (error instanceof BudgetExhausted && error.limit === 'tenant') notifyBilling(error.tenantId);
 */
export class BudgetExhausted extends LedgerError {
  override readonly name = 'BudgetExhausted';
  declare readonly limit: BudgetLimit;
  declare readonly counter: BudgetCounter;
  declare readonly remaining: number;
  declare readonly requested: number;
  constructor(details: LedgerErrorContext & Pick<BudgetExhausted, 'limit' | 'counter' | 'remaining' | 'requested'>, options?: ErrorOptions) {
    super(
      `${details.limit} ${details.counter === 'calls' ? 'model-call' : 'cost'} allowance exhausted: ${details.remaining} left, ${details.requested} needed`,
      details,
      options,
    );
  }
}

/**
 * The subtask was sealed (timed_out, or ended by another generation) before this result arrived.
 * The result was kept as late evidence when `keptAsLateEvidence` is true; the state did not change.
 *
 * @example
 * if (error instanceof AlreadySealed) metrics.addMetric(METRICS.lateResults, 'Count', 1);
 */
export class AlreadySealed extends LedgerError {
  override readonly name = 'AlreadySealed';
  declare readonly state: SubtaskState;
  declare readonly generation: number;
  declare readonly keptAsLateEvidence: boolean;
  constructor(details: LedgerErrorContext & Pick<AlreadySealed, 'state' | 'generation' | 'keptAsLateEvidence'>, options?: ErrorOptions) {
    super(`subtask is sealed ${details.state}; generation ${details.generation} is too late${lateNote(details.keptAsLateEvidence)}`, details, options);
  }
}

/**
 * The run was cancelled. Claims, reservations and outcomes are refused; a refused outcome is kept
 * as late evidence when `keptAsLateEvidence` is true.
 *
 * @example
 * if (error instanceof RunCancelled) return; // stop work; reserved usage stays charged
 */
export class RunCancelled extends LedgerError {
  override readonly name = 'RunCancelled';
  declare readonly keptAsLateEvidence?: boolean;
  constructor(details: LedgerErrorContext & Pick<RunCancelled, 'keptAsLateEvidence'>, options?: ErrorOptions) {
    super(`run was cancelled${lateNote(details.keptAsLateEvidence)}`, details, options);
  }
}

/**
 * The run already ended (succeeded or failed) and accepts no more work, or was asked to end twice
 * with different statuses.
 *
 * @example
 * new RunEnded({ runId: 'r1', status: 'succeeded' }).message // 'run already ended succeeded (run r1)'
 */
export class RunEnded extends LedgerError {
  override readonly name = 'RunEnded';
  declare readonly status: RunStatus;
  declare readonly keptAsLateEvidence?: boolean;
  constructor(details: LedgerErrorContext & Pick<RunEnded, 'status' | 'keptAsLateEvidence'>, options?: ErrorOptions) {
    super(`run already ended ${details.status}${lateNote(details.keptAsLateEvidence)}`, details, options);
  }
}

/**
 * The subtask's absolute deadline has passed: no claim, reservation or outcome is accepted.
 * An outcome refused for this reason is kept as late evidence when `keptAsLateEvidence` is true.
 *
 * @example
 * new DeadlinePassed({ subtaskId: 'C', deadline: '2025-06-01T12:01:00.000Z' })
 */
export class DeadlinePassed extends LedgerError {
  override readonly name = 'DeadlinePassed';
  declare readonly deadline: string;
  declare readonly keptAsLateEvidence?: boolean;
  constructor(details: LedgerErrorContext & Pick<DeadlinePassed, 'deadline' | 'keptAsLateEvidence'>, options?: ErrorOptions) {
    super(`deadline ${details.deadline} has passed${lateNote(details.keptAsLateEvidence)}`, details, options);
  }
}

/**
 * A seal was attempted before the subtask's deadline. `timed_out` must mean the deadline passed,
 * so the ledger refuses; the state machine retries at the deadline.
 *
 * @example
 * new DeadlineNotReached({ subtaskId: 'C', deadline: '2025-06-01T12:01:00.000Z' })
 */
export class DeadlineNotReached extends LedgerError {
  override readonly name = 'DeadlineNotReached';
  declare readonly deadline: string;
  constructor(details: LedgerErrorContext & Pick<DeadlineNotReached, 'deadline'>, options?: ErrorOptions) {
    super(`deadline ${details.deadline} has not passed yet`, details, options);
  }
}

/**
 * A committed round has fewer subtask items than its commit marker counts: the manifest cannot be
 * trusted as complete.
 *
 * @example
 * new ManifestIncomplete({ runId: 'r1', round: 1, expected: 250, found: 99 })
 */
export class ManifestIncomplete extends LedgerError {
  override readonly name = 'ManifestIncomplete';
  declare readonly round: number;
  declare readonly expected: number;
  declare readonly found: number;
  constructor(details: LedgerErrorContext & Pick<ManifestIncomplete, 'round' | 'expected' | 'found'>, options?: ErrorOptions) {
    super(`round ${details.round} was committed with ${details.expected} subtasks but ${details.found} were found`, details, options);
  }
}

/**
 * No run with this id exists for this tenant (another tenant's run is indistinguishable from none).
 *
 * @example
 * if (error instanceof RunNotFound) return notFound();
 */
export class RunNotFound extends LedgerError {
  override readonly name = 'RunNotFound';
  constructor(context: LedgerErrorContext, options?: ErrorOptions) {
    super('run not found', context, options);
  }
}

/**
 * The run exists but has no such subtask.
 *
 * @example
 * new SubtaskNotFound({ runId: 'r1', subtaskId: 'Z' })
 */
export class SubtaskNotFound extends LedgerError {
  override readonly name = 'SubtaskNotFound';
  constructor(context: LedgerErrorContext, options?: ErrorOptions) {
    super('subtask not found', context, options);
  }
}

/**
 * No batch was written under this key: the batch's child execution was started for a round or
 * batch that dispatch never wrote.
 *
 * @example
 * new BatchNotFound({ runId: 'r1', round: 2, batch: 7 })
 */
export class BatchNotFound extends LedgerError {
  override readonly name = 'BatchNotFound';
  declare readonly round: number;
  declare readonly batch: number;
  constructor(details: LedgerErrorContext & Pick<BatchNotFound, 'round' | 'batch'>, options?: ErrorOptions) {
    super(`batch ${details.batch} of round ${details.round} not found`, details, options);
  }
}

/**
 * A ledger call's input failed validation. `issues` lists each problem with its field path.
 *
 * @example
 * new InvalidLedgerInput({ operation: 'appendRound', issues: ['subtasks.0.deadline: required'] })
 */
export class InvalidLedgerInput extends LedgerError {
  override readonly name = 'InvalidLedgerInput';
  declare readonly operation: string;
  declare readonly issues: readonly string[];
  constructor(details: LedgerErrorContext & Pick<InvalidLedgerInput, 'operation' | 'issues'>, options?: ErrorOptions) {
    super(`invalid input to ${details.operation}: ${details.issues.join('; ')}`, details, options);
  }
}

/**
 * A value is larger than the ledger stores, such as an answer over `ANSWER_LIMIT_BYTES` (what
 * fits one transaction with its parts).
 *
 * @example
 * new ItemTooLarge({ runId: 'r1', what: 'answer', bytes: 3_500_000, limit: 3_145_728 })
 */
export class ItemTooLarge extends LedgerError {
  override readonly name = 'ItemTooLarge';
  declare readonly what: string;
  declare readonly bytes: number;
  declare readonly limit: number;
  constructor(details: LedgerErrorContext & Pick<ItemTooLarge, 'what' | 'bytes' | 'limit'>, options?: ErrorOptions) {
    super(`${details.what} is ${details.bytes} bytes; the ledger stores at most ${details.limit}`, details, options);
  }
}

/**
 * A run request larger than the ledger accepts ({@link MAX_RUN_REQUEST_BYTES} of JSON). Thrown
 * by `createRun` before anything is written; `field` is the request field holding most of the
 * bytes (`universe.ids`). The API answers 413 naming it.
 *
 * @example
 * new RequestTooLarge({ field: 'universe.ids', bytes: 2_400_000, fieldBytes: 2_390_000, limit: 2_097_152 })
 */
export class RequestTooLarge extends LedgerError {
  override readonly name = 'RequestTooLarge';
  declare readonly field: string;
  declare readonly bytes: number;
  declare readonly fieldBytes: number;
  declare readonly limit: number;
  constructor(details: LedgerErrorContext & Pick<RequestTooLarge, 'field' | 'bytes' | 'fieldBytes' | 'limit'>, options?: ErrorOptions) {
    super(
      `the run request is ${details.bytes} bytes as JSON, over the ${details.limit}-byte maximum; ${details.field} alone is ${details.fieldBytes} bytes`,
      details,
      options,
    );
  }
}

/**
 * Concurrent transactions kept conflicting on the same items after every retry. Transient: the
 * caller (an SQS redelivery, a Step Functions Retry) may try again later.
 *
 * @example
 * new WriteConflict({ runId: 'r1', operation: 'reserveBudget', attempts: 8 })
 */
export class WriteConflict extends LedgerError {
  override readonly name = TRANSIENT_LEDGER_ERRORS[0];
  declare readonly operation: string;
  declare readonly attempts: number;
  constructor(details: LedgerErrorContext & Pick<WriteConflict, 'operation' | 'attempts'>, options?: ErrorOptions) {
    super(`${details.operation} kept conflicting with concurrent writes after ${details.attempts} attempts`, details, options);
  }
}

/**
 * A batch write still had unprocessed items after the adapter's last attempt: DynamoDB kept
 * refusing them for throughput. Transient: the Step Functions task retries the whole step, which
 * writes the same keys again.
 *
 * @example
 * new WritesUnprocessed({ runId: 'r1', operation: 'writeBatches', attempts: 8, unprocessed: 3 })
 */
export class WritesUnprocessed extends LedgerError {
  override readonly name = TRANSIENT_LEDGER_ERRORS[1];
  declare readonly operation: string;
  declare readonly attempts: number;
  declare readonly unprocessed: number;
  constructor(details: LedgerErrorContext & Pick<WritesUnprocessed, 'operation' | 'attempts' | 'unprocessed'>, options?: ErrorOptions) {
    super(`${details.operation} left ${details.unprocessed} item(s) unprocessed after ${details.attempts} attempts`, details, options);
  }
}

/**
 * A stored item did not match the ledger's own schema (written by something else, or corrupted).
 *
 * @example
 * new CorruptItem({ runId: 'r1', key: 'SUB#A', issues: ['generation: expected number'] })
 */
export class CorruptItem extends LedgerError {
  override readonly name = 'CorruptItem';
  declare readonly key: string;
  declare readonly issues: readonly string[];
  constructor(details: LedgerErrorContext & Pick<CorruptItem, 'key' | 'issues'>, options?: ErrorOptions) {
    super(`stored item ${details.key} is not a valid ledger item: ${details.issues.join('; ')}`, details, options);
  }
}

/**
 * The ledger was built with a client or options it cannot work with. Thrown by `createLedger`,
 * at cold start, so a misconfiguration fails before any request.
 *
 * @example
 * new LedgerConfigurationError({ detail: 'createLedger needs removeUndefinedValues: true' })
 */
export class LedgerConfigurationError extends LedgerError {
  override readonly name = 'LedgerConfigurationError';
  declare readonly detail: string;
  constructor(details: LedgerErrorContext & Pick<LedgerConfigurationError, 'detail'>, options?: ErrorOptions) {
    super(details.detail, details, options);
  }
}

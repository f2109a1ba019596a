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

interface ErrorOptions {
  readonly cause?: unknown;
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
  constructor(message: string, context: LedgerErrorContext, options: ErrorOptions = {}) {
    super(`${message}${where(context)}`, options.cause === undefined ? undefined : { cause: options.cause });
    this.tenantId = context.tenantId;
    this.runId = context.runId;
    this.subtaskId = context.subtaskId;
  }
}

type LedgerErrorClass<Details extends object> = new (context: LedgerErrorContext & Details, options?: ErrorOptions) => LedgerError & Readonly<Details>;

/**
 * Defines a ledger error: its `name`, the fields it carries besides the context, and its message.
 * Every error is built the same way, so the classes below differ only in what they say.
 */
const ledgerError = <Details extends object>(name: string, describe: (details: Details) => string): LedgerErrorClass<Details> => {
  class DefinedLedgerError extends LedgerError {
    override readonly name: string = name;
    constructor(context: LedgerErrorContext & Details, options?: ErrorOptions) {
      super(describe(context), context, options);
      const { tenantId: _tenant, runId: _run, subtaskId: _subtask, ...details } = context;
      Object.assign(this, details);
    }
  }
  return DefinedLedgerError as unknown as LedgerErrorClass<Details>;
};

/**
 * Names of the ledger errors worth another attempt a little later (`WriteConflict`). A Step
 * Functions task that fails with one of them is retried; the state machine imports this list.
 */
export const TRANSIENT_LEDGER_ERRORS = ['WriteConflict'] as const;

const lateNote = (kept: boolean | undefined): string => (kept ? '; the result was kept as late evidence' : '');

/**
 * The same idempotency key (or run id) was used with a different request. The API answers 409.
 *
 * @example
 * new IdempotencyConflict({ tenantId: 't1', runId: 'r2', idempotencyKey: 'k', existingRunId: 'r1' })
 */
export class IdempotencyConflict extends ledgerError<{ idempotencyKey: string | undefined; existingRunId: string }>('IdempotencyConflict', (d) =>
  d.idempotencyKey === undefined
    ? `run id ${d.existingRunId} already exists with a different request`
    : `idempotency key ${JSON.stringify(d.idempotencyKey)} was first used for run ${d.existingRunId} with a different request`,
) {}

/**
 * Something tried to change a dispatched subtask's assignment (scope, worker kind, deadline,
 * allowance), or a stored assignment no longer matches its hash.
 *
 * @example
 * new ImmutableAssignment({ runId: 'r1', subtaskId: 'B', detail: 'round 1 already dispatched B with another assignment' })
 */
export class ImmutableAssignment extends ledgerError<{ detail: string }>('ImmutableAssignment', (d) => `assignment is immutable: ${d.detail}`) {}

/**
 * Another delivery holds a live lease on the subtask. A duplicate SQS delivery treats this as a no-op.
 *
 * @example
 * if (error instanceof ClaimHeld) return; // the holder will finish or its lease will expire
 */
export class ClaimHeld extends ledgerError<{ generation: number; leaseExpiresAt: string; workerId: string | undefined }>(
  'ClaimHeld',
  (d) => `generation ${d.generation} holds the lease until ${d.leaseExpiresAt}`,
) {}

/**
 * The subtask already ended (ok, invalid, empty or timed_out). A delivery of it is a no-op.
 *
 * @example
 * new AlreadyTerminal({ runId: 'r1', subtaskId: 'A', state: 'ok' }).message // 'subtask already ended ok (run r1, subtask A)'
 */
export class AlreadyTerminal extends ledgerError<{ state: SubtaskState }>('AlreadyTerminal', (d) => `subtask already ended ${d.state}`) {}

/**
 * A hedged race is over: the subtask ended (the first complete cover won, or it was sealed), so
 * this copy, piece or original may not spend or record any more. What it reserved stays charged.
 *
 * @example
 * new HedgeLost({ runId: 'r1', subtaskId: 'A', state: 'ok', winner: 'A.h1' }).message
 * // 'hedged subtask already ended ok, won by A.h1 (run r1, subtask A)'
 */
export class HedgeLost extends ledgerError<{ state: SubtaskState; winner: string | undefined }>(
  'HedgeLost',
  (d) => `hedged subtask already ended ${d.state}${d.winner === undefined ? '' : `, won by ${d.winner}`}`,
) {}

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
export class LeaseLost extends ledgerError<{ generation: number; currentGeneration: number; reason: LeaseLostReason }>(
  'LeaseLost',
  (d) => `claim generation ${d.generation} is no longer current (${d.reason}; current generation ${d.currentGeneration})`,
) {}

/** Which of the three counters refused a reservation. */
export const BUDGET_LIMITS = { subtask: 'subtask', run: 'run', tenant: 'tenant' } as const;
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
export class BudgetExhausted extends ledgerError<{ limit: BudgetLimit; counter: BudgetCounter; remaining: number; requested: number }>(
  'BudgetExhausted',
  (d) => `${d.limit} ${d.counter === 'calls' ? 'model-call' : 'cost'} allowance exhausted: ${d.remaining} left, ${d.requested} needed`,
) {}

/**
 * The subtask was sealed (timed_out, or ended by another generation) before this result arrived.
 * The result was kept as late evidence when `keptAsLateEvidence` is true; the state did not change.
 *
 * @example
 * if (error instanceof AlreadySealed) metrics.addMetric(METRICS.lateResults, 'Count', 1);
 */
export class AlreadySealed extends ledgerError<{ state: SubtaskState; generation: number; keptAsLateEvidence: boolean }>(
  'AlreadySealed',
  (d) => `subtask is sealed ${d.state}; generation ${d.generation} is too late${lateNote(d.keptAsLateEvidence)}`,
) {}

/**
 * The run was cancelled. Claims, reservations and outcomes are refused; a refused outcome is kept
 * as late evidence when `keptAsLateEvidence` is true.
 *
 * @example
 * if (error instanceof RunCancelled) return; // stop work; reserved usage stays charged
 */
export class RunCancelled extends ledgerError<{ keptAsLateEvidence?: boolean }>('RunCancelled', (d) => `run was cancelled${lateNote(d.keptAsLateEvidence)}`) {}

/**
 * The run already ended (succeeded or failed) and accepts no more work, or was asked to end twice
 * with different statuses.
 *
 * @example
 * new RunEnded({ runId: 'r1', status: 'succeeded' }).message // 'run already ended succeeded (run r1)'
 */
export class RunEnded extends ledgerError<{ status: RunStatus; keptAsLateEvidence?: boolean }>(
  'RunEnded',
  (d) => `run already ended ${d.status}${lateNote(d.keptAsLateEvidence)}`,
) {}

/**
 * The subtask's absolute deadline has passed: no claim, reservation or outcome is accepted.
 * An outcome refused for this reason is kept as late evidence when `keptAsLateEvidence` is true.
 *
 * @example
 * new DeadlinePassed({ subtaskId: 'C', deadline: '2025-06-01T12:01:00.000Z' })
 */
export class DeadlinePassed extends ledgerError<{ deadline: string; keptAsLateEvidence?: boolean }>(
  'DeadlinePassed',
  (d) => `deadline ${d.deadline} has passed${lateNote(d.keptAsLateEvidence)}`,
) {}

/**
 * A seal was attempted before the subtask's deadline. `timed_out` must mean the deadline passed,
 * so the ledger refuses; the state machine retries at the deadline.
 *
 * @example
 * new DeadlineNotReached({ subtaskId: 'C', deadline: '2025-06-01T12:01:00.000Z' })
 */
export class DeadlineNotReached extends ledgerError<{ deadline: string }>('DeadlineNotReached', (d) => `deadline ${d.deadline} has not passed yet`) {}

/**
 * A committed round has fewer subtask items than its commit marker counts: the manifest cannot be
 * trusted as complete.
 *
 * @example
 * new ManifestIncomplete({ runId: 'r1', round: 1, expected: 250, found: 99 })
 */
export class ManifestIncomplete extends ledgerError<{ round: number; expected: number; found: number }>(
  'ManifestIncomplete',
  (d) => `round ${d.round} was committed with ${d.expected} subtasks but ${d.found} were found`,
) {}

/**
 * No run with this id exists for this tenant (another tenant's run is indistinguishable from none).
 *
 * @example
 * if (error instanceof RunNotFound) return notFound();
 */
export class RunNotFound extends ledgerError<object>('RunNotFound', () => 'run not found') {}

/**
 * The run exists but has no such subtask.
 *
 * @example
 * new SubtaskNotFound({ runId: 'r1', subtaskId: 'Z' })
 */
export class SubtaskNotFound extends ledgerError<object>('SubtaskNotFound', () => 'subtask not found') {}

/**
 * A ledger call's input failed validation. `issues` lists each problem with its field path.
 *
 * @example
 * new InvalidLedgerInput({ operation: 'appendRound', issues: ['subtasks.0.deadline: required'] })
 */
export class InvalidLedgerInput extends ledgerError<{ operation: string; issues: readonly string[] }>(
  'InvalidLedgerInput',
  (d) => `invalid input to ${d.operation}: ${d.issues.join('; ')}`,
) {}

/**
 * A value is larger than the ledger stores, such as an answer over `ANSWER_LIMIT_BYTES` (what
 * fits one transaction with its parts).
 *
 * @example
 * new ItemTooLarge({ runId: 'r1', what: 'answer', bytes: 3_500_000, limit: 3_145_728 })
 */
export class ItemTooLarge extends ledgerError<{ what: string; bytes: number; limit: number }>(
  'ItemTooLarge',
  (d) => `${d.what} is ${d.bytes} bytes; the ledger stores at most ${d.limit}`,
) {}

/**
 * A run request larger than the ledger accepts ({@link MAX_RUN_REQUEST_BYTES} of JSON). Thrown
 * by `createRun` before anything is written; `field` is the request field holding most of the
 * bytes (`universe.ids`). The API answers 413 naming it.
 *
 * @example
 * new RequestTooLarge({ field: 'universe.ids', bytes: 2_400_000, fieldBytes: 2_390_000, limit: 2_097_152 })
 */
export class RequestTooLarge extends ledgerError<{ field: string; bytes: number; fieldBytes: number; limit: number }>(
  'RequestTooLarge',
  (d) => `the run request is ${d.bytes} bytes as JSON, over the ${d.limit}-byte maximum; ${d.field} alone is ${d.fieldBytes} bytes`,
) {}

/**
 * Concurrent transactions kept conflicting on the same items after every retry. Transient: the
 * caller (an SQS redelivery, a Step Functions Retry) may try again later.
 *
 * @example
 * new WriteConflict({ runId: 'r1', operation: 'reserveBudget', attempts: 8 })
 */
export class WriteConflict extends ledgerError<{ operation: string; attempts: number }>(
  TRANSIENT_LEDGER_ERRORS[0],
  (d) => `${d.operation} kept conflicting with concurrent writes after ${d.attempts} attempts`,
) {}

/**
 * A stored item did not match the ledger's own schema (written by something else, or corrupted).
 *
 * @example
 * new CorruptItem({ runId: 'r1', key: 'SUB#A', issues: ['generation: expected number'] })
 */
export class CorruptItem extends ledgerError<{ key: string; issues: readonly string[] }>(
  'CorruptItem',
  (d) => `stored item ${d.key} is not a valid ledger item: ${d.issues.join('; ')}`,
) {}

/**
 * The ledger was built with a client or options it cannot work with. Thrown by `createLedger`,
 * at cold start, so a misconfiguration fails before any request.
 *
 * @example
 * new LedgerConfigurationError({ detail: 'createLedger needs removeUndefinedValues: true' })
 */
export class LedgerConfigurationError extends ledgerError<{ detail: string }>('LedgerConfigurationError', (d) => d.detail) {}

/**
 * Reading DynamoDB's refusals. A conditional write that fails with
 * `ReturnValuesOnConditionCheckFailure: 'ALL_OLD'` carries the item as it was, so the adapter can
 * say *why* it failed (stale generation, sealed, cancelled, which budget) without a second read.
 * Those images arrive marshalled even through the document client, hence `unmarshall` here.
 */
import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { WriteConflict, WritesUnprocessed, type LedgerErrorContext } from './errors';

/** One entry of a cancelled transaction, aligned with the transaction's items. */
export interface CancellationReason {
  /** `None`, `ConditionalCheckFailed`, `TransactionConflict`, `ThrottlingError`, … */
  readonly code: string;
  /** The item before the transaction, when its condition failed and `ALL_OLD` was asked for. */
  readonly item: Record<string, unknown> | undefined;
}

type RawItem = Record<string, AttributeValue> | undefined;

const image = (raw: RawItem): Record<string, unknown> | undefined => (raw === undefined ? undefined : unmarshall(raw));

/**
 * The old item of a failed single-item conditional write, or `undefined` when the error is something else.
 * `{ item: undefined }` means the condition failed on an item that does not exist.
 *
 * @example
 * const failure = conditionFailure(error);
 * if (failure && failure.item === undefined) throw new SubtaskNotFound(context);
 */
export const conditionFailure = (error: unknown): { readonly item: Record<string, unknown> | undefined } | undefined => {
  if (!(error instanceof Error) || error.name !== 'ConditionalCheckFailedException') return undefined;
  return { item: image((error as { Item?: RawItem }).Item) };
};

/**
 * The per-item reasons of a cancelled transaction, or `undefined` when the error is something else.
 *
 * @example
 * const [subtask, run, day] = cancellationReasons(error) ?? [];
 */
export const cancellationReasons = (error: unknown): readonly CancellationReason[] | undefined => {
  if (!(error instanceof Error) || error.name !== 'TransactionCanceledException') return undefined;
  const reasons = (error as { CancellationReasons?: { Code?: string; Item?: RawItem }[] }).CancellationReasons ?? [];
  return reasons.map((reason) => ({ code: reason.Code ?? 'None', item: image(reason.Item) }));
};

/** True when the reason is a failed condition (the only code the adapter maps to a domain error). */
export const conditionFailed = (reason: CancellationReason | undefined): reason is CancellationReason => reason?.code === 'ConditionalCheckFailed';

/** Cancellation codes that say "try again": nothing was evaluated against a stable item. */
const TRANSIENT_CODES = new Set(['TransactionConflict', 'ThrottlingError', 'ProvisionedThroughputExceeded']);

/**
 * True for a write that lost a race with a concurrent transaction: a cancelled transaction with a
 * conflict or throttling reason, or a single-item write refused because a transaction held the item.
 * The SDK's own retry strategy does not retry either.
 *
 * @example
 * isTransientConflict(error) // true for TransactionConflictException
 */
export const isTransientConflict = (error: unknown): boolean => {
  if (error instanceof Error && error.name === 'TransactionConflictException') return true;
  const reasons = cancellationReasons(error);
  return reasons !== undefined && reasons.some((reason) => TRANSIENT_CODES.has(reason.code));
};

/** How often and how patiently the adapter retries a write that lost a race. */
export interface ConflictRetry {
  readonly attempts: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** Eight attempts with full-jitter exponential backoff from 20 ms, capped at 1 s per wait. */
export const DEFAULT_CONFLICT_RETRY: ConflictRetry = { attempts: 8, baseDelayMs: 20, maxDelayMs: 1000 };

const pause = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * The wait before attempt `tries + 1`: full jitter, a random time up to `baseDelayMs · 2^tries`,
 * never more than `maxDelayMs`, so retrying writers spread out instead of colliding again.
 *
 * @example
 * backoffMs(DEFAULT_CONFLICT_RETRY, 3) // somewhere in [0, 160)
 */
export const backoffMs = (policy: ConflictRetry, tries: number): number => Math.random() * Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** tries);

/**
 * Sends a batch write until DynamoDB has processed every item, at most `policy.attempts` times,
 * pausing {@link backoffMs} between attempts; then `WritesUnprocessed`. `send` takes the requests
 * still to write and answers the ones DynamoDB left unprocessed.
 *
 * @example
 * await untilProcessed(ctx.conflictRetry, { operation: 'writeBatches', runId }, puts, (requests) => sendBatch(requests));
 */
export const untilProcessed = async <R>(
  policy: ConflictRetry,
  context: LedgerErrorContext & { operation: string },
  requests: readonly R[],
  send: (requests: readonly R[]) => Promise<readonly R[] | undefined>,
): Promise<void> => {
  let pending = requests;
  for (let tries = 1; pending.length > 0; tries += 1) {
    pending = (await send(pending)) ?? [];
    if (pending.length === 0) return;
    if (tries >= policy.attempts) throw new WritesUnprocessed({ ...context, attempts: tries, unprocessed: pending.length });
    await pause(backoffMs(policy, tries));
  }
};

/**
 * Runs `attempt` until it succeeds, fails for a reason other than a transient conflict, or runs
 * out of attempts (then `WriteConflict`, with the last error as cause). Each attempt builds its
 * request afresh, so a transaction's `ClientRequestToken` is new per attempt but kept by the
 * SDK's own network retries inside one attempt.
 *
 * @example
 * await retryConflicts(ctx.conflictRetry, { operation: 'reserveBudget', runId }, () => send(command()));
 */
export const retryConflicts = async <T>(policy: ConflictRetry, context: LedgerErrorContext & { operation: string }, attempt: () => Promise<T>): Promise<T> => {
  for (let tries = 1; ; tries += 1) {
    try {
      return await attempt();
    } catch (error) {
      if (!isTransientConflict(error)) throw error;
      if (tries >= policy.attempts) throw new WriteConflict({ ...context, attempts: tries }, { cause: error });
      await pause(backoffMs(policy, tries));
    }
  }
};

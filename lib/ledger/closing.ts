/**
 * Ending a run: cancellation and the final status with its answer. Both first flip the run item
 * (so every later reservation and outcome is refused by its run condition), then give the unspent
 * rest of the run's block of the tenant's day allowance back to the day. Only `finishRun` then
 * sweeps the run's unfinished subtasks to `cancelled`: a cancel is answered inside the API's
 * request, so it writes the run item and the summary and nothing per subtask, and the sweep
 * happens when the run is closed with its answer (docs/architecture.md, "Cancelling a run").
 * Until then reads show a live subtask of a cancelled run as cancelled (`asRunDecides`). Completed
 * outcomes and reserved usage are untouched. Both are idempotent, so a crash is repaired by
 * simply calling again.
 */
import type { RunStatus } from '../contract';
import { ItemTooLarge, RunEnded, RunNotFound } from './errors';
import { cancellationReasons, conditionFailed, conditionFailure } from './failures';
import { needsParts, partPuts, partsPrefix, toParts } from './parts';
import { FinishRunInput, parseInput, RunRef } from './inputs';
import { iso, mapLimit, queryPartition, transact, updateItem, type LedgerContext } from './io';
import { parseItem, RunItem, StoredSubtaskItem as SubtaskItem, type ClosedBy } from './items';
import { runKey, SORT_KEYS } from './keys';
import { acrossShards, runShards } from './shards';
import { ANSWER_LIMIT_BYTES, valueSize } from './size';
import { isTerminal } from './view';
import { returnBlock } from './leases';
import { endSummary, markSummaryEnded } from './summary';

/**
 * Subtask updates in flight at once while sweeping a run as it closes (reconcile, after the
 * answer is stored): 10,000 subtasks at 32 at a time are about 310 rounds of one UpdateItem each,
 * around 2 s at DynamoDB's single-digit-millisecond writes, spread over the run's write shards.
 */
const SWEEP_CONCURRENCY = 32;

/** What ending a run did to its subtasks. */
export interface ClosedRun {
  readonly status: RunStatus;
  /** Subtasks this call moved to `cancelled`. */
  readonly cancelledSubtaskIds: readonly string[];
  /**
   * Task tokens of waiters on subtasks closed by this ending (including by an earlier, interrupted
   * call), for the caller to answer. Answering a token twice is harmless; missing one stalls a Map.
   */
  readonly taskTokens: readonly string[];
}

interface Sweep {
  readonly tenantId: string;
  readonly runId: string;
  readonly closedBy: ClosedBy;
  readonly nowIso: string;
}

const closeOne = async (ctx: LedgerContext, sweep: Sweep, item: SubtaskItem): Promise<SubtaskItem | undefined> => {
  const { closedBy, nowIso } = sweep;
  const context = { tenantId: sweep.tenantId, runId: sweep.runId, subtaskId: item.subtaskId };
  try {
    const after = await updateItem(
      ctx,
      { operation: 'closeSubtask', ...context },
      { pk: item.pk, sk: item.sk },
      { update: 'SET #state = :cancelled, #closedAt = :nowIso, #closedBy = :closedBy, #updatedAt = :nowIso', condition: '#state IN (:pending, :running)' },
      { ':cancelled': 'cancelled', ':nowIso': nowIso, ':closedBy': closedBy, ':pending': 'pending', ':running': 'running' },
    );
    return parseItem(SubtaskItem, after, context);
  } catch (error) {
    // It ended on its own meanwhile (an outcome or a seal won the race): leave it as it ended.
    if (conditionFailure(error) !== undefined) return undefined;
    throw error;
  }
};

/** Moves every unfinished subtask of the run to `cancelled`, recording who closed it. */
const closeUnfinished = async (ctx: LedgerContext, tenantId: string, runId: string, closedBy: ClosedBy): Promise<Omit<ClosedRun, 'status'>> => {
  const context = { tenantId, runId };
  // Every shard of the run (one partition for a small run), a few Queries at a time.
  const shards = await runShards(ctx, tenantId, runId);
  const images = await acrossShards(tenantId, runId, shards, (pk) => queryPartition(ctx, pk, SORT_KEYS.subtaskPrefix));
  const items = images.map((item) => parseItem(SubtaskItem, item, context));
  const sweep: Sweep = { tenantId, runId, closedBy, nowIso: iso(ctx.now()) };
  const closed = (
    await mapLimit(
      items.filter((item) => !isTerminal(item.state)),
      SWEEP_CONCURRENCY,
      (item) => closeOne(ctx, sweep, item),
    )
  ).filter((item): item is SubtaskItem => item !== undefined);
  const closedEarlier = items.filter((item) => item.state === 'cancelled' && item.closedBy !== undefined);
  const tokens = [...closed, ...closedEarlier].map((item) => item.taskToken).filter((token): token is string => token !== undefined);
  return { cancelledSubtaskIds: closed.map((item) => item.subtaskId), taskTokens: [...new Set(tokens)] };
};

/** What cancelling did: the run's status after the call, and whether its answer is already stored. */
export interface CancelledRun {
  readonly status: RunStatus;
  /** True when the run already carries its answer: nothing of it is still running. */
  readonly answered: boolean;
}

/**
 * Cancels a running run with one conditional write of its run item: from then on every
 * reservation and outcome of the run is refused (results are kept as late evidence), completed
 * outcomes stay and reserved usage stays charged. The unspent allowance block goes back to the
 * tenant's day and the run list shows the run cancelled. No subtask item is written: the run's
 * closing (`finishRun`) sweeps them, and reads show them cancelled meanwhile. Calling it again on
 * a cancelled run repeats the two follow-up writes; a run that already ended otherwise is
 * returned unchanged.
 */
export const cancelRun = async (ctx: LedgerContext, tenantIdRaw: string, runIdRaw: string): Promise<CancelledRun> => {
  const { tenantId, runId } = parseInput(RunRef, { tenantId: tenantIdRaw, runId: runIdRaw }, 'cancelRun');
  const context = { tenantId, runId };
  const nowIso = iso(ctx.now());
  let answered = false;
  try {
    await updateItem(
      ctx,
      { operation: 'cancelRun', ...context },
      runKey(tenantId, runId),
      { update: 'SET #status = :cancelled, #cancelledAt = :nowIso, #updatedAt = :nowIso', condition: 'attribute_exists(#pk) AND #status = :running' },
      { ':cancelled': 'cancelled', ':nowIso': nowIso, ':running': 'running' },
    );
  } catch (error) {
    const failure = conditionFailure(error);
    if (failure === undefined) throw error;
    if (failure.item === undefined) throw new RunNotFound(context, { cause: error });
    const run = parseItem(RunItem, failure.item, context);
    // `finishedAt` is written with the answer, whether the answer is inline or in parts.
    answered = run.finishedAt !== undefined;
    if (run.status !== 'cancelled') return { status: run.status, answered };
    // Already answered: the closing wrote everything, the summary included.
    if (answered) return { status: 'cancelled', answered };
  }
  await returnBlock(ctx, tenantId, runId);
  await markSummaryEnded(ctx, tenantId, runId);
  return { status: 'cancelled', answered };
};

type EndStatus = Exclude<RunStatus, 'running'>;

const CLOSED_BY_STATUS = { succeeded: 'run_succeeded', failed: 'run_failed', cancelled: 'run_cancelled' } as const satisfies Record<EndStatus, ClosedBy>;

type FinishInput = ReturnType<typeof FinishRunInput.parse>;

/** A refused final write: the run item as it was (`undefined` when there is none), and the SDK error. */
interface FinalRefused {
  readonly image: Record<string, unknown> | undefined;
  readonly cause: unknown;
}

/** Stores the status and answer if the run is in `expected`; otherwise returns the refusal. */
const storeFinal = async (ctx: LedgerContext, input: FinishInput, status: EndStatus, expected: RunStatus): Promise<FinalRefused | undefined> => {
  const nowIso = iso(ctx.now());
  const setError = input.error === undefined ? '' : ', #error = :error';
  const key = runKey(input.tenantId, input.runId);
  const op = { operation: 'finishRun', tenantId: input.tenantId, runId: input.runId };
  const condition = 'attribute_exists(#pk) AND #status = :expected';
  const values = { ':status': status, ':answer': input.answer, ':nowIso': nowIso, ':error': input.error, ':expected': expected };
  if (!needsParts(input.answer)) {
    try {
      await updateItem(
        ctx,
        op,
        key,
        { update: `SET #status = :status, #answer = :answer, #finishedAt = :nowIso, #updatedAt = :nowIso${setError}`, condition },
        values,
      );
      return undefined;
    } catch (error) {
      const failure = conditionFailure(error);
      if (failure === undefined) throw error;
      return { image: failure.item, cause: error };
    }
  }
  // A large answer (coverage naming thousands of ids) goes to parts, in the same transaction.
  const parts = toParts(key.pk, partsPrefix(key.sk, 'answer'), input.answer);
  const update = `SET #status = :status, #answerParts = :answerParts, #finishedAt = :nowIso, #updatedAt = :nowIso${setError}`;
  try {
    await transact(ctx, op, [{ kind: 'update', key, update, condition, values: { ...values, ':answerParts': parts.ref } }, ...partPuts(parts.parts)]);
    return undefined;
  } catch (error) {
    const [run] = cancellationReasons(error) ?? [];
    if (!conditionFailed(run)) throw error;
    return { image: run.item, cause: error };
  }
};

/**
 * Ends a run with its answer (whose coverage is never optional). Allowed while the run is
 * running; on a cancelled run the answer is stored and the status stays `cancelled`; a retry
 * with the same status is a no-op. Any subtask still unfinished is closed as `cancelled`, so every
 * dispatched subtask ends in exactly one terminal state. Ending an ended run with another status
 * throws `RunEnded`.
 */
export const finishRun = async (ctx: LedgerContext, raw: FinishRunInput): Promise<ClosedRun> => {
  const input = parseInput(FinishRunInput, raw, 'finishRun');
  const context = { tenantId: input.tenantId, runId: input.runId };
  const bytes = valueSize(input.answer);
  if (bytes > ANSWER_LIMIT_BYTES) throw new ItemTooLarge({ ...context, what: 'answer', bytes, limit: ANSWER_LIMIT_BYTES });
  let status: EndStatus = input.status;
  const refused = await storeFinal(ctx, input, input.status, 'running');
  if (refused !== undefined) {
    if (refused.image === undefined) throw new RunNotFound(context, { cause: refused.cause });
    const run = parseItem(RunItem, refused.image, context);
    if (run.status === 'cancelled') {
      const again = await storeFinal(ctx, input, 'cancelled', 'cancelled');
      if (again !== undefined) throw again.cause;
    } else if (run.status !== input.status) throw new RunEnded({ ...context, status: run.status }, { cause: refused.cause });
    status = run.status === 'cancelled' ? 'cancelled' : input.status;
  }
  await returnBlock(ctx, input.tenantId, input.runId);
  const closed = await closeUnfinished(ctx, input.tenantId, input.runId, CLOSED_BY_STATUS[status]);
  await endSummary(ctx, input.tenantId, input.runId, input.answer.coverage.complete);
  return { status, ...closed };
};

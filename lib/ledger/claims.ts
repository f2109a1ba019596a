/**
 * A subtask's lifecycle writes that touch only its own item: claim and release (leases and
 * generations), the waiter's task token, delivery failures, and the timeout seal. Each is one
 * conditional UpdateItem whose failure is explained from the old image, without a second read.
 */
import type { SubtaskState } from '../contract';
import { handoverDueMs } from '../domain/hedge';
import { AlreadyTerminal, ClaimHeld, DeadlineNotReached, DeadlinePassed, HandedOver, RunCancelled, type LedgerError } from './errors';
import { conditionFailure } from './failures';
import { claimContext, holderRefusal, oldSubtask } from './holder';
import { Claim, ClaimInput, DeliveryFailureInput, parseInput, SubtaskRef, WaiterInput } from './inputs';
import { getItem, iso, updateItem, type ExpressionParts, type LedgerContext } from './io';
import { parseItem, StoredSubtaskItem, SubtaskItem } from './items';
import { withParts } from './parts';
import { subtaskKey } from './keys';
import { runShards } from './shards';
import { describeSubtask, sealReason } from './reason';
import { isTerminal } from './view';
import { touchRun } from './summary';

type Ref = ReturnType<typeof SubtaskRef.parse>;

/** The subtask's key, in its shard (the ref's shard count, or the run's: see `runShards`). */
const keyOf = async (ctx: LedgerContext, ref: Ref) =>
  subtaskKey(ref.tenantId, ref.runId, ref.subtaskId, await runShards(ctx, ref.tenantId, ref.runId, ref.shards));

const LIVE = '#state IN (:pending, :running)';
const liveValues = { ':pending': 'pending', ':running': 'running' } as const;

/**
 * Runs a conditional update of a subtask item; on a failed condition hands the old image (or
 * `SubtaskNotFound`) to `refused`, which returns the operation's answer or throws its error.
 */
const updateSubtask = async <T>(
  ctx: LedgerContext,
  operation: string,
  ref: Ref,
  parts: ExpressionParts,
  values: Record<string, unknown>,
  refused: (old: StoredSubtaskItem, cause: unknown) => T,
): Promise<StoredSubtaskItem | { refused: T }> => {
  try {
    const after = await updateItem(ctx, { operation, ...claimContext(ref) }, await keyOf(ctx, ref), parts, values);
    return parseItem(StoredSubtaskItem, after, claimContext(ref));
  } catch (error) {
    const failure = conditionFailure(error);
    if (failure === undefined) throw error;
    return { refused: refused(oldSubtask(ref, failure.item), error) };
  }
};

const isItem = (value: StoredSubtaskItem | { refused: unknown }): value is StoredSubtaskItem => !('refused' in value);

const claimRefusal = (ref: Ref, old: StoredSubtaskItem, now: number, cause: unknown): LedgerError => {
  const context = claimContext(ref);
  if (old.state === 'cancelled') return new RunCancelled(context, { cause });
  if (isTerminal(old.state)) return new AlreadyTerminal({ ...context, state: old.state }, { cause });
  if (old.deadlineMs <= now) return new DeadlinePassed({ ...context, deadline: iso(old.deadlineMs) }, { cause });
  // Handed over to its hedge pieces: no generation may read it again (the pieces read the rest).
  if (old.handedOverAt !== undefined) return new HandedOver({ ...context, handedOverAt: old.handedOverAt }, { cause });
  return new ClaimHeld({ ...context, generation: old.generation, leaseExpiresAt: iso(old.leaseExpiresAt ?? now), workerId: old.workerId }, { cause });
};

/**
 * Claims a subtask for one delivery: allowed when it is pending, or running under an expired
 * lease (its holder is presumed dead). Every claim increments the generation, which fences off
 * all earlier holders. A claim retried by the SDK after a lost response matches its own claim id.
 */
export const claimSubtask = async (ctx: LedgerContext, raw: ClaimInput): Promise<Claim> => {
  const parsed = parseInput(ClaimInput, raw, 'claimSubtask');
  const input = { ...parsed, shards: await runShards(ctx, parsed.tenantId, parsed.runId, parsed.shards) };
  const now = ctx.now();
  const result = await updateSubtask(
    ctx,
    'claimSubtask',
    input,
    {
      update:
        'SET #state = :running, #generation = #generation + :one, #workerId = :worker, #claimId = :claim, #claimedAt = :nowIso, #leaseExpiresAt = :lease, #updatedAt = :nowIso REMOVE #releasedAt',
      condition:
        'attribute_exists(#pk) AND #deadlineMs > :now AND attribute_not_exists(#handedOverAt) ' +
        'AND (#state = :pending OR (#state = :running AND (#leaseExpiresAt <= :now OR #claimId = :claim)))',
    },
    { ...liveValues, ':one': 1, ':worker': input.workerId, ':claim': ctx.newId(), ':nowIso': iso(now), ':lease': now + input.leaseMs, ':now': now },
    (old, cause) => claimRefusal(input, old, now, cause),
  );
  if (!isItem(result)) throw result.refused;
  await touchRun(ctx, input.tenantId, input.runId);
  // A large assignment is stored in parts; the holder needs all of it.
  const assignment = result.assignment ?? (await hydratedSubtask(ctx, input, result)).assignment;
  const handoverDue = handoverDueMs(assignment, Date.parse(result.dispatchedAt), result.deadlineMs, result.hedgeStartedAt !== undefined);
  return {
    tenantId: input.tenantId,
    runId: input.runId,
    subtaskId: input.subtaskId,
    workerId: input.workerId,
    generation: result.generation,
    leaseExpiresAt: iso(result.leaseExpiresAt ?? now),
    deadline: iso(result.deadlineMs),
    subtask: assignment,
    ...(result.checkpoint === undefined ? {} : { checkpoint: result.checkpoint }),
    ...(handoverDue === undefined ? {} : { handoverDueAt: iso(handoverDue) }),
    // The holder's writes find the item without reading the run again.
    ...(input.shards > 1 ? { shards: input.shards } : {}),
  };
};

/**
 * Gives a claim back before its lease runs out (the worker is shutting down, or hit a transient
 * failure), so the next delivery can claim at once instead of waiting for the lease. Only the
 * current generation may release; releasing twice is a no-op.
 */
export const releaseClaim = async (ctx: LedgerContext, raw: Claim): Promise<void> => {
  const claim = parseInput(Claim, raw, 'releaseClaim');
  const now = ctx.now();
  const result = await updateSubtask(
    ctx,
    'releaseClaim',
    claim,
    {
      update: 'SET #state = :pending, #releasedAt = :nowIso, #leaseExpiresAt = :now, #updatedAt = :nowIso',
      condition: 'attribute_exists(#pk) AND #generation = :generation AND #state = :running AND attribute_not_exists(#handedOverAt)',
    },
    { ...liveValues, ':generation': claim.generation, ':nowIso': iso(now), ':now': now },
    (old) => {
      const alreadyReleased = old.generation === claim.generation && old.state === 'pending' && old.releasedAt !== undefined;
      return alreadyReleased ? undefined : holderRefusal(claim, old);
    },
  );
  if (!isItem(result) && result.refused !== undefined) throw result.refused;
  if (isItem(result)) await touchRun(ctx, claim.tenantId, claim.runId);
};

/** The result of `registerWaiter`. */
export type WaiterRegistration = { readonly registered: true } | { readonly registered: false; readonly state: SubtaskState };

/**
 * Stores the state machine's task token on a live subtask, so that whoever ends the subtask
 * (outcome, seal, cancel) gets it back and can answer it. If the subtask has already ended, the
 * token is not stored and the ended state is returned: the caller answers its own token.
 */
export const registerWaiter = async (ctx: LedgerContext, raw: WaiterInput): Promise<WaiterRegistration> => {
  const input = parseInput(WaiterInput, raw, 'registerWaiter');
  const result = await updateSubtask(
    ctx,
    'registerWaiter',
    input,
    { update: 'SET #taskToken = :token, #updatedAt = :nowIso', condition: `attribute_exists(#pk) AND ${LIVE}` },
    { ...liveValues, ':token': input.taskToken, ':nowIso': iso(ctx.now()) },
    (old): WaiterRegistration => ({ registered: false, state: old.state }),
  );
  return isItem(result) ? { registered: true } : result.refused;
};

/**
 * Remembers the last failed delivery of a live subtask (receive count, error, dead-lettered), so
 * that a later seal can say why nothing arrived. Ended subtasks are left alone.
 */
export const recordDeliveryFailure = async (
  ctx: LedgerContext,
  raw: DeliveryFailureInput,
): Promise<{ readonly recorded: boolean; readonly state: SubtaskState }> => {
  const input = parseInput(DeliveryFailureInput, raw, 'recordDeliveryFailure');
  const nowIso = iso(ctx.now());
  const failure = {
    receiveCount: input.receiveCount,
    errorName: input.errorName,
    at: nowIso,
    ...(input.deadLettered === undefined ? {} : { deadLettered: input.deadLettered }),
  };
  const result = await updateSubtask(
    ctx,
    'recordDeliveryFailure',
    input,
    { update: 'SET #lastDeliveryFailure = :failure, #updatedAt = :nowIso', condition: `attribute_exists(#pk) AND ${LIVE}` },
    { ...liveValues, ':failure': failure, ':nowIso': nowIso },
    (old) => ({ recorded: false, state: old.state }),
  );
  return isItem(result) ? { recorded: true, state: result.state } : result.refused;
};

/** The result of `sealTimedOut`. */
export interface SealResult {
  /** True when this call moved the subtask to `timed_out`. */
  readonly sealed: boolean;
  /** The subtask's state after the call: `timed_out`, or whatever it had already ended as. */
  readonly state: SubtaskState;
  readonly reason: string | undefined;
  /** The registered waiter's token, for the caller to answer if it is not the waiter itself. */
  readonly taskToken: string | undefined;
}

/**
 * Seals a live subtask `timed_out` once its absolute deadline has passed. The reason is rendered
 * from what the item knows (never claimed, claimed by generation g, delivery failures). A
 * subtask that already ended keeps its state (`sealed: false`); a seal before the deadline
 * throws `DeadlineNotReached`, because `timed_out` must mean the deadline passed.
 */
export const sealTimedOut = async (ctx: LedgerContext, raw: SubtaskRef): Promise<SealResult> => {
  const ref = parseInput(SubtaskRef, raw, 'sealTimedOut');
  const now = ctx.now();
  const result = await updateSubtask(
    ctx,
    'sealTimedOut',
    ref,
    { update: 'SET #state = :timedOut, #sealedAt = :nowIso, #updatedAt = :nowIso', condition: `attribute_exists(#pk) AND ${LIVE} AND #deadlineMs <= :now` },
    { ...liveValues, ':timedOut': 'timed_out', ':nowIso': iso(now), ':now': now },
    (old, cause): SealResult => {
      if (!isTerminal(old.state)) throw new DeadlineNotReached({ ...claimContext(ref), deadline: iso(old.deadlineMs) }, { cause });
      return { sealed: false, state: old.state, reason: describeSubtask(old), taskToken: old.taskToken };
    },
  );
  if (!isItem(result)) return result.refused;
  await touchRun(ctx, ref.tenantId, ref.runId);
  return { sealed: true, state: result.state, reason: sealReason(result), taskToken: result.taskToken };
};

/**
 * One subtask as stored, or `undefined`. The Map's arm step uses it to decide between done,
 * seal now, or wait until the deadline.
 */
export const getSubtask = async (ctx: LedgerContext, raw: SubtaskRef): Promise<SubtaskItem | undefined> => {
  const ref = parseInput(SubtaskRef, raw, 'getSubtask');
  const item = await getItem(ctx, await keyOf(ctx, ref));
  return item === undefined ? undefined : parseItem(SubtaskItem, await withParts(ctx, item, claimContext(ref)), claimContext(ref));
};

/** A stored subtask with its parts read back. */
const hydratedSubtask = async (ctx: LedgerContext, ref: Ref, item: StoredSubtaskItem): Promise<SubtaskItem> =>
  parseItem(SubtaskItem, await withParts(ctx, item, claimContext(ref)), claimContext(ref));

/**
 * Hedged subtasks in the ledger. A due hedge writes its copies (replicas or pieces) as subtask
 * items of their own (`SUB#<id>.h<n>`, with `hedgeOf`), so each has its own claims, generations
 * and leases; but none has an allowance of its own (limits 0): every copy reserves from the
 * hedged subtask's one allowance, in the same transaction that checks the copy's claim. The first
 * complete cover ends the hedged subtask in the same transaction as the copy's own outcome, and
 * from then on every other copy (and the original) is refused with `HedgeLost` at its next write.
 * Copies are kept apart from the manifest: they are not subtasks of a round.
 */
import type { DispatchedSubtask, SubtaskState } from '../contract';
import { firstCompleteCover, hedgeCopies } from '../domain/hedge';
import { contentHash } from './canonical';
import { DeadlinePassed, HedgeLost, InvalidLedgerInput, RunCancelled, RunEnded, RunNotFound, SubtaskNotFound, type LedgerError } from './errors';
import { cancellationReasons, conditionFailed, type CancellationReason } from './failures';
import { claimContext, holderRefusal, oldSubtask, winnerName } from './holder';
import { parseInput, SubtaskRef, type Claim } from './inputs';
import { getItem, iso, transact, type LedgerContext, type LedgerTransactItem } from './io';
import { parseItem, RunItem, StoredSubtaskItem, SubtaskItem, type HedgeWinnerItem, type StoredOutcome } from './items';
import { runKey, subtaskKey } from './keys';
import { withShards } from './shards';
import { partPuts, partsPrefix, spill, withParts, type PartsRef } from './parts';
import { touchRun } from './summary';
import { isTerminal } from './view';

/** What `startHedge` did. */
export interface StartedHedge {
  /** True when this call wrote the copies; false when an earlier call had, or there was nothing to start. */
  readonly written: boolean;
  /** The copies to enqueue (the same list on a retried call), empty when the race cannot start. */
  readonly copies: readonly DispatchedSubtask[];
  /** The hedged subtask's state as this call found it. */
  readonly state: SubtaskState;
}

const LIVE = '#state IN (:pending, :running)';
const liveValues = { ':pending': 'pending', ':running': 'running' } as const;

/** The subtask a copy races, from its immutable assignment; `undefined` for a subtask that is no copy. */
export const hedgedSubtaskOf = (assignment: DispatchedSubtask): string | undefined =>
  assignment.lineage?.kind === 'hedge' ? assignment.lineage.of : undefined;

const copyItem = (ref: ReturnType<typeof SubtaskRef.parse>, parent: SubtaskItem, assignment: DispatchedSubtask, nowMs: number): SubtaskItem => ({
  ...subtaskKey(ref.tenantId, ref.runId, assignment.id, ref.shards),
  entity: 'subtask',
  subtaskId: assignment.id,
  round: parent.round,
  position: parent.position,
  assignment,
  assignmentHash: contentHash(assignment),
  dispatchedAt: iso(nowMs),
  deadlineMs: parent.deadlineMs,
  // No allowance of its own: a copy spends the hedged subtask's.
  costPerCall: parent.costPerCall,
  callsLimit: 0,
  costLimit: 0,
  callsLeft: 0,
  costLeft: 0,
  state: 'pending',
  generation: 0,
  hedgeOf: parent.subtaskId,
  updatedAt: iso(nowMs),
});

const readSubtask = async (ctx: LedgerContext, ref: ReturnType<typeof SubtaskRef.parse>): Promise<SubtaskItem | undefined> => {
  const item = await getItem(ctx, subtaskKey(ref.tenantId, ref.runId, ref.subtaskId, ref.shards));
  return item === undefined ? undefined : parseItem(SubtaskItem, await withParts(ctx, item, claimContext(ref)), claimContext(ref));
};

const runRefusal = (context: ReturnType<typeof claimContext>, image: Record<string, unknown> | undefined, cause: unknown): LedgerError => {
  if (image === undefined) return new RunNotFound(context, { cause });
  const run = parseItem(RunItem, image, context);
  return run.status === 'cancelled' ? new RunCancelled(context, { cause }) : new RunEnded({ ...context, status: run.status }, { cause });
};

/**
 * The copies of a hedged subtask as its race started (or would start now): a `subdivide` hedge
 * whose original handed over is cut from the checkpoint the handover froze (`hedgeCopies` with
 * it), so a retried call returns exactly the copies the first one wrote.
 */
const copiesOf = (item: SubtaskItem, handover: boolean): DispatchedSubtask[] => hedgeCopies(item.assignment, handover ? item.checkpoint : undefined);

/** True when the copies are pieces of the rest after a prefix the original hands over. */
const handsOver = (copies: readonly DispatchedSubtask[]): boolean => {
  const [first] = copies;
  return first?.lineage?.kind === 'hedge' && first.lineage.prefix !== undefined;
};

/** Attempts of `startHedge` when the original's generation or checkpoint moved between its read and its write. */
const START_ATTEMPTS = 8;

/**
 * Starts a hedged subtask's race, once: writes its copies (`hedgeCopies`: replicas of the same
 * assignment, or pieces) and marks the subtask `hedgeStartedAt`, in one transaction that requires
 * the subtask live, before its deadline, and its run running. A retried call returns the same
 * copies without writing (so they can be enqueued again: a duplicate message is harmless, claims
 * fence it). A subtask that ended, passed its deadline or declares no hedge starts nothing
 * (`copies: []`).
 *
 * **Handover.** When a `subdivide` subtask's stored checkpoint carries partial findings that
 * split its scope (`hedgeCut`), the original hands over in the same transaction: the update also
 * sets `handedOverAt`, conditional on the generation and checkpoint sequence it read, so the
 * prefix is exactly that checkpoint and a stale read never lands (the call reads again and
 * retries). From then on the checkpoint is frozen and every write of the original (claim,
 * reservation, checkpoint, outcome) is refused (`HandedOver`, or `handedOver: true` for a
 * checkpoint), and the pieces tile only the rest. Without such a checkpoint the pieces tile the
 * whole scope and the original races on, as without checkpoints. The handover costs no request
 * of its own: it rides on the start's transaction.
 */
export const startHedge = async (ctx: LedgerContext, raw: SubtaskRef): Promise<StartedHedge> => {
  const ref = await withShards(ctx, parseInput(SubtaskRef, raw, 'startHedge'));
  const context = claimContext(ref);
  for (let attempt = 1; ; attempt += 1) {
    const parent = await readSubtask(ctx, ref);
    if (parent === undefined) throw new SubtaskNotFound(context);
    if (parent.hedgeOf !== undefined)
      throw new InvalidLedgerInput({ ...context, operation: 'startHedge', issues: [`subtask ${ref.subtaskId} is itself a hedge copy of ${parent.hedgeOf}`] });
    if (parent.hedgeStartedAt !== undefined) return { written: false, copies: copiesOf(parent, parent.handedOverAt !== undefined), state: parent.state };
    const now = ctx.now();
    const copies = copiesOf(parent, true);
    if (copies.length === 0 || isTerminal(parent.state) || parent.deadlineMs <= now) return { written: false, copies: [], state: parent.state };
    const handover = handsOver(copies);
    const puts = copies.map((copy) => {
      const item = copyItem(ref, parent, copy, now);
      return spill<Record<string, unknown> & { pk: string }>(item, ['assignment'], (name) => partsPrefix(item.sk, name));
    });
    try {
      await transact(ctx, { operation: 'startHedge', ...context }, [
        {
          kind: 'update',
          key: subtaskKey(ref.tenantId, ref.runId, ref.subtaskId, ref.shards),
          update: `SET #hedgeStartedAt = :nowIso, #updatedAt = :nowIso${handover ? ', #handedOverAt = :nowIso' : ''}`,
          condition: `attribute_exists(#pk) AND ${LIVE} AND #deadlineMs > :now AND attribute_not_exists(#hedgeStartedAt)${
            handover ? ' AND #generation = :generation AND #checkpointSequence = :sequence' : ''
          }`,
          values: { ...liveValues, ':nowIso': iso(now), ':now': now, ':generation': parent.generation, ':sequence': parent.checkpointSequence },
        },
        { kind: 'check', key: runKey(ref.tenantId, ref.runId), condition: 'attribute_exists(#pk) AND #status = :running', values: { ':running': 'running' } },
        ...puts.flatMap((put): LedgerTransactItem[] => [{ kind: 'put', item: put.item, condition: 'attribute_not_exists(#pk)' }, ...partPuts(put.parts)]),
      ]);
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (reasons === undefined) throw error;
      const [subReason, runReason] = reasons;
      if (conditionFailed(runReason)) throw runRefusal(context, runReason.item, error);
      if (!conditionFailed(subReason)) throw error;
      const old = oldSubtask(ref, subReason.item);
      // Another call started the race first: same copies, nothing more to write.
      if (old.hedgeStartedAt !== undefined) {
        const frozen = old.handedOverAt === undefined ? undefined : old.checkpoint;
        return { written: false, copies: hedgeCopies(parent.assignment, frozen), state: old.state };
      }
      // The original moved on (a new checkpoint, a new generation) since the read: cut again from what it has now.
      const moved = handover && (old.generation !== parent.generation || old.checkpointSequence !== parent.checkpointSequence);
      if (moved && !isTerminal(old.state) && old.deadlineMs > now && attempt < START_ATTEMPTS) continue;
      return { written: false, copies: [], state: old.state };
    }
    await touchRun(ctx, ref.tenantId, ref.runId);
    return { written: true, copies, state: parent.state };
  }
};

/** The claim of a hedge copy with the subtask it races. */
interface CopyCharge {
  readonly claim: Claim;
  readonly hedgedId: string;
  readonly cost: number;
  readonly now: number;
}

/**
 * The two transaction items a copy's reservation adds in place of the subtask's own: the copy's
 * claim is checked (current generation, running, live lease, deadline), and the hedged subtask's
 * counters are charged while it is live, at the cost per call fixed at its dispatch.
 */
export const copyReservationItems = ({ claim, hedgedId, cost, now }: CopyCharge): LedgerTransactItem[] => [
  {
    kind: 'check',
    key: subtaskKey(claim.tenantId, claim.runId, claim.subtaskId, claim.shards),
    condition: 'attribute_exists(#pk) AND #generation = :generation AND #state = :running AND #leaseExpiresAt > :now AND #deadlineMs > :now',
    values: { ':generation': claim.generation, ':running': 'running', ':now': now },
  },
  {
    kind: 'update',
    key: subtaskKey(claim.tenantId, claim.runId, hedgedId, claim.shards),
    update: 'SET #callsLeft = #callsLeft - :one, #costLeft = #costLeft - :cost, #updatedAt = :nowIso',
    condition: `attribute_exists(#pk) AND ${LIVE} AND #deadlineMs > :now AND #costPerCall = :cost AND #callsLeft >= :one AND #costLeft >= :cost`,
    values: { ...liveValues, ':one': 1, ':cost': cost, ':nowIso': iso(now), ':now': now },
  },
];

/** The name of whoever ended a hedged subtask: its stored winner, or the original when it ended `ok` itself. */
const endedBy = (item: StoredSubtaskItem): string | undefined =>
  item.hedgeWinner !== undefined ? winnerName(item.hedgeWinner) : item.state === 'ok' && item.outcomeGeneration !== undefined ? item.subtaskId : undefined;

/** Why the hedged subtask refused a copy's write: the race is over, or its deadline passed; `undefined` otherwise. */
export const hedgedRefusal = (claim: Claim, image: Record<string, unknown> | undefined, now: number, cause: unknown): LedgerError | undefined => {
  const context = claimContext(claim);
  const hedged = oldSubtask({ ...claim, subtaskId: hedgedSubtaskOf(claim.subtask) ?? claim.subtaskId }, image);
  if (isTerminal(hedged.state)) return new HedgeLost({ ...context, state: hedged.state, winner: endedBy(hedged) }, { cause });
  if (hedged.deadlineMs <= now) return new DeadlinePassed({ ...context, deadline: iso(hedged.deadlineMs) }, { cause });
  return undefined;
};

/** Why a copy's own claim was refused (stale, ended, deadline), from its old image. */
export const copyClaimRefusal = (claim: Claim, image: Record<string, unknown> | undefined, now: number, cause: unknown): LedgerError | undefined => {
  const copy = oldSubtask(claim, image);
  const holder = holderRefusal(claim, copy);
  if (holder !== undefined) return holder;
  if (copy.deadlineMs <= now) return new DeadlinePassed({ ...claimContext(claim), deadline: iso(copy.deadlineMs) }, { cause });
  return undefined;
};

/** What a copy's outcome does to the hedged subtask. */
interface HedgedEffect {
  readonly item: LedgerTransactItem;
  /** True when this outcome completes the cover and ends the hedged subtask. */
  readonly wins: boolean;
}

interface CopyOutcome {
  readonly claim: Claim;
  readonly hedged: SubtaskItem;
  readonly state: StoredOutcome['state'];
  readonly outcome: StoredOutcome;
  readonly parts: PartsRef | undefined;
  readonly now: number;
}

/**
 * The hedged subtask's side of a copy's outcome. A non-ok result covers nothing: the subtask must
 * only still be live. A replica's `ok` ends it `ok` with the replica's outcome. A piece's `ok` is
 * appended to `piecesOk` (conditional on the count read before, so concurrent pieces serialise);
 * the piece that completes the cover ends it `ok`, won by every piece.
 */
const hedgedEffect = ({ claim, hedged, state, outcome, parts, now }: CopyOutcome): HedgedEffect => {
  const key = subtaskKey(claim.tenantId, claim.runId, hedged.subtaskId, claim.shards);
  const live = `attribute_exists(#pk) AND ${LIVE} AND #deadlineMs > :now`;
  const base = { ...liveValues, ':now': now, ':nowIso': iso(now) };
  if (state !== 'ok') return { item: { kind: 'check', key, condition: live, values: base }, wins: false };
  const lineage = claim.subtask.lineage;
  const mode = lineage?.kind === 'hedge' ? lineage.mode : 'replicate';
  const outcomeAttribute = parts === undefined ? '#outcome = :outcome' : '#outcomeParts = :outcomeParts';
  if (mode === 'replicate') {
    const winner: HedgeWinnerItem = { by: 'replica', id: claim.subtaskId };
    return {
      item: {
        kind: 'update',
        key,
        update: `SET #state = :ok, ${outcomeAttribute}, #hedgeWinner = :winner, #finishedAt = :nowIso, #updatedAt = :nowIso`,
        condition: live,
        values: { ...base, ':ok': 'ok', ':outcome': outcome, ':outcomeParts': parts, ':winner': winner },
      },
      wins: true,
    };
  }
  const before = hedged.piecesOk ?? [];
  const after = [...before, claim.subtaskId];
  const results = after.map((id) => ({ id, state: 'ok' as const }));
  const cover = firstCompleteCover(hedged.assignment, results);
  const counted = before.length === 0 ? 'attribute_not_exists(#piecesOk)' : 'size(#piecesOk) = :counted';
  const ends = cover?.by === 'pieces' ? ', #state = :ok, #hedgeWinner = :winner, #finishedAt = :nowIso' : '';
  return {
    item: {
      kind: 'update',
      key,
      update: `SET #piecesOk = :after, #updatedAt = :nowIso${ends}`,
      condition: `${live} AND ${counted}`,
      values: { ...base, ':after': after, ':counted': before.length, ':ok': 'ok', ':winner': cover },
    },
    wins: cover !== undefined,
  };
};

/** The result of a copy's outcome write. */
export interface RecordedCopyOutcome {
  /** The hedged subtask's waiter token when this outcome ended its race (the worker answers it). */
  readonly taskToken: string | undefined;
  readonly duplicate: boolean;
}

/**
 * Records a hedge copy's outcome: the copy ends in its state, and the hedged subtask is updated
 * by `hedgedEffect`, in one transaction with a check that the run is running. Refusals:
 * `HedgeLost` (the race was already won or the subtask ended), `LeaseLost`, `DeadlinePassed`,
 * `RunCancelled`, `RunEnded`. A copy's refused result is not kept as late evidence: the
 * subtask's own outcome (or its winner's) is the authority. Pieces that finish together are
 * serialised by the `piecesOk` count, retried a few times.
 */
export const recordCopyOutcome = async (
  ctx: LedgerContext,
  claim: Claim,
  outcome: StoredOutcome,
  parts: { readonly ref: PartsRef; readonly items: readonly LedgerTransactItem[] } | undefined,
): Promise<RecordedCopyOutcome> => {
  const hedgedId = hedgedSubtaskOf(claim.subtask);
  const context = claimContext(claim);
  if (hedgedId === undefined) throw new InvalidLedgerInput({ ...context, operation: 'recordOutcome', issues: ['the claim is not of a hedge copy'] });
  const hedgedRef = { tenantId: claim.tenantId, runId: claim.runId, subtaskId: hedgedId, shards: claim.shards };
  const outcomeAttribute = parts === undefined ? '#outcome = :outcome' : '#outcomeParts = :outcomeParts';
  for (let attempt = 1; ; attempt += 1) {
    const hedged = await readSubtask(ctx, hedgedRef);
    if (hedged === undefined) throw new SubtaskNotFound({ ...context, subtaskId: hedgedId });
    const now = ctx.now();
    const effect = hedgedEffect({ claim, hedged, state: outcome.state, outcome, parts: parts?.ref, now });
    try {
      await transact(ctx, { operation: 'recordOutcome', ...context }, [
        {
          kind: 'update',
          key: subtaskKey(claim.tenantId, claim.runId, claim.subtaskId, claim.shards),
          update: `SET #state = :state, ${outcomeAttribute}, #outcomeGeneration = :generation, #finishedAt = :nowIso, #updatedAt = :nowIso`,
          condition: 'attribute_exists(#pk) AND #generation = :generation AND #state = :running AND #deadlineMs > :now',
          values: {
            ':state': outcome.state,
            ':outcome': outcome,
            ':outcomeParts': parts?.ref,
            ':generation': claim.generation,
            ':nowIso': iso(now),
            ':running': 'running',
            ':now': now,
          },
        },
        {
          kind: 'check',
          key: runKey(claim.tenantId, claim.runId),
          condition: 'attribute_exists(#pk) AND #status = :running',
          values: { ':running': 'running' },
        },
        effect.item,
        ...(parts?.items ?? []),
      ]);
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (reasons === undefined) throw error;
      const retry = await refusedCopyOutcome(ctx, claim, reasons, now, error);
      if (retry === 'retry' && attempt < 8) continue;
      if (retry === 'retry') throw error;
      return retry;
    }
    await touchRun(ctx, claim.tenantId, claim.runId);
    if (!effect.wins) return { taskToken: undefined, duplicate: false };
    const after = await readSubtask(ctx, hedgedRef);
    return { taskToken: after?.taskToken, duplicate: false };
  }
};

/** Explains a refused copy outcome: a duplicate (answered), a lost race or ended run (thrown), or a piece count that moved (`'retry'`). */
const refusedCopyOutcome = async (
  ctx: LedgerContext,
  claim: Claim,
  reasons: readonly CancellationReason[],
  now: number,
  cause: unknown,
): Promise<RecordedCopyOutcome | 'retry'> => {
  const [copyReason, runReason, hedgedReason] = reasons;
  const context = claimContext(claim);
  if (conditionFailed(copyReason)) {
    const copy = oldSubtask(claim, copyReason.item);
    if (isTerminal(copy.state) && copy.outcomeGeneration === claim.generation) return { taskToken: undefined, duplicate: true };
    const refusal = copyClaimRefusal(claim, copyReason.item, now, cause);
    if (refusal !== undefined) throw refusal;
  }
  if (conditionFailed(runReason)) throw runRefusal(context, runReason.item, cause);
  if (conditionFailed(hedgedReason)) {
    const refusal = hedgedRefusal(claim, hedgedReason.item, now, cause);
    if (refusal !== undefined) throw refusal;
    return 'retry';
  }
  throw cause;
};

/**
 * The copies of hedged subtasks among a run's subtask items, apart from the manifest.
 *
 * @example
 * const { subtasks, copies } = splitCopies(items);
 */
export const splitCopies = <T extends { readonly hedgeOf?: string | undefined }>(items: readonly T[]): { subtasks: T[]; copies: T[] } => ({
  subtasks: items.filter((item) => item.hedgeOf === undefined),
  copies: items.filter((item) => item.hedgeOf !== undefined),
});

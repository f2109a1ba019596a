/**
 * Recording a worker's outcome. The write is one transaction: the subtask moves from `running`
 * to its terminal state only for the current generation and before the deadline, and a
 * ConditionCheck on the run item makes a cancelled or ended run refuse it even before the
 * cancellation has reached this subtask. A refused result that is still evidence (sealed,
 * cancelled, past the deadline) is kept as a separate late-evidence item; the sealed state never
 * changes. A stale generation's result is not kept: its replacement is the authority.
 */
import { Outcome, type LateEvidence, type OutcomeInput } from '../contract';
import { toPlainJson } from './canonical';
import {
  AlreadySealed,
  DeadlinePassed,
  HandedOver,
  HedgeLost,
  InvalidLedgerInput,
  LeaseLost,
  RunCancelled,
  RunEnded,
  RunNotFound,
  type LedgerError,
} from './errors';
import { cancellationReasons, conditionFailed, conditionFailure, type CancellationReason } from './failures';
import { hedgedSubtaskOf, recordCopyOutcome } from './hedges';
import { claimContext, holderRefusal, oldSubtask } from './holder';
import { Claim, parseInput } from './inputs';
import { getItem, iso, putNew, transact, type LedgerContext } from './io';
import { touchRun } from './summary';
import { parseItem, RunItem, toStoredOutcome, type StoredSubtaskItem as SubtaskItem, type LateItem } from './items';
import { lateKey, runKey, subtaskKey } from './keys';
import { withShards } from './shards';
import { boundOutcome } from './size';
import { needsParts, partPuts, partsPrefix, spill, toParts } from './parts';
import { isTerminal, subtaskUsage } from './view';

/** The result of `recordOutcome`. */
export interface RecordedOutcome {
  /** The waiter's task token if one was registered: the worker answers it (`SendTaskSuccess`). */
  readonly taskToken: string | undefined;
  /** True when this generation's outcome was already recorded (a retried or duplicated write). */
  readonly duplicate: boolean;
}

const parseOutcome = (claim: Claim, raw: OutcomeInput): Outcome => {
  const outcome = parseInput(Outcome, raw, 'recordOutcome');
  if (outcome.subtaskId !== claim.subtaskId) {
    throw new InvalidLedgerInput({
      ...claimContext(claim),
      operation: 'recordOutcome',
      issues: [`outcome.subtaskId ${outcome.subtaskId} is not the claimed subtask ${claim.subtaskId}`],
    });
  }
  return boundOutcome({ ...outcome, findings: toPlainJson(outcome.findings) });
};

type LateReason = LateEvidence['refusedBecause'];

interface Refused {
  readonly because: LateReason;
  readonly error: (kept: boolean) => LedgerError;
}

/** Why a result of the current generation is refused but still worth keeping. */
const lateRefusal = (claim: Claim, sub: SubtaskItem | undefined, run: RunItem | undefined, now: number, cause: unknown): Refused | undefined => {
  const context = claimContext(claim);
  if (sub?.state === 'cancelled' || run?.status === 'cancelled') {
    return { because: 'cancelled', error: (kept) => new RunCancelled({ ...context, keptAsLateEvidence: kept }, { cause }) };
  }
  if (sub !== undefined && isTerminal(sub.state)) {
    return {
      because: 'sealed',
      error: (kept) => new AlreadySealed({ ...context, state: sub.state, generation: claim.generation, keptAsLateEvidence: kept }, { cause }),
    };
  }
  if (sub !== undefined && sub.deadlineMs <= now) {
    return {
      because: 'deadline_passed',
      error: (kept) => new DeadlinePassed({ ...context, deadline: iso(sub.deadlineMs), keptAsLateEvidence: kept }, { cause }),
    };
  }
  if (run !== undefined && run.status !== 'running') {
    const status = run.status;
    return { because: 'run_ended', error: (kept) => new RunEnded({ ...context, status, keptAsLateEvidence: kept }, { cause }) };
  }
  return undefined;
};

/** Keeps a refused result as late evidence, once per generation (a repeat is a no-op). */
const keepLate = async (ctx: LedgerContext, claim: Claim, outcome: Outcome, because: LateReason, usageFrom: SubtaskItem): Promise<void> => {
  const item: LateItem = {
    ...lateKey(claim.tenantId, claim.runId, claim.subtaskId, claim.generation, claim.shards),
    entity: 'late',
    subtaskId: claim.subtaskId,
    receivedAt: iso(ctx.now()),
    generation: claim.generation,
    refusedBecause: because,
    outcome: { ...outcome, usage: subtaskUsage(usageFrom) },
  };
  const stored = spill<Record<string, unknown> & { pk: string }>(item, ['outcome'], (name) => partsPrefix(item.sk, name));
  try {
    if (stored.parts.length === 0) await putNew(ctx, item);
    else
      await transact(ctx, { operation: 'recordOutcome', ...claimContext(claim) }, [
        { kind: 'put', item: stored.item, condition: 'attribute_not_exists(#pk)' },
        ...partPuts(stored.parts),
      ]);
  } catch (error) {
    if (conditionFailure(error) === undefined && !conditionFailed(cancellationReasons(error)?.[0])) throw error;
  }
};

const currentSubtask = async (ctx: LedgerContext, claim: Claim): Promise<SubtaskItem> => {
  const item = await getItem(ctx, subtaskKey(claim.tenantId, claim.runId, claim.subtaskId, claim.shards));
  return oldSubtask(claim, item);
};

/** Explains a cancelled outcome write: a duplicate (answered), stale (thrown) or late (kept, then thrown). */
const refusedOutcome = async (
  ctx: LedgerContext,
  claim: Claim,
  outcome: Outcome,
  reasons: readonly CancellationReason[],
  now: number,
  cause: unknown,
): Promise<RecordedOutcome> => {
  const [subReason, runReason] = reasons;
  const context = claimContext(claim);
  const sub = conditionFailed(subReason) ? oldSubtask(claim, subReason.item) : undefined;
  if (conditionFailed(runReason) && runReason.item === undefined) throw new RunNotFound(context, { cause });
  const run = conditionFailed(runReason) ? parseItem(RunItem, runReason.item, context) : undefined;
  if (sub !== undefined && isTerminal(sub.state) && sub.outcomeGeneration === claim.generation) {
    return { taskToken: sub.taskToken, duplicate: true };
  }
  const stale = sub === undefined ? undefined : holderRefusal(claim, sub);
  // A hedge copy won the race: the original's result is not needed (its spend stays charged).
  if (stale instanceof LeaseLost || stale instanceof HedgeLost || stale instanceof HandedOver) throw stale;
  const late = lateRefusal(claim, sub, run, now, cause);
  if (late === undefined) throw cause;
  await keepLate(ctx, claim, outcome, late.because, sub ?? (await currentSubtask(ctx, claim)));
  throw late.error(true);
};

/**
 * Records the outcome of the claimed subtask: state, observed coverage, sources,
 * `sourcesReached`, findings (bounded, see `boundOutcome`), reason, refusals and baseline. Usage is
 * never taken from the caller: it is what the counters say. Returns the waiter's task token if one
 * was registered. Refusals: `LeaseLost` (stale generation; nothing kept), and, with the result
 * kept as late evidence, `AlreadySealed`, `RunCancelled`, `DeadlinePassed`, `RunEnded`; and
 * `HedgeLost` (nothing kept) when a hedge copy already won. A hedge copy's outcome is recorded by
 * `recordCopyOutcome` (hedges.ts), which may end the hedged subtask in the same transaction.
 */
export const recordOutcome = async (ctx: LedgerContext, rawClaim: Claim, rawOutcome: OutcomeInput): Promise<RecordedOutcome> => {
  const claim = await withShards(ctx, parseInput(Claim, rawClaim, 'recordOutcome'));
  const outcome = parseOutcome(claim, rawOutcome);
  const now = ctx.now();
  const nowIso = iso(now);
  const key = subtaskKey(claim.tenantId, claim.runId, claim.subtaskId, claim.shards);
  // A large outcome (tens of thousands of observed ids) goes to parts of this generation,
  // written in the same transaction as the state change.
  const stored = toStoredOutcome(outcome);
  const parts = needsParts(stored) ? toParts(key.pk, partsPrefix(key.sk, 'outcome', String(claim.generation).padStart(6, '0')), stored) : undefined;
  const outcomeAttribute = parts === undefined ? '#outcome = :outcome' : '#outcomeParts = :outcomeParts';
  if (hedgedSubtaskOf(claim.subtask) !== undefined) {
    return recordCopyOutcome(ctx, claim, stored, parts === undefined ? undefined : { ref: parts.ref, items: partPuts(parts.parts) });
  }
  try {
    await transact(ctx, { operation: 'recordOutcome', ...claimContext(claim) }, [
      {
        kind: 'update',
        key,
        update: `SET #state = :state, ${outcomeAttribute}, #outcomeGeneration = :generation, #finishedAt = :nowIso, #updatedAt = :nowIso`,
        condition: 'attribute_exists(#pk) AND #generation = :generation AND #state = :running AND attribute_not_exists(#handedOverAt) AND #deadlineMs > :now',
        values: {
          ':state': outcome.state,
          ':outcome': stored,
          ':outcomeParts': parts?.ref,
          ':generation': claim.generation,
          ':nowIso': nowIso,
          ':running': 'running',
          ':now': now,
        },
      },
      { kind: 'check', key: runKey(claim.tenantId, claim.runId), condition: 'attribute_exists(#pk) AND #status = :running', values: { ':running': 'running' } },
      ...partPuts(parts?.parts ?? []),
    ]);
  } catch (error) {
    const reasons = cancellationReasons(error);
    if (reasons === undefined) throw error;
    return refusedOutcome(ctx, claim, outcome, reasons, now, error);
  }
  await touchRun(ctx, claim.tenantId, claim.runId);
  // A transaction returns no attributes, so read the token after the commit. A waiter that
  // registers later sees the terminal state and answers its own token instead.
  const after = await currentSubtask(ctx, claim);
  return { taskToken: after.taskToken, duplicate: false };
};

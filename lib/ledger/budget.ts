/**
 * Budget reservation: one conditional transaction across the subtask and run counters before
 * every model or tool call. Nothing is ever refunded: a reservation stays charged whether or not
 * the call it paid for succeeds, and the counters live on the subtask item, not on the claim, so a
 * replacement worker (next generation) inherits exactly what its predecessor left.
 *
 * Counting: the subtask and run counters count *down* from limits fixed at dispatch/creation
 * (conditions compare `left >= charge`, since DynamoDB conditions cannot add). The tenant's day
 * allowance is charged through the block of it that the run holds (lib/ledger/leases.ts): the
 * same update of the run item counts the block down, so the day item is written once per block,
 * not once per call.
 */
import {
  BudgetExhausted,
  DeadlinePassed,
  ImmutableAssignment,
  LeaseLost,
  RunCancelled,
  RunEnded,
  RunNotFound,
  WriteConflict,
  type LedgerError,
  type LedgerErrorContext,
} from './errors';
import { cancellationReasons, conditionFailed, type CancellationReason } from './failures';
import { copyClaimRefusal, copyReservationItems, hedgedRefusal, hedgedSubtaskOf } from './hedges';
import { claimContext, holderRefusal, oldSubtask } from './holder';
import { Claim, parseInput, TenantDayRef } from './inputs';
import { iso, transact, type DailyAllowance, type LedgerContext, type LedgerTransactItem } from './io';
import { blockOf, blockPays, leaseBlock } from './leases';
import { parseItem, RunItem, type StoredSubtaskItem } from './items';
import { subtaskKey, runKey, utcDay } from './keys';
import { dayUsage } from './usage';
import { withShards } from './shards';

export { TENANT_DAY_RETENTION_SECONDS } from './leases';

/**
 * Reservations of one call before it gives up with `WriteConflict`. Each refusal for want of a
 * block leases one (or finds one leased by a concurrent reservation of the same run) and tries
 * again; it is refused again only if concurrent reservations spent that block first, which they
 * can do only as often as the day grants blocks (about log2 of the allowance in its tail, where
 * blocks halve), so this bound is reached only under pathological contention.
 */
const RESERVE_ATTEMPTS = 64;

/** What one reservation charged. */
export interface Reservation {
  readonly modelCalls: 1;
  /** The assignment's estimated cost per call. */
  readonly estimatedCost: number;
  /** The UTC day charged to the tenant. */
  readonly day: string;
}

/** One call's charge to a run: its budget and its block of the tenant's day (a subtask's call, or synthesis's). */
export interface RunCharge {
  readonly context: LedgerErrorContext & { readonly tenantId: string; readonly runId: string };
  readonly cost: number;
  readonly now: number;
  readonly day: string;
}

interface Charge extends RunCharge {
  readonly claim: Claim;
}

const subtaskUpdate = ({ claim, cost, now }: Charge): LedgerTransactItem => ({
  kind: 'update',
  key: subtaskKey(claim.tenantId, claim.runId, claim.subtaskId, claim.shards),
  update: 'SET #callsLeft = #callsLeft - :one, #costLeft = #costLeft - :cost, #updatedAt = :nowIso',
  // The per-call estimate is compared with the stored one, so a caller cannot under-declare it.
  condition:
    'attribute_exists(#pk) AND #generation = :generation AND #state = :running AND attribute_not_exists(#handedOverAt) AND #leaseExpiresAt > :now ' +
    'AND #deadlineMs > :now AND #costPerCall = :cost AND #callsLeft >= :one AND #costLeft >= :cost',
  values: { ':one': 1, ':cost': cost, ':nowIso': iso(now), ':generation': claim.generation, ':running': 'running', ':now': now },
});

/** Charges the run budget and the run's block of the tenant's day allowance. */
export const runUpdate = ({ context, cost, now, day }: RunCharge): LedgerTransactItem => ({
  kind: 'update',
  key: runKey(context.tenantId, context.runId),
  update:
    'SET #callsLeft = #callsLeft - :one, #costLeft = #costLeft - :cost, #blockCallsLeft = #blockCallsLeft - :one, #blockCostLeft = #blockCostLeft - :cost, #updatedAt = :nowIso',
  condition:
    'attribute_exists(#pk) AND #status = :running AND #callsLeft >= :one AND #costLeft >= :cost AND #blockDay = :day AND #blockExpiresAt > :now AND #blockCallsLeft >= :one AND #blockCostLeft >= :cost',
  values: { ':one': 1, ':cost': cost, ':nowIso': iso(now), ':running': 'running', ':day': day, ':now': now },
});

const exhausted = (charge: RunCharge, limit: 'subtask' | 'run' | 'tenant', calls: number, cost: number, cause: unknown): BudgetExhausted | undefined => {
  const { context } = charge;
  if (calls < 1) return new BudgetExhausted({ ...context, limit, counter: 'calls', remaining: calls, requested: 1 }, { cause });
  if (cost < charge.cost) return new BudgetExhausted({ ...context, limit, counter: 'cost', remaining: cost, requested: charge.cost }, { cause });
  return undefined;
};

const subtaskRefusal = (charge: Charge, old: StoredSubtaskItem, cause: unknown): LedgerError | undefined => {
  const { claim, now } = charge;
  const context = claimContext(claim);
  const holder = holderRefusal(claim, old);
  if (holder !== undefined) return holder;
  if (old.deadlineMs <= now) return new DeadlinePassed({ ...context, deadline: iso(old.deadlineMs) }, { cause });
  if ((old.leaseExpiresAt ?? 0) <= now) {
    return new LeaseLost({ ...context, generation: claim.generation, currentGeneration: old.generation, reason: 'lease_expired' }, { cause });
  }
  if (old.costPerCall !== charge.cost) {
    return new ImmutableAssignment({ ...context, detail: `the claim says ${charge.cost} per call but the assignment fixed ${old.costPerCall}` }, { cause });
  }
  return exhausted(charge, 'subtask', old.callsLeft, old.costLeft, cause);
};

/** The run refused: it ended, its budget cannot pay, or (`NEEDS_BLOCK`) its block of the day's allowance cannot. */
export const NEEDS_BLOCK = 'needs-block';
/** Why the run refused a charge, or `undefined` when it did not. */
export type RunVerdict = LedgerError | typeof NEEDS_BLOCK | undefined;

/** Explains the run item's refusal of a charge, from its image at the refusal. */
export const runRefusal = (charge: RunCharge, image: Record<string, unknown> | undefined, cause: unknown): RunVerdict => {
  const { context } = charge;
  if (image === undefined) return new RunNotFound(context, { cause });
  const run = parseItem(RunItem, image, context);
  if (run.status === 'cancelled') return new RunCancelled(context, { cause });
  if (run.status !== 'running') return new RunEnded({ ...context, status: run.status }, { cause });
  const own = exhausted(charge, 'run', run.callsLeft, run.costLeft, cause);
  if (own !== undefined) return own;
  return blockPays(blockOf(run), charge.cost, charge.now, charge.day) ? undefined : NEEDS_BLOCK;
};

export const tenantRefusal = (charge: RunCharge, allowance: DailyAllowance, cause: unknown): LedgerError | undefined =>
  exhausted(charge, 'tenant', allowance.modelCalls, allowance.costLimit, cause);

/**
 * Explains a cancelled reservation, most specific first: the claim's own standing (stale,
 * ended, deadline, lease, tampered estimate), then the subtask allowance, then the run (its
 * status, its budget, and last its block of the tenant's allowance).
 */
const refusal = (charge: Charge, reasons: readonly CancellationReason[], cause: unknown): RunVerdict => {
  const [subtask, run] = reasons;
  const fromSubtask = conditionFailed(subtask) ? subtaskRefusal(charge, oldSubtask(charge.claim, subtask.item), cause) : undefined;
  const fromRun = conditionFailed(run) ? runRefusal(charge, run.item, cause) : undefined;
  return fromSubtask ?? fromRun;
};

/**
 * Explains a cancelled reservation of a hedge copy: its own claim first, then the hedged
 * subtask (race over, deadline, its allowance), then the run.
 */
const copyRefusal = (charge: Charge, reasons: readonly CancellationReason[], cause: unknown): RunVerdict => {
  const [copy, hedged, run] = reasons;
  const fromCopy = conditionFailed(copy) ? copyClaimRefusal(charge.claim, copy.item, charge.now, cause) : undefined;
  const fromHedged = conditionFailed(hedged)
    ? (hedgedRefusal(charge.claim, hedged.item, charge.now, cause) ?? hedgedAllowanceRefusal(charge, hedged.item, cause))
    : undefined;
  const fromRun = conditionFailed(run) ? runRefusal(charge, run.item, cause) : undefined;
  return fromCopy ?? fromHedged ?? fromRun;
};

/** The hedged subtask's allowance refused a copy: the cost per call differs, or a counter cannot pay. */
const hedgedAllowanceRefusal = (charge: Charge, image: Record<string, unknown> | undefined, cause: unknown): LedgerError | undefined => {
  const hedged = oldSubtask({ ...charge.claim, subtaskId: hedgedSubtaskOf(charge.claim.subtask) ?? charge.claim.subtaskId }, image);
  if (hedged.costPerCall !== charge.cost) {
    return new ImmutableAssignment(
      { ...claimContext(charge.claim), detail: `the claim says ${charge.cost} per call but the assignment fixed ${hedged.costPerCall}` },
      { cause },
    );
  }
  return exhausted(charge, 'subtask', hedged.callsLeft, hedged.costLeft, cause);
};

/**
 * Reserves one model or tool call for the holder of `claim`: one TransactWriteItems that charges
 * the subtask's allowance, the run budget and the run's block of the tenant's allowance for the
 * current UTC day, and succeeds only if the claim is the current generation, its lease and the
 * deadline are live, the run is running, and every counter can pay. When only the block cannot
 * pay, the run leases a new block (`leaseBlock`) and the reservation is tried again. The cost per
 * call comes from the stored assignment. Refusals: `BudgetExhausted` (with `limit` and
 * `counter`), `LeaseLost`, `DeadlinePassed`, `RunCancelled`, `RunEnded`, `AlreadyTerminal`,
 * `HedgeLost`.
 *
 * A hedge copy has no allowance of its own: its claim is checked on its own item and the call
 * is charged to the hedged subtask's counters (`subtask` in `BudgetExhausted`), which must still
 * be live, so every copy, piece and the original share one allowance.
 */
export const reserveBudget = async (ctx: LedgerContext, raw: Claim): Promise<Reservation> => {
  const claim = await withShards(ctx, parseInput(Claim, raw, 'reserveBudget'));
  const now = ctx.now();
  const charge: Charge = { claim, context: claimContext(claim), cost: claim.subtask.budget?.estimatedCostPerCall ?? 0, now, day: utcDay(now) };
  const allowance = ctx.dailyAllowance;
  if (allowance !== undefined) {
    // No day could ever pay for this call; say so without writing anything.
    const impossible = tenantRefusal(charge, allowance, undefined);
    if (impossible !== undefined) throw impossible;
  }
  const hedgedId = hedgedSubtaskOf(claim.subtask);
  const subtaskItems = hedgedId === undefined ? [subtaskUpdate(charge)] : copyReservationItems({ claim, hedgedId, cost: charge.cost, now });
  const explain = hedgedId === undefined ? refusal : copyRefusal;
  const context = claimContext(claim);
  for (let attempt = 1; attempt <= RESERVE_ATTEMPTS; attempt += 1) {
    try {
      await transact(ctx, { operation: 'reserveBudget', ...context }, [...subtaskItems, runUpdate(charge)]);
      return { modelCalls: 1, estimatedCost: charge.cost, day: charge.day };
    } catch (error) {
      const reasons = cancellationReasons(error);
      const explained = reasons === undefined ? undefined : explain(charge, reasons, error);
      if (explained !== NEEDS_BLOCK) throw explained ?? error;
      await leaseBlock(ctx, { context, cost: charge.cost, now, day: charge.day });
    }
  }
  throw new WriteConflict({ ...context, operation: 'reserveBudget', attempts: RESERVE_ATTEMPTS });
};

/** A tenant's usage on one UTC day, with the allowance it was judged against. */
export interface TenantUsage {
  readonly day: string;
  /** Calls actually charged by the tenant's runs on that day (settled and in blocks still held). */
  readonly modelCalls: number;
  readonly estimatedCost: number;
  readonly allowance: DailyAllowance | undefined;
  /**
   * Allowance held in blocks that runs have leased but not yet spent: the day cannot grant it to
   * another run until the holder spends it, returns it, or its lease expires. Zero when none is held.
   */
  readonly held: { readonly modelCalls: number; readonly estimatedCost: number };
}

/**
 * The tenant's usage on a UTC day (today by the ledger's clock when `day` is omitted): the sum
 * of every reservation of every run of that tenant on that day, exact at one instant (see
 * `dayUsage`).
 */
export const tenantUsage = async (ctx: LedgerContext, tenantIdRaw: string, dayRaw?: string): Promise<TenantUsage> => {
  const { tenantId, day } = parseInput(TenantDayRef, { tenantId: tenantIdRaw, day: dayRaw ?? utcDay(ctx.now()) }, 'tenantUsage');
  const usage = await dayUsage(ctx, tenantId, day);
  return { day, ...usage, allowance: ctx.dailyAllowance };
};

/**
 * Budget reservation: one conditional transaction across three counters before every model or
 * tool call. Nothing is ever refunded: a reservation stays charged whether or not the call it
 * paid for succeeds, and the counters live on the subtask item, not on the claim, so a
 * replacement worker (next generation) inherits exactly what its predecessor left.
 *
 * Counting: the subtask and run counters count *down* from limits fixed at dispatch/creation
 * (conditions compare `left >= charge`, since DynamoDB conditions cannot add); the tenant's day
 * counts *up* against the deployment's configured allowance, which may change from day to day.
 */
import { BudgetExhausted, DeadlinePassed, ImmutableAssignment, LeaseLost, RunCancelled, RunEnded, RunNotFound, type LedgerError } from './errors';
import { cancellationReasons, conditionFailed, type CancellationReason } from './failures';
import { copyClaimRefusal, copyReservationItems, hedgedRefusal, hedgedSubtaskOf } from './hedges';
import { claimContext, holderRefusal, oldSubtask } from './holder';
import { Claim, parseInput, TenantDayRef } from './inputs';
import { getItem, iso, transact, type DailyAllowance, type LedgerContext, type LedgerTransactItem } from './io';
import { parseItem, RunItem, TenantDayItem, type StoredSubtaskItem } from './items';
import { runKey, subtaskKey, tenantDayKey, utcDay } from './keys';
import { withShards } from './shards';

/** Daily counters are kept a week after their day, for usage reports. */
export const TENANT_DAY_RETENTION_SECONDS = 8 * 24 * 3600;

/** What one reservation charged. */
export interface Reservation {
  readonly modelCalls: 1;
  /** The assignment's estimated cost per call. */
  readonly estimatedCost: number;
  /** The UTC day charged to the tenant. */
  readonly day: string;
}

interface Charge {
  readonly claim: Claim;
  readonly cost: number;
  readonly now: number;
  readonly day: string;
}

const subtaskUpdate = ({ claim, cost, now }: Charge): LedgerTransactItem => ({
  kind: 'update',
  key: subtaskKey(claim.tenantId, claim.runId, claim.subtaskId, claim.shards),
  update: 'SET #callsLeft = #callsLeft - :one, #costLeft = #costLeft - :cost, #updatedAt = :nowIso',
  // The per-call estimate is compared with the stored one, so a caller cannot under-declare it.
  condition:
    'attribute_exists(#pk) AND #generation = :generation AND #state = :running AND #leaseExpiresAt > :now AND #deadlineMs > :now AND #costPerCall = :cost AND #callsLeft >= :one AND #costLeft >= :cost',
  values: { ':one': 1, ':cost': cost, ':nowIso': iso(now), ':generation': claim.generation, ':running': 'running', ':now': now },
});

const runUpdate = ({ claim, cost, now }: Charge): LedgerTransactItem => ({
  kind: 'update',
  key: runKey(claim.tenantId, claim.runId),
  update: 'SET #callsLeft = #callsLeft - :one, #costLeft = #costLeft - :cost, #updatedAt = :nowIso',
  condition: 'attribute_exists(#pk) AND #status = :running AND #callsLeft >= :one AND #costLeft >= :cost',
  values: { ':one': 1, ':cost': cost, ':nowIso': iso(now), ':running': 'running' },
});

const dayUpdate = ({ claim, cost, day }: Charge, allowance: DailyAllowance | undefined): LedgerTransactItem => {
  const ttl = Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000) + TENANT_DAY_RETENTION_SECONDS;
  const values = { ':one': 1, ':cost': cost, ':entity': 'tenant-day', ':tenant': claim.tenantId, ':day': day, ':ttl': ttl };
  const update = 'SET #entity = :entity, #tenantId = :tenant, #day = :day, #ttl = if_not_exists(#ttl, :ttl) ADD #callsUsed :one, #costUsed :cost';
  const key = tenantDayKey(claim.tenantId, day);
  if (allowance === undefined) return { kind: 'update', key, update, values };
  return {
    kind: 'update',
    key,
    update,
    condition: 'attribute_not_exists(#callsUsed) OR (#callsUsed < :callLimit AND #costUsed <= :costCeiling)',
    values: { ...values, ':callLimit': allowance.modelCalls, ':costCeiling': allowance.costLimit - cost },
  };
};

const exhausted = (charge: Charge, limit: 'subtask' | 'run' | 'tenant', calls: number, cost: number, cause: unknown): BudgetExhausted | undefined => {
  const context = claimContext(charge.claim);
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

const runRefusal = (charge: Charge, image: Record<string, unknown> | undefined, cause: unknown): LedgerError | undefined => {
  const context = claimContext(charge.claim);
  if (image === undefined) return new RunNotFound(context, { cause });
  const run = parseItem(RunItem, image, context);
  if (run.status === 'cancelled') return new RunCancelled(context, { cause });
  if (run.status !== 'running') return new RunEnded({ ...context, status: run.status }, { cause });
  return exhausted(charge, 'run', run.callsLeft, run.costLeft, cause);
};

const tenantRefusal = (charge: Charge, allowance: DailyAllowance, used: { callsUsed: number; costUsed: number }, cause: unknown): LedgerError | undefined =>
  exhausted(charge, 'tenant', allowance.modelCalls - used.callsUsed, allowance.costLimit - used.costUsed, cause);

/**
 * Explains a cancelled reservation, most specific first: the claim's own standing (stale,
 * ended, deadline, lease, tampered estimate), then the subtask allowance, the run, the tenant.
 */
const refusal = (ctx: LedgerContext, charge: Charge, reasons: readonly CancellationReason[], cause: unknown): LedgerError | undefined => {
  const [subtask, run, day] = reasons;
  const context = claimContext(charge.claim);
  const fromSubtask = conditionFailed(subtask) ? subtaskRefusal(charge, oldSubtask(charge.claim, subtask.item), cause) : undefined;
  const fromRun = conditionFailed(run) ? runRefusal(charge, run.item, cause) : undefined;
  const fromDay =
    conditionFailed(day) && ctx.dailyAllowance !== undefined
      ? tenantRefusal(charge, ctx.dailyAllowance, parseItem(TenantDayItem, day.item, context), cause)
      : undefined;
  return fromSubtask ?? fromRun ?? fromDay;
};

/**
 * Explains a cancelled reservation of a hedge copy: its own claim first, then the hedged
 * subtask (race over, deadline, its allowance), the run, the tenant.
 */
const copyRefusal = (ctx: LedgerContext, charge: Charge, reasons: readonly CancellationReason[], cause: unknown): LedgerError | undefined => {
  const [copy, hedged, run, day] = reasons;
  const context = claimContext(charge.claim);
  const fromCopy = conditionFailed(copy) ? copyClaimRefusal(charge.claim, copy.item, charge.now, cause) : undefined;
  const fromHedged = conditionFailed(hedged) ? (hedgedRefusal(charge.claim, hedged.item, charge.now, cause) ?? hedgedAllowanceRefusal(charge, hedged.item, cause)) : undefined;
  const fromRun = conditionFailed(run) ? runRefusal(charge, run.item, cause) : undefined;
  const fromDay =
    conditionFailed(day) && ctx.dailyAllowance !== undefined
      ? tenantRefusal(charge, ctx.dailyAllowance, parseItem(TenantDayItem, day.item, context), cause)
      : undefined;
  return fromCopy ?? fromHedged ?? fromRun ?? fromDay;
};

/** The hedged subtask's allowance refused a copy: the cost per call differs, or a counter cannot pay. */
const hedgedAllowanceRefusal = (charge: Charge, image: Record<string, unknown> | undefined, cause: unknown): LedgerError | undefined => {
  const hedged = oldSubtask({ ...charge.claim, subtaskId: hedgedSubtaskOf(charge.claim.subtask) ?? charge.claim.subtaskId }, image);
  if (hedged.costPerCall !== charge.cost) {
    return new ImmutableAssignment({ ...claimContext(charge.claim), detail: `the claim says ${charge.cost} per call but the assignment fixed ${hedged.costPerCall}` }, { cause });
  }
  return exhausted(charge, 'subtask', hedged.callsLeft, hedged.costLeft, cause);
};

/**
 * Reserves one model or tool call for the holder of `claim`: one TransactWriteItems that charges
 * the subtask's allowance, the run budget and the tenant's allowance for the current UTC day,
 * and succeeds only if the claim is the current generation, its lease and the deadline are
 * live, the run is running, and every counter can pay. The cost per call comes from the stored
 * assignment. Refusals: `BudgetExhausted` (with `limit` and `counter`), `LeaseLost`,
 * `DeadlinePassed`, `RunCancelled`, `RunEnded`, `AlreadyTerminal`, `HedgeLost`.
 *
 * A hedge copy has no allowance of its own: its claim is checked on its own item and the call
 * is charged to the hedged subtask's counters (`subtask` in `BudgetExhausted`), which must still
 * be live, so every copy, piece and the original share one allowance.
 */
export const reserveBudget = async (ctx: LedgerContext, raw: Claim): Promise<Reservation> => {
  const claim = await withShards(ctx, parseInput(Claim, raw, 'reserveBudget'));
  const now = ctx.now();
  const charge: Charge = { claim, cost: claim.subtask.budget?.estimatedCostPerCall ?? 0, now, day: utcDay(now) };
  const allowance = ctx.dailyAllowance;
  if (allowance !== undefined) {
    // No day could ever pay for this call; say so without writing anything.
    const impossible = tenantRefusal(charge, allowance, { callsUsed: 0, costUsed: 0 }, undefined);
    if (impossible !== undefined) throw impossible;
  }
  const hedgedId = hedgedSubtaskOf(claim.subtask);
  const subtaskItems = hedgedId === undefined ? [subtaskUpdate(charge)] : copyReservationItems({ claim, hedgedId, cost: charge.cost, now });
  try {
    await transact(ctx, { operation: 'reserveBudget', ...claimContext(claim) }, [...subtaskItems, runUpdate(charge), dayUpdate(charge, allowance)]);
    return { modelCalls: 1, estimatedCost: charge.cost, day: charge.day };
  } catch (error) {
    const reasons = cancellationReasons(error);
    const explain = hedgedId === undefined ? refusal : copyRefusal;
    const explained = reasons === undefined ? undefined : explain(ctx, charge, reasons, error);
    throw explained ?? error;
  }
};

/** A tenant's usage on one UTC day, with the allowance it was judged against. */
export interface TenantUsage {
  readonly day: string;
  readonly modelCalls: number;
  readonly estimatedCost: number;
  readonly allowance: DailyAllowance | undefined;
}

/**
 * The tenant's usage on a UTC day (today by the ledger's clock when `day` is omitted): the sum
 * of every reservation of every run of that tenant on that day.
 */
export const tenantUsage = async (ctx: LedgerContext, tenantIdRaw: string, dayRaw?: string): Promise<TenantUsage> => {
  const { tenantId, day } = parseInput(TenantDayRef, { tenantId: tenantIdRaw, day: dayRaw ?? utcDay(ctx.now()) }, 'tenantUsage');
  const item = await getItem(ctx, tenantDayKey(tenantId, day));
  const used = item === undefined ? { callsUsed: 0, costUsed: 0 } : parseItem(TenantDayItem, item, { tenantId });
  return { day, modelCalls: used.callsUsed, estimatedCost: used.costUsed, allowance: ctx.dailyAllowance };
};

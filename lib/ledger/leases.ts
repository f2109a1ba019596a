/**
 * Leased blocks of a tenant's daily allowance.
 *
 * A reservation never writes the tenant's day item: it charges the subtask and the run, and the
 * run item carries a *block* of the day's allowance (calls and cost) that the reservation also
 * counts down, in the same transaction. When the block cannot pay (spent, expired, or of another
 * UTC day), the run leases a new one: one transaction that returns the old block's remainder,
 * moves a new block from the day into the run, and records the holder beside the day item, with
 * the day's allowance as the condition. So the day item is written once per block, not once per
 * call, and the allowance is never exceeded: every call is paid from a block, and the day never
 * grants more than `allowance - committed`.
 *
 * Blocks come back: when the run ends (`returnBlock`, called by cancel and finish), when it
 * leases its next block (the remainder travels in the same transaction), and when its lease has
 * expired and another run of the tenant needs the allowance (`reclaimExpired`). Every return is
 * conditional on the block's id *and* its exact remaining counters on the run item, so a block
 * can be returned once only, and never while a reservation is still charging it.
 *
 * The day item counts up: `callsUsed`/`costUsed` are what returned blocks charged (settled),
 * `callsCommitted`/`costCommitted` add every block still held, in full. Exact usage is settled
 * usage plus what held blocks have charged so far, read from their runs (`tenantUsage`).
 *
 * Rules and figures: docs/ledger.md, "Leased allowance blocks".
 */
import { BudgetExhausted, RunNotFound, WriteConflict, type LedgerErrorContext } from './errors';
import { cancellationReasons, conditionFailed, conditionFailure } from './failures';
import { getItem, queryPartition, transact, updateItem, type DailyAllowance, type LedgerContext, type LedgerTransactItem } from './io';
import { parseItem, RunItem, TenantBlockItem, TenantDayItem } from './items';
import { runKey, SORT_KEYS, tenantBlockKey, tenantDayKey } from './keys';

/** How long a block stays the run's own: after this, another run of the tenant may reclaim what is left of it. */
export const BLOCK_LEASE_MS = 120_000;

/** The smallest block a run asks for before it has a rate of its own (calls; cost is this many calls' worth). */
export const BLOCK_FLOOR_CALLS = 10;

/** Day items (and block records) are kept a week after their day, for usage reports. */
export const TENANT_DAY_RETENTION_SECONDS = 8 * 24 * 3600;

/** Attempts of one lease before giving up with `WriteConflict` (each attempt re-reads the run and the day). */
const LEASE_ATTEMPTS = 12;

/** A run's block as stored on its run item. */
export interface Block {
  readonly id: string;
  readonly day: string;
  readonly calls: number;
  readonly cost: number;
  readonly callsLeft: number;
  readonly costLeft: number;
  readonly grantedAt: number;
  readonly expiresAt: number;
}

/** The block a run item holds, if any. */
export const blockOf = (run: RunItem): Block | undefined =>
  run.blockId === undefined
    ? undefined
    : {
        id: run.blockId,
        day: run.blockDay ?? '',
        calls: run.blockCalls ?? 0,
        cost: run.blockCost ?? 0,
        callsLeft: run.blockCallsLeft ?? 0,
        costLeft: run.blockCostLeft ?? 0,
        grantedAt: run.blockGrantedAt ?? 0,
        expiresAt: run.blockExpiresAt ?? 0,
      };

/** True when the block can pay one call of `cost` on `day` at `now`. */
export const blockPays = (block: Block | undefined, cost: number, now: number, day: string): boolean =>
  block !== undefined && block.day === day && block.expiresAt > now && block.callsLeft >= 1 && block.costLeft >= cost;

const dayTtl = (day: string): number => Math.floor(Date.parse(`${day}T00:00:00Z`) / 1000) + TENANT_DAY_RETENTION_SECONDS;

/** What one write adds to a day's counters (negative to give back). */
interface DayDelta {
  readonly settledCalls: number;
  readonly settledCost: number;
  readonly committedCalls: number;
  readonly committedCost: number;
  readonly grants: number;
}

/**
 * One update of a day item. With `ceiling`, the write is refused unless the day's committed
 * counters leave room for it (DynamoDB conditions compare but cannot add, so the ceiling is
 * `allowance - delta`, computed here).
 */
const dayWrite = (tenantId: string, day: string, delta: DayDelta, allowance?: DailyAllowance): LedgerTransactItem => ({
  kind: 'update',
  key: tenantDayKey(tenantId, day),
  update:
    'SET #entity = :entity, #tenantId = :tenant, #day = :day, #ttl = if_not_exists(#ttl, :ttl) ' +
    'ADD #callsUsed :settledCalls, #costUsed :settledCost, #callsCommitted :committedCalls, #costCommitted :committedCost, #grants :grants',
  ...(allowance === undefined ? {} : { condition: 'attribute_not_exists(#pk) OR (#callsCommitted <= :callCeiling AND #costCommitted <= :costCeiling)' }),
  values: {
    ':entity': 'tenant-day',
    ':tenant': tenantId,
    ':day': day,
    ':ttl': dayTtl(day),
    ':settledCalls': delta.settledCalls,
    ':settledCost': delta.settledCost,
    ':committedCalls': delta.committedCalls,
    ':committedCost': delta.committedCost,
    ':grants': delta.grants,
    ...(allowance === undefined
      ? {}
      : { ':callCeiling': allowance.modelCalls - delta.committedCalls, ':costCeiling': allowance.costLimit - delta.committedCost }),
  },
});

/** The run item keeps exactly this block (same id, nothing charged since it was read). */
const BLOCK_UNCHANGED = '#blockId = :oldBlockId AND #blockCallsLeft = :oldCallsLeft AND #blockCostLeft = :oldCostLeft';
const blockUnchangedValues = (block: Block) => ({ ':oldBlockId': block.id, ':oldCallsLeft': block.callsLeft, ':oldCostLeft': block.costLeft });

/** What returning `block` does to its day: its charged part becomes settled, its remainder leaves the committed counters. */
const returnDelta = (block: Block): DayDelta => ({
  settledCalls: block.calls - block.callsLeft,
  settledCost: block.cost - block.costLeft,
  committedCalls: -block.callsLeft,
  committedCost: -block.costLeft,
  grants: 0,
});

/** The block record beside the day item, marked returned. */
const blockRecordReturned = (tenantId: string, runId: string, block: Block, now: number): LedgerTransactItem => ({
  kind: 'update',
  key: tenantBlockKey(tenantId, block.day, runId),
  update: 'SET #returnedAt = :now REMOVE #blockId',
  condition: '#blockId = :oldBlockId',
  values: { ':now': now, ':oldBlockId': block.id },
});

const RUN_BLOCK_ATTRIBUTES = '#blockId, #blockDay, #blockCalls, #blockCost, #blockCallsLeft, #blockCostLeft, #blockGrantedAt, #blockExpiresAt';

/** The three writes that give a held block back to its day, once. `expiredBy` makes it a reclaim: only after the lease. */
const returnItems = (tenantId: string, runId: string, block: Block, now: number, expiredBy?: number): LedgerTransactItem[] => [
  {
    kind: 'update',
    key: runKey(tenantId, runId),
    update: `REMOVE ${RUN_BLOCK_ATTRIBUTES}`,
    condition: expiredBy === undefined ? BLOCK_UNCHANGED : `${BLOCK_UNCHANGED} AND #blockExpiresAt <= :expiredBy`,
    values: { ...blockUnchangedValues(block), ...(expiredBy === undefined ? {} : { ':expiredBy': expiredBy }) },
  },
  dayWrite(tenantId, block.day, returnDelta(block)),
  blockRecordReturned(tenantId, runId, block, now),
];

/** Writes that changed between our read and our transaction: read again and retry. */
const lostRace = (error: unknown): boolean => {
  if (conditionFailure(error) !== undefined) return true;
  const reasons = cancellationReasons(error);
  return reasons !== undefined && reasons.some(conditionFailed);
};

const readRun = async (ctx: LedgerContext, tenantId: string, runId: string): Promise<RunItem | undefined> => {
  const item = await getItem(ctx, runKey(tenantId, runId));
  return item === undefined ? undefined : parseItem(RunItem, item, { tenantId, runId });
};

/** The day's committed counters (a day item from before leased blocks counts its used counters as committed). */
const committedOf = (day: TenantDayItem | undefined) => ({
  calls: day === undefined ? 0 : (day.callsCommitted ?? day.callsUsed),
  cost: day === undefined ? 0 : (day.costCommitted ?? day.costUsed),
});

const readDay = async (ctx: LedgerContext, tenantId: string, day: string): Promise<TenantDayItem | undefined> => {
  const item = await getItem(ctx, tenantDayKey(tenantId, day));
  return item === undefined ? undefined : parseItem(TenantDayItem, item, { tenantId });
};

/**
 * A day item written before leased blocks has settled usage but no committed counters: copy them
 * once, so that the allowance condition (which reads the committed counters) counts that usage.
 */
const upgradeLegacyDay = async (ctx: LedgerContext, tenantId: string, day: string): Promise<void> => {
  try {
    await updateItem(
      ctx,
      { operation: 'leaseBlock', tenantId },
      tenantDayKey(tenantId, day),
      {
        update: 'SET #callsCommitted = #callsUsed, #costCommitted = #costUsed',
        condition: 'attribute_exists(#callsUsed) AND attribute_not_exists(#callsCommitted)',
      },
      {},
    );
  } catch (error) {
    if (conditionFailure(error) === undefined) throw error;
  }
};

/** How large the next block is. Pure, so the rule can be read (and tested) on its own. */
export interface BlockSizing {
  /** This call's cost: the block must pay for at least this call. */
  readonly cost: number;
  /** What the day can still grant to this run: allowance minus committed, plus this run's own remainder on that day. `Infinity` without an allowance. */
  readonly availableCalls: number;
  readonly availableCost: number;
  /** The run's own remaining budget: a block never holds more than the run could spend. */
  readonly runCallsLeft: number;
  readonly runCostLeft: number;
  /** What the run's previous block charged, and over how long (ms); zero without one. */
  readonly previousCalls: number;
  readonly previousCost: number;
  readonly previousMs: number;
}

/**
 * The block size rule:
 * - **want** what the run spent per second on its previous block times the lease
 *   (`BLOCK_LEASE_MS`), at least `BLOCK_FLOOR_CALLS` calls (and that many calls of this cost);
 * - **at most half** of what the day can still grant (rounded up), so a second run of the tenant
 *   always finds something while two or more calls are unleased;
 * - **at most** the run's own remaining budget;
 * - **at least** this one call.
 * Without an allowance there is nothing to share: the block is the run's whole remaining budget.
 *
 * @example
 * blockSize({ cost: 7, availableCalls: 5, availableCost: 1000, runCallsLeft: 40, runCostLeft: 500, previousCalls: 0, previousCost: 0, previousMs: 0 })
 * // { calls: 3, cost: 70 }
 */
export const blockSize = (s: BlockSizing): { calls: number; cost: number } => {
  if (!Number.isFinite(s.availableCalls)) return { calls: s.runCallsLeft, cost: s.runCostLeft };
  const seconds = Math.max(s.previousMs, 1) / 1000;
  const leaseSeconds = BLOCK_LEASE_MS / 1000;
  const wantCalls = Math.max(BLOCK_FLOOR_CALLS, Math.ceil((s.previousCalls / seconds) * leaseSeconds));
  const wantCost = Math.max(BLOCK_FLOOR_CALLS * s.cost, Math.ceil((s.previousCost / seconds) * leaseSeconds));
  const calls = Math.max(1, Math.min(wantCalls, Math.ceil(s.availableCalls / 2), s.runCallsLeft, s.availableCalls));
  const cost = Math.max(s.cost, Math.min(wantCost, Math.ceil(s.availableCost / 2), s.runCostLeft, s.availableCost));
  return { calls, cost };
};

/** Who asks for a block, and for which call. */
export interface LeaseRequest {
  readonly context: LedgerErrorContext & { readonly tenantId: string; readonly runId: string };
  readonly cost: number;
  readonly now: number;
  readonly day: string;
}

/**
 * Makes sure the run holds a block of `day` that can pay one call of `cost`, leasing one when it
 * does not. Returns without writing when the run cannot spend anyway (ended, or its own budget
 * cannot pay): the reservation's own conditions then say why. Throws `BudgetExhausted` (limit
 * `tenant`) when the day cannot grant this call even after reclaiming expired blocks; `remaining`
 * is what the day could still grant this run.
 */
export const leaseBlock = async (ctx: LedgerContext, request: LeaseRequest): Promise<void> => {
  const { context, cost, now, day } = request;
  const { tenantId, runId } = context;
  const allowance = ctx.dailyAllowance;
  for (let attempt = 1; attempt <= LEASE_ATTEMPTS; attempt += 1) {
    const run = await readRun(ctx, tenantId, runId);
    if (run === undefined) throw new RunNotFound(context);
    const old = blockOf(run);
    if (run.status !== 'running' || run.callsLeft < 1 || run.costLeft < cost || blockPays(old, cost, now, day)) return;
    let today = await readDay(ctx, tenantId, day);
    if (today !== undefined && today.callsCommitted === undefined) {
      await upgradeLegacyDay(ctx, tenantId, day);
      today = await readDay(ctx, tenantId, day);
    }
    const committed = committedOf(today);
    const sameDay = old !== undefined && old.day === day;
    const ownCalls = sameDay ? old.callsLeft : 0;
    const ownCost = sameDay ? old.costLeft : 0;
    const availableCalls = allowance === undefined ? Infinity : allowance.modelCalls - committed.calls + ownCalls;
    const availableCost = allowance === undefined ? Infinity : allowance.costLimit - committed.cost + ownCost;
    if (availableCalls < 1 || availableCost < cost) {
      if ((await reclaimExpired(ctx, tenantId, day, now, runId)) > 0) continue;
      const counter = availableCalls < 1 ? 'calls' : 'cost';
      throw new BudgetExhausted({
        ...context,
        limit: 'tenant',
        counter,
        remaining: counter === 'calls' ? availableCalls : availableCost,
        requested: counter === 'calls' ? 1 : cost,
      });
    }
    const size = blockSize({
      cost,
      availableCalls,
      availableCost,
      runCallsLeft: run.callsLeft,
      runCostLeft: run.costLeft,
      previousCalls: old === undefined ? 0 : old.calls - old.callsLeft,
      previousCost: old === undefined ? 0 : old.cost - old.costLeft,
      previousMs: old === undefined ? 0 : now - old.grantedAt,
    });
    const block: Block = {
      id: ctx.newId(),
      day,
      calls: size.calls,
      cost: size.cost,
      callsLeft: size.calls,
      costLeft: size.cost,
      grantedAt: now,
      expiresAt: now + BLOCK_LEASE_MS,
    };
    try {
      await transact(ctx, { operation: 'leaseBlock', ...context }, grantItems(tenantId, runId, block, old, now, allowance));
      return;
    } catch (error) {
      if (!lostRace(error)) throw error;
    }
  }
  throw new WriteConflict({ ...context, operation: 'leaseBlock', attempts: LEASE_ATTEMPTS });
};

/**
 * The transaction that grants `block` to the run: the run item takes it (if it still holds exactly
 * `old`), the day's committed counters grow by the new block minus `old`'s remainder (when `old`
 * is of the same day; an `old` of an earlier day is returned to that day), and the block record
 * names the holder and its lease.
 */
const grantItems = (
  tenantId: string,
  runId: string,
  block: Block,
  old: Block | undefined,
  now: number,
  allowance: DailyAllowance | undefined,
): LedgerTransactItem[] => {
  const sameDay = old !== undefined && old.day === block.day;
  const runWrite: LedgerTransactItem = {
    kind: 'update',
    key: runKey(tenantId, runId),
    update:
      'SET #blockId = :blockId, #blockDay = :day, #blockCalls = :calls, #blockCost = :cost, #blockCallsLeft = :calls, #blockCostLeft = :cost, #blockGrantedAt = :now, #blockExpiresAt = :expiresAt',
    condition: `#status = :running AND ${old === undefined ? 'attribute_not_exists(#blockId)' : BLOCK_UNCHANGED}`,
    values: {
      ':blockId': block.id,
      ':day': block.day,
      ':calls': block.calls,
      ':cost': block.cost,
      ':now': now,
      ':expiresAt': block.expiresAt,
      ':running': 'running',
      ...(old === undefined ? {} : blockUnchangedValues(old)),
    },
  };
  const settled = sameDay ? returnDelta(old) : undefined;
  const dayDelta: DayDelta = {
    settledCalls: settled?.settledCalls ?? 0,
    settledCost: settled?.settledCost ?? 0,
    committedCalls: block.calls + (settled?.committedCalls ?? 0),
    committedCost: block.cost + (settled?.committedCost ?? 0),
    grants: sameDay ? 0 : 1,
  };
  const record: LedgerTransactItem = {
    kind: 'put',
    item: {
      ...tenantBlockKey(tenantId, block.day, runId),
      entity: 'tenant-block',
      tenantId,
      runId,
      day: block.day,
      blockId: block.id,
      calls: block.calls,
      cost: block.cost,
      grantedAt: block.grantedAt,
      expiresAt: block.expiresAt,
      ttl: dayTtl(block.day),
    },
    condition: sameDay ? '#blockId = :oldBlockId' : 'attribute_not_exists(#blockId)',
    ...(sameDay ? { values: { ':oldBlockId': old.id } } : {}),
  };
  const earlierDay = old !== undefined && !sameDay ? [dayWrite(tenantId, old.day, returnDelta(old)), blockRecordReturned(tenantId, runId, old, now)] : [];
  return [runWrite, dayWrite(tenantId, block.day, dayDelta, allowance), record, ...earlierDay];
};

/**
 * Returns the run's block to its day, if it holds one. For runs that ended (cancel, finish): no
 * reservation can charge the block any more, so one attempt normally suffices; calling it again
 * is harmless (a block is returned once: the run item must still hold it, unchanged).
 */
export const returnBlock = async (ctx: LedgerContext, tenantId: string, runId: string): Promise<void> => {
  for (let attempt = 1; attempt <= LEASE_ATTEMPTS; attempt += 1) {
    const run = await readRun(ctx, tenantId, runId);
    const block = run === undefined ? undefined : blockOf(run);
    if (block === undefined) return;
    try {
      await transact(ctx, { operation: 'returnBlock', tenantId, runId }, returnItems(tenantId, runId, block, ctx.now()));
      return;
    } catch (error) {
      if (!lostRace(error)) throw error;
    }
  }
  throw new WriteConflict({ tenantId, runId, operation: 'returnBlock', attempts: LEASE_ATTEMPTS });
};

/** The day's block records of runs that still hold a block. */
const heldBlocks = async (ctx: LedgerContext, tenantId: string, day: string): Promise<TenantBlockItem[]> =>
  (await queryPartition(ctx, tenantDayKey(tenantId, day).pk, SORT_KEYS.blockPrefix))
    .map((item) => parseItem(TenantBlockItem, item, { tenantId }))
    .filter((item) => item.blockId !== undefined);

/**
 * Gives back the remainder of every block of `day` whose lease expired by `now` (except
 * `exceptRunId`'s own, which it returns itself when it leases). A reclaim is the same
 * once-only return as at the end of a run, with one more condition: the lease has expired by
 * the reclaimer's clock. Returns how many blocks came back.
 */
export const reclaimExpired = async (ctx: LedgerContext, tenantId: string, day: string, now: number, exceptRunId?: string): Promise<number> => {
  const expired = (await heldBlocks(ctx, tenantId, day)).filter((item) => item.expiresAt <= now && item.runId !== exceptRunId);
  let reclaimed = 0;
  for (const record of expired) {
    const run = await readRun(ctx, tenantId, record.runId);
    const block = run === undefined ? undefined : blockOf(run);
    if (block === undefined || block.id !== record.blockId || block.expiresAt > now) continue;
    try {
      await transact(ctx, { operation: 'reclaimBlock', tenantId, runId: record.runId }, returnItems(tenantId, record.runId, block, now, now));
      reclaimed += 1;
    } catch (error) {
      // Renewed, returned or charged meanwhile: not ours to take.
      if (!lostRace(error)) throw error;
    }
  }
  return reclaimed;
};

/**
 * Exact tenant-day usage under leased blocks. The day item knows what returned blocks charged;
 * what held blocks have charged so far is on their runs' items. A report reads both in one
 * TransactGetItems, so it is one instant's truth: no block is counted both as returned and as
 * held, and none is missed, because the day's `grants` counter (bumped whenever a run that held no
 * block of the day gets one) must be the same before the holders were listed and in the
 * snapshot; otherwise a holder may have appeared unlisted, and the read is repeated.
 */
import { WriteConflict } from './errors';
import { getItem, getItemsAtOnce, queryPartition, TRANSACT_GET_LIMIT, type LedgerContext } from './io';
import { parseItem, RunItem, TenantBlockItem, TenantDayItem } from './items';
import { runKey, SORT_KEYS, tenantDayKey } from './keys';

/** Reads of a report before it gives up while blocks keep being granted. */
const USAGE_ATTEMPTS = 8;

/** Calls and cost. */
export interface Amount {
  readonly modelCalls: number;
  readonly estimatedCost: number;
}

/** What a tenant's runs charged on one day, and what they hold unspent. */
export interface DayUsage extends Amount {
  readonly held: Amount;
}

const chunks = <T>(items: readonly T[], size: number): T[][] =>
  Array.from({ length: Math.ceil(items.length / size) }, (_, index) => items.slice(index * size, (index + 1) * size));

/**
 * The tenant's charged and held amounts on `day`. Exact at one instant while at most 99 runs hold
 * a block of the day at once (one TransactGetItems); beyond that the runs are read in further
 * snapshots, and the figure may miss calls charged while the report was being read.
 */
export const dayUsage = async (ctx: LedgerContext, tenantId: string, day: string): Promise<DayUsage> => {
  const context = { tenantId };
  const dayKey = tenantDayKey(tenantId, day);
  for (let attempt = 1; attempt <= USAGE_ATTEMPTS; attempt += 1) {
    const before = await getItem(ctx, dayKey);
    const grantsBefore = before === undefined ? 0 : parseItem(TenantDayItem, before, context).grants;
    const holders = (await queryPartition(ctx, dayKey.pk, SORT_KEYS.blockPrefix))
      .map((item) => parseItem(TenantBlockItem, item, context))
      .filter((item) => item.blockId !== undefined)
      .map((item) => item.runId);
    const keys = [dayKey, ...holders.map((runId) => runKey(tenantId, runId))];
    const read = (
      await Promise.all(chunks(keys, TRANSACT_GET_LIMIT).map((chunk) => getItemsAtOnce(ctx, { operation: 'tenantUsage', tenantId }, chunk)))
    ).flat();
    const [dayImage, ...runImages] = read;
    const dayItem = dayImage === undefined ? undefined : parseItem(TenantDayItem, dayImage, context);
    if ((dayItem?.grants ?? 0) !== grantsBefore) continue;
    const runs = runImages.flatMap((image) => (image === undefined ? [] : [parseItem(RunItem, image, context)])).filter((run) => run.blockDay === day);
    const sum = (pick: (run: RunItem) => number) => runs.reduce((total, run) => total + pick(run), 0);
    return {
      modelCalls: (dayItem?.callsUsed ?? 0) + sum((run) => (run.blockCalls ?? 0) - (run.blockCallsLeft ?? 0)),
      estimatedCost: (dayItem?.costUsed ?? 0) + sum((run) => (run.blockCost ?? 0) - (run.blockCostLeft ?? 0)),
      held: { modelCalls: sum((run) => run.blockCallsLeft ?? 0), estimatedCost: sum((run) => run.blockCostLeft ?? 0) },
    };
  }
  throw new WriteConflict({ tenantId, operation: 'tenantUsage', attempts: USAGE_ATTEMPTS });
};

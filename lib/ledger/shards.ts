/**
 * Which partitions hold a run's subtask items. The shard count is fixed when the run is created
 * and stored on its `RUN` item (absent: one shard, the layout of every run before sharding), so
 * it can be remembered for the life of the process once read: it never changes.
 */
import { GetCommand } from '@aws-sdk/lib-dynamodb';
import { mapLimit, type LedgerContext } from './io';
import { runKey, shardPartitions, SHARDING } from './keys';

/** Queries of a run's shards in flight at once (whole-run reads and sweeps). */
export const SHARD_READS = 8;

const cacheKey = (tenantId: string, runId: string): string => `${tenantId}\u0000${runId}`;

/**
 * The run's shard count: `given` when the caller carries it (a claim does), else from the process's
 * memory, else one consistent GetItem of `RUN` (projected to the count). A run that does not exist
 * counts as one shard and is not remembered, so the operation reports what it reports today.
 *
 * @example
 * const shards = await runShards(ctx, 'acme', 'r-1'); // 1 for a small run
 */
export const runShards = async (ctx: LedgerContext, tenantId: string, runId: string, given?: number): Promise<number> => {
  if (given !== undefined) return given;
  const key = cacheKey(tenantId, runId);
  const known = ctx.shardCache?.get(key);
  if (known !== undefined) return known;
  const image = await ctx.client.send(
    new GetCommand({
      TableName: ctx.tableName,
      Key: runKey(tenantId, runId),
      ConsistentRead: true,
      ProjectionExpression: '#pk, #shards',
      ExpressionAttributeNames: { '#pk': 'pk', '#shards': SHARDING.attribute },
    }),
  );
  if (image.Item === undefined) return 1;
  const shards = Number(image.Item[SHARDING.attribute] ?? 1);
  ctx.shardCache?.set(key, shards);
  return shards;
};

/** Remembers the shard count of a run this process just created or read whole. */
export const rememberShards = (ctx: LedgerContext, tenantId: string, runId: string, shards: number): void => {
  ctx.shardCache?.set(cacheKey(tenantId, runId), shards);
};

/**
 * Runs `read` over every partition holding the run's subtask items (one for a small run), at most
 * {@link SHARD_READS} at a time, and concatenates the results in shard order.
 *
 * @example
 * const items = await acrossShards(tenantId, runId, shards, (pk) => queryPartition(ctx, pk, SORT_KEYS.subtaskPrefix));
 */
export const acrossShards = async <T>(tenantId: string, runId: string, shards: number, read: (pk: string) => Promise<T[]>): Promise<T[]> =>
  (await mapLimit(shardPartitions(tenantId, runId, shards), SHARD_READS, read)).flat();

/**
 * The ref or claim with its run's shard count filled in (see {@link runShards}), so that every key
 * derived from it lands in the right partition.
 *
 * @example
 * const claim = await withShards(ctx, parseInput(Claim, raw, 'reserveBudget'));
 */
export const withShards = async <Ref extends { readonly tenantId: string; readonly runId: string; readonly shards?: number | undefined }>(
  ctx: LedgerContext,
  ref: Ref,
): Promise<Ref & { readonly shards: number }> => ({ ...ref, shards: await runShards(ctx, ref.tenantId, ref.runId, ref.shards) });

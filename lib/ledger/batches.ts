/**
 * Batch bookkeeping of batched rounds (docs/deadlines.md, "Runs past one execution's history"):
 * which subtasks, with which absolute deadlines, each batch of a round holds. Dispatch writes a
 * round's batches before it returns their descriptors; the batch's child execution reads its one
 * batch first thing. The items live in a partition of their own beside the run's, so reading a
 * run never reads them. Each holds at most one batch (500 subtasks by default, about 50 KB).
 */
import { BatchWriteCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { SubtaskId, TenantId } from '../contract';
import { BatchNotFound } from './errors';
import { untilProcessed } from './failures';
import { RunId, parseInput } from './inputs';
import { getItem, type LedgerContext } from './io';
import { runPartition, type LedgerKey } from './keys';
import { parseItem } from './items';

/** One subtask of a batch: what an iteration of the per-subtask Map is given. */
export const BatchEntry = z.object({ subtaskId: SubtaskId, deadline: z.iso.datetime({ offset: true }) });
export type BatchEntry = z.infer<typeof BatchEntry>;

/** One batch of one round of one run. */
export const BatchRef = z.object({ tenantId: TenantId, runId: RunId, round: z.int().min(1), batch: z.int().min(0) });
export type BatchRef = z.infer<typeof BatchRef>;

export const WriteBatchesInput = z.object({
  tenantId: TenantId,
  runId: RunId,
  round: z.int().min(1),
  /** The round's batches in order; batch `i` is `batches[i]`. */
  batches: z.array(z.array(BatchEntry).min(1)).min(1),
});
export type WriteBatchesInput = z.input<typeof WriteBatchesInput>;

/** The stored item: ids and deadlines as two parallel lists, the smallest shape DynamoDB keeps. */
const StoredBatch = z.object({ subtaskIds: z.array(SubtaskId).min(1), deadlines: z.array(z.string()).min(1) });

/**
 * The key of one batch: `T#<tenant>#R#<runId>#BATCHES`, `BATCH#<round>#<batch>` (zero-padded so a
 * round's batches sort in order). A run id is percent-encoded, so no run's own partition ends so.
 *
 * @example
 * batchKey('acme', 'r-1', 2, 3) // { pk: 'T#acme#R#r-1#BATCHES', sk: 'BATCH#002#00003' }
 */
export const batchKey = (tenantId: string, runId: string, round: number, batch: number): LedgerKey => ({
  pk: `${runPartition(tenantId, runId)}#BATCHES`,
  sk: `BATCH#${String(round).padStart(3, '0')}#${String(batch).padStart(5, '0')}`,
});

/** BatchWriteItem takes at most 25 puts. */
const WRITES_PER_CALL = 25;

/**
 * Writes every batch of a round. Idempotent: a retried dispatch writes the same keys again, each
 * put replacing the whole item, and nothing reads a batch before dispatch has returned.
 *
 * @example
 * await writeBatches(ctx, { tenantId, runId, round: 1, batches: [[{ subtaskId: 'A', deadline }], …] });
 */
export const writeBatches = async (ctx: LedgerContext, raw: WriteBatchesInput): Promise<number> => {
  const input = parseInput(WriteBatchesInput, raw, 'writeBatches');
  const items = input.batches.map((entries, batch) => ({
    ...batchKey(input.tenantId, input.runId, input.round, batch),
    subtaskIds: entries.map((e) => e.subtaskId),
    deadlines: entries.map((e) => e.deadline),
  }));
  const context = { operation: 'writeBatches', tenantId: input.tenantId, runId: input.runId };
  for (let i = 0; i < items.length; i += WRITES_PER_CALL) {
    const puts = items.slice(i, i + WRITES_PER_CALL).map((item): Record<string, unknown> => ({ PutRequest: { Item: item } }));
    // Unprocessed items are DynamoDB shedding load: retried with backoff a bounded number of
    // times, then `WritesUnprocessed`, which the dispatch Task retries as a whole.
    await untilProcessed(ctx.conflictRetry, context, puts, async (requests) => {
      const result = await ctx.client.send(new BatchWriteCommand({ RequestItems: { [ctx.tableName]: [...requests] } }));
      return result.UnprocessedItems?.[ctx.tableName] as Record<string, unknown>[] | undefined;
    });
  }
  return items.length;
};

/**
 * The subtasks of one batch, in the order dispatch wrote them. `BatchNotFound` when no batch was
 * written under that key.
 *
 * @example
 * const entries = await readBatch(ctx, { tenantId, runId, round: 1, batch: 0 }); // [{ subtaskId: 'A', deadline }, …]
 */
export const readBatch = async (ctx: LedgerContext, raw: BatchRef): Promise<BatchEntry[]> => {
  const ref = parseInput(BatchRef, raw, 'readBatch');
  const item = await getItem(ctx, batchKey(ref.tenantId, ref.runId, ref.round, ref.batch));
  if (item === undefined) throw new BatchNotFound({ tenantId: ref.tenantId, runId: ref.runId, round: ref.round, batch: ref.batch });
  const stored = parseItem(StoredBatch, item, { tenantId: ref.tenantId, runId: ref.runId });
  return stored.subtaskIds.map((subtaskId, i) => ({ subtaskId, deadline: stored.deadlines[i]! }));
};

/**
 * A page of a run's subtasks without reading the whole run: one GetItem of the run item (is
 * there such a run, which round is committed, how many shards), Queries of the `SUB#` key range
 * with `Limit` (one for a small run; a few small ones per shard of a large run, merged by id), one
 * Query of the page's `LATE#` key range per shard that holds a subtask of the page, and the parts
 * of any spilled item.
 *
 * Pages follow the sort key, `SUB#<subtaskId>`, so subtasks come in id order (DynamoDB compares
 * the UTF-8 bytes; subtask ids are ASCII, so this is also JavaScript's string order), not in
 * dispatch order: dispatch order is not in any key, and a second index of it would cost a write
 * per subtask.
 */
import { QueryCommand } from '@aws-sdk/lib-dynamodb';
import type { z } from 'zod';
import { expressions, getItem, mapLimit, queryPartition, type LedgerContext } from './io';
import { LateItem, parseItem, RunItem, SubtaskItem } from './items';
import { runKey, shardPartitions, SORT_KEYS } from './keys';
import { SHARD_READS } from './shards';
import { withParts } from './parts';
import { asRunDecides } from './view';
import type { LedgerErrorContext } from './errors';

/** What a page asks for. */
export interface SubtaskPageRequest {
  readonly tenantId: string;
  readonly runId: string;
  /** Subtasks per page (at least 1). */
  readonly limit: number;
  /** The id the previous page ended with: this page starts strictly after it. */
  readonly after?: string;
}

/** A page: no such run, an `after` that names no committed subtask of the run, or the subtasks. */
export type SubtaskPageRead =
  | { readonly kind: 'not_found' }
  | { readonly kind: 'unknown_position' }
  | {
      readonly kind: 'page';
      /** Committed subtasks, in id order. */
      readonly subtasks: readonly SubtaskItem[];
      /** The copies of the page's hedged subtasks (items whose `hedgeOf` names one of them). */
      readonly copies: readonly SubtaskItem[];
      /** The late evidence of these subtasks, in key order (subtask, then generation). */
      readonly late: readonly LateItem[];
      /** Whether committed subtasks follow the last one. */
      readonly more: boolean;
    };

/**
 * The highest sort key a subtask id can follow a prefix with. Ids are ASCII without `#`
 * (lib/contract's `SubtaskId`), so every `<prefix><id>…` key sorts at or below this.
 */
const rangeEnd = (prefix: string): string => `${prefix}\uffff`;

/** Spilled attributes are read back concurrently, this many items at a time. */
const PART_READS = 8;

/**
 * Up to `wanted` items of the subtask key range from `from` (inclusive) on, in key order,
 * strongly consistent, skipping subtasks of an uncommitted round (whose commit marker is not
 * written yet: they are not part of the run). `Limit` keeps each Query to the page, so a page
 * costs its own items only; it follows `LastEvaluatedKey` only when skipped items left it short.
 */
const querySubtasks = async (
  ctx: LedgerContext,
  context: LedgerErrorContext,
  pk: string,
  from: string | undefined,
  wanted: number,
  committed: number,
  resume?: Record<string, unknown>,
): Promise<{ found: SubtaskItem[]; start: Record<string, unknown> | undefined }> => {
  const keyCondition = from === undefined ? '#pk = :pk AND begins_with(#sk, :prefix)' : '#pk = :pk AND #sk BETWEEN :from AND :to';
  const values = { ':pk': pk, ':prefix': SORT_KEYS.subtaskPrefix, ':from': from, ':to': rangeEnd(SORT_KEYS.subtaskPrefix) };
  const found: SubtaskItem[] = [];
  let start: Record<string, unknown> | undefined = resume;
  do {
    const page = await ctx.client.send(
      new QueryCommand({
        TableName: ctx.tableName,
        ConsistentRead: true,
        Limit: wanted - found.length,
        ExclusiveStartKey: start,
        ...expressions({ keyCondition }, values),
      }),
    );
    const items = await mapLimit(page.Items ?? [], PART_READS, async (image) => parseItem(SubtaskItem, await withParts(ctx, image, context), context));
    // A hedge copy (`<id>.h<n>`) is shown inside the subtask it races, never as a subtask of its own.
    found.push(...items.filter((item) => item.round <= committed && item.hedgeOf === undefined));
    start = page.LastEvaluatedKey;
  } while (start !== undefined && found.length < wanted);
  return { found, start };
};

/** What has been read of one shard's subtask range: its items so far, and where to go on (`undefined`: the range is exhausted). */
interface ShardRead {
  readonly pk: string;
  readonly found: SubtaskItem[];
  start: Record<string, unknown> | undefined;
  exhausted: boolean;
}

const byKey = <T extends { readonly sk: string }>(a: T, b: T): number => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0);

/**
 * The `need` smallest committed subtasks at or after `from` across the run's shards: a lazy merge.
 * Each shard is read `⌈need / shards⌉ + 1` items at a time, and read again only while the last key
 * it read lies below the `need`-th smallest key found so far (an item it has not read could still
 * be in the page); an exhausted shard is never read again. A fair hash spreads the page evenly, so
 * a page reads about `need + 2 × shards` items instead of `shards × need`. One shard: one read of
 * `need` items, as an unsharded run always did.
 */
const mergeShards = async (
  ctx: LedgerContext,
  context: LedgerErrorContext,
  pks: readonly string[],
  from: string | undefined,
  need: number,
  committed: number,
): Promise<SubtaskItem[]> => {
  const batch = pks.length === 1 ? need : Math.ceil(need / pks.length) + 1;
  const reads: ShardRead[] = pks.map((pk) => ({ pk, found: [], start: undefined, exhausted: false }));
  let pending = reads;
  while (pending.length > 0) {
    await mapLimit(pending, SHARD_READS, async (read) => {
      const more = await querySubtasks(ctx, context, read.pk, from, batch, committed, read.start);
      read.found.push(...more.found);
      read.start = more.start;
      read.exhausted = more.start === undefined;
    });
    const merged = reads.flatMap((read) => read.found).sort(byKey);
    const threshold = merged.length >= need ? merged[need - 1]?.sk : undefined;
    pending = reads.filter((read) => !read.exhausted && (threshold === undefined || String(read.start?.sk) < threshold));
  }
  return reads
    .flatMap((read) => read.found)
    .sort(byKey)
    .slice(0, need);
};

/** The late evidence of the subtasks from `first` to `last` (ids in key order): one Query of that `LATE#` range. */
const queryLate = async (
  ctx: LedgerContext,
  context: LedgerErrorContext,
  pk: string,
  first: string,
  last: string,
  ids: ReadonlySet<string>,
): Promise<LateItem[]> => {
  const keyCondition = '#pk = :pk AND #sk BETWEEN :from AND :to';
  const values = { ':pk': pk, ':from': `${SORT_KEYS.latePrefix}${first}#`, ':to': rangeEnd(`${SORT_KEYS.latePrefix}${last}#`) };
  const found: LateItem[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ctx.client.send(
      new QueryCommand({ TableName: ctx.tableName, ConsistentRead: true, ExclusiveStartKey: start, ...expressions({ keyCondition }, values) }),
    );
    const items = await mapLimit(page.Items ?? [], PART_READS, async (image) => parseItem(LateItem, await withParts(ctx, image, context), context));
    // Another subtask's evidence cannot fall in the range (ids hold no `#`), but a skipped uncommitted one's can.
    found.push(...items.filter((item) => ids.has(item.subtaskId)));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  return found;
};

/**
 * The copies of the hedged subtasks among `subtasks`: one Query of `SUB#<id>.h` per subtask whose
 * race has started (copies are written once, with `hedgeStartedAt`), keeping the items whose
 * `hedgeOf` names it (another subtask's id may begin the same way).
 */
const queryCopies = async (ctx: LedgerContext, context: LedgerErrorContext, subtasks: readonly SubtaskItem[]): Promise<SubtaskItem[]> => {
  const hedged = subtasks.filter((item) => item.hedgeStartedAt !== undefined);
  const found = await mapLimit(hedged, PART_READS, async (item) => {
    // Copies live in the partition of the subtask they race (`shardOf` hashes `<id>.h<n>` as `<id>`).
    const images = await queryPartition(ctx, item.pk, `${SORT_KEYS.subtaskPrefix}${item.subtaskId}.h`);
    const copies = await mapLimit(images, PART_READS, async (image) => parseItem(SubtaskItem, await withParts(ctx, image, context), context));
    return copies.filter((copy) => copy.hedgeOf === item.subtaskId);
  });
  return found.flat();
};

/** The fields of the run item a page needs: its committed round, its shards, and whether it was cancelled. */
const PageRun = RunItem.pick({ round: true, shards: true, status: true, cancelledAt: true });
type PageRun = z.infer<typeof PageRun>;

/** A page read. */
export type SubtaskPage = Extract<SubtaskPageRead, { kind: 'page' }>;

/** The page of `read` (the subtasks from the page's first on, one more than `limit` when more follow). */
const pageOf = async (ctx: LedgerContext, context: LedgerErrorContext, run: PageRun, read: readonly SubtaskItem[], limit: number): Promise<SubtaskPage> => {
  const subtasks = read.slice(0, limit).map(asRunDecides(run));
  const late = await pageLate(ctx, context, subtasks);
  const copies = (await queryCopies(ctx, context, subtasks)).map(asRunDecides(run));
  return { kind: 'page', subtasks, late, copies, more: read.length > limit };
};

const subtaskPageOf = async (ctx: LedgerContext, run: PageRun, request: SubtaskPageRequest): Promise<Exclude<SubtaskPageRead, { kind: 'not_found' }>> => {
  const { tenantId, runId, limit, after } = request;
  const context = { tenantId, runId };
  const { round: committed, shards = 1 } = run;
  const from = after === undefined ? undefined : `${SORT_KEYS.subtaskPrefix}${after}`;
  const read = await mergeShards(ctx, context, shardPartitions(tenantId, runId, shards), from, limit + 1 + (after === undefined ? 0 : 1), committed);
  if (after !== undefined && read[0]?.subtaskId !== after) return { kind: 'unknown_position' };
  return pageOf(ctx, context, run, after === undefined ? read : read.slice(1), limit);
};

/**
 * The first page of a run whose item the caller has read already (the paged forms of
 * `GET /runs/{runId}` read it for the resource too, so the page and the resource agree on the run).
 *
 * @example
 * const page = await firstSubtaskPage(ctx, run, 100); // page.subtasks.length <= 100
 */
export const firstSubtaskPage = async (ctx: LedgerContext, run: PageRun & Pick<RunItem, 'tenantId' | 'runId'>, limit: number): Promise<SubtaskPage> => {
  const { tenantId, runId, round: committed, shards = 1 } = run;
  const context = { tenantId, runId };
  return pageOf(ctx, context, run, await mergeShards(ctx, context, shardPartitions(tenantId, runId, shards), undefined, limit + 1, committed), limit);
};

/**
 * One page of a run's committed subtasks in id order, with their late evidence and the copies of
 * any hedged subtask among them.
 *
 * With `after`, the Query of that subtask's shard starts *at* its key (one item more than the
 * page), so the same request proves that the position is a committed subtask of this run, which a
 * forged position is not. One item more again tells whether another page follows. A sharded run's
 * shards are read from the position on and merged by id (`mergeShards`); the cursor's own item is
 * in its shard, so the same proof holds.
 *
 * @example
 * const read = await readSubtaskPage(ctx, { tenantId: 'acme', runId: 'r-1', limit: 100, after: 'B' });
 */
export const readSubtaskPage = async (ctx: LedgerContext, request: SubtaskPageRequest): Promise<SubtaskPageRead> => {
  const { tenantId, runId } = request;
  const image = await getItem(ctx, runKey(tenantId, runId));
  if (image === undefined) return { kind: 'not_found' };
  return subtaskPageOf(ctx, parseItem(PageRun, image, { tenantId, runId }), request);
};

/** The late evidence of a page's subtasks: one `LATE#` range Query per partition that holds some of them, in key order. */
const pageLate = async (ctx: LedgerContext, context: LedgerErrorContext, subtasks: readonly SubtaskItem[]): Promise<LateItem[]> => {
  const byPartition = new Map<string, SubtaskItem[]>();
  for (const item of subtasks) byPartition.set(item.pk, [...(byPartition.get(item.pk) ?? []), item]);
  const found = await mapLimit([...byPartition], SHARD_READS, ([pk, items]) => {
    const first = items[0] as SubtaskItem;
    const last = items.at(-1) as SubtaskItem;
    return queryLate(ctx, context, pk, first.subtaskId, last.subtaskId, new Set(items.map((item) => item.subtaskId)));
  });
  return found.flat().sort((a, b) => (a.sk < b.sk ? -1 : a.sk > b.sk ? 1 : 0));
};

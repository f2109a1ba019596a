/**
 * Run summaries: the `SUMMARY` item of each run, which is both the entry of the run list index
 * (`GET /runs`) and the run's change version (`GET /runs/{runId}` with `Prefer: wait`).
 *
 * The version is a change *hint*: it is bumped by a small UpdateItem after each write that
 * changes a subtask's state, commits a round or ends the run. A reader that sees it move reads
 * the run again; a bump lost to a crash between the two writes only delays that reader until
 * the next bump or the end of its wait (the run resource's ETag is a hash of the body, so a lost
 * bump can never make an answer claim "not modified" for a changed run).
 */
import { GetCommand, QueryCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { z } from 'zod';
import { RunStatus as RunStatuses, SubtaskState as SubtaskStates, type RunProgress, type RunStatus, type RunSummary } from '../contract';
import { expressions, getItem, mapLimit, queryPartition, type LedgerContext } from './io';
import { parseItem, RunItem, SummaryItem } from './items';
import { runKey, runListPartition, runListSort, SORT_KEYS, summaryKey } from './keys';
import { acrossShards } from './shards';
import { RUN_LIST_INDEX } from './table';
import { runProgress, stateAsRunDecides } from './view';

/** The fields of a subtask item that its run's progress needs. */
const SubtaskState = z.object({ round: z.int().min(1), state: SubtaskStates, hedgeOf: z.string().optional() });
/** The fields of a run item that a summary needs. */
const RunState = z.object({ status: RunStatuses, updatedAt: z.string() });

/** Running runs on one list page whose subtasks are counted at once. */
const COUNT_CONCURRENCY = 8;

/**
 * The summary item of a new run, written in `createRun`'s transaction.
 *
 * @example
 * summaryItem(run, 'Total deductible expenses').listPk // 'T#acme#RUNS#running'
 */
export const summaryItem = (run: RunItem, goal: string): SummaryItem => ({
  ...summaryKey(run.tenantId, run.runId),
  entity: 'summary',
  tenantId: run.tenantId,
  runId: run.runId,
  status: run.status,
  goal,
  createdAt: run.createdAt,
  updatedAt: run.updatedAt,
  version: 0,
  listPk: runListPartition(run.tenantId, run.status),
  listSk: runListSort(run.createdAt, run.runId),
});

/**
 * Bumps the run's change version after a write that changed it. A hint for waiting readers, so
 * it never fails the write it follows: a run created before summaries existed has none (the
 * condition refuses), and any other failure only delays a reader until its wait ends.
 */
export const touchRun = async (ctx: LedgerContext, tenantId: string, runId: string): Promise<void> => {
  try {
    await ctx.client.send(
      new UpdateCommand({
        TableName: ctx.tableName,
        Key: summaryKey(tenantId, runId),
        ...expressions({ update: 'ADD #version :one', condition: 'attribute_exists(#pk)' }, { ':one': 1 }),
      }),
    );
  } catch {
    // See above: the version is a hint, and the write it follows has already succeeded.
  }
};

/** The run's change version (one strongly consistent GetItem of a small item), or `undefined` without a summary. */
export const runVersion = async (ctx: LedgerContext, tenantId: string, runId: string): Promise<number | undefined> => {
  const output = await ctx.client.send(
    new GetCommand({ TableName: ctx.tableName, Key: summaryKey(tenantId, runId), ConsistentRead: true, ...expressions({ projection: '#version' }) }),
  );
  const version = output.Item?.version;
  return typeof version === 'number' ? version : undefined;
};

/** A run's status, last update and progress, counted from its committed subtasks. */
interface LiveProgress {
  readonly status: RunStatus;
  readonly updatedAt: string;
  readonly progress: RunProgress;
}

/**
 * Counts a run's committed subtasks by state: one GetItem of the run item (its committed round)
 * and one Query of the subtask items projected to their round, state and `hedgeOf` (copies of a
 * hedged subtask are not counted).
 */
const liveProgress = async (ctx: LedgerContext, tenantId: string, runId: string): Promise<LiveProgress | undefined> => {
  const run = await getItem(ctx, runKey(tenantId, runId));
  if (run === undefined) return undefined;
  const context = { tenantId, runId };
  const { status, updatedAt, round, shards } = parseItem(RunItem.pick({ status: true, updatedAt: true, round: true, shards: true }), run, context);
  return { status, updatedAt, progress: await committedProgress(ctx, { tenantId, runId, status, round, shards }) };
};

/**
 * The progress of a run whose item the caller has read: its committed subtasks counted by state,
 * as reads show them (`stateAsRunDecides`), from one Query per shard of the subtask items
 * projected to their round, state and `hedgeOf` (copies of a hedged subtask are not counted). It
 * reads every subtask's key, but no subtask is parsed whole.
 *
 * @example
 * await committedProgress(ctx, { tenantId: 'acme', runId: 'r-1', status: 'running', round: 1 }) // { dispatched: 4, terminal: 1, byState: { … } }
 */
export const committedProgress = async (ctx: LedgerContext, run: Pick<RunItem, 'tenantId' | 'runId' | 'status' | 'round' | 'shards'>): Promise<RunProgress> => {
  const { tenantId, runId, status, round: committed, shards = 1 } = run;
  const subtasks = await acrossShards(tenantId, runId, shards, (pk) => queryPartition(ctx, pk, SORT_KEYS.subtaskPrefix, '#round, #state, #hedgeOf'));
  const context = { tenantId, runId };
  // Hedge copies race a subtask; they are not subtasks of a round (docs/hedging.md).
  const states = subtasks.map((item) => parseItem(SubtaskState, item, context)).filter((item) => item.round <= committed && item.hedgeOf === undefined);
  return runProgress(states.map((item) => ({ state: stateAsRunDecides({ status }, item.state) })));
};

/**
 * Records on the summary that the run ended: its status (moving it to that status's list
 * partition), the run item's last update, its final progress and, when the answer is known,
 * `complete`. Called by `finishRun` after its sweep, which is idempotent, so a crash before this
 * write is repaired by calling it again.
 */
export const endSummary = async (ctx: LedgerContext, tenantId: string, runId: string, complete: boolean | undefined): Promise<void> => {
  const live = await liveProgress(ctx, tenantId, runId);
  if (live === undefined) return;
  const setComplete = complete === undefined ? '' : ', #complete = :complete';
  await updateExistingSummary(
    ctx,
    tenantId,
    runId,
    `SET #status = :status, #listPk = :listPk, #updatedAt = :updatedAt, #progress = :progress${setComplete} ADD #version :one`,
    {
      ':status': live.status,
      ':listPk': runListPartition(tenantId, live.status),
      ':updatedAt': live.updatedAt,
      ':progress': live.progress,
      ':complete': complete,
      ':one': 1,
    },
  );
};

/** One update of a run's summary, skipped when the run has none (one created before summaries existed). */
const updateExistingSummary = async (ctx: LedgerContext, tenantId: string, runId: string, update: string, values: Record<string, unknown>): Promise<void> => {
  try {
    await ctx.client.send(
      new UpdateCommand({ TableName: ctx.tableName, Key: summaryKey(tenantId, runId), ...expressions({ update, condition: 'attribute_exists(#pk)' }, values) }),
    );
  } catch (error) {
    // A run created before summaries existed has none to update; anything else is a real failure.
    if ((error as { name?: string }).name !== 'ConditionalCheckFailedException') throw error;
  }
};

/**
 * Records on the summary that a cancel ended the run: its status (moving it to the cancelled list
 * partition) and the run item's last update, with no progress: the list counts an ended run
 * without stored progress from its subtasks, as it counts a running one, until `endSummary`
 * stores the final progress when the run closes. Two small requests, whatever the run's size.
 */
export const markSummaryEnded = async (ctx: LedgerContext, tenantId: string, runId: string): Promise<void> => {
  const run = await getItem(ctx, runKey(tenantId, runId));
  if (run === undefined) return;
  const { status, updatedAt } = parseItem(RunState, run, { tenantId, runId });
  await updateExistingSummary(ctx, tenantId, runId, 'SET #status = :status, #listPk = :listPk, #updatedAt = :updatedAt ADD #version :one', {
    ':status': status,
    ':listPk': runListPartition(tenantId, status),
    ':updatedAt': updatedAt,
    ':one': 1,
  });
};

/** A position in a tenant's run list: the run the previous page ended with. */
export interface RunListPosition {
  readonly createdAt: string;
  readonly runId: string;
}

/** What `listRuns` asks for. */
export interface RunListRequest {
  readonly tenantId: string;
  /** Only runs of this status; all statuses when absent. */
  readonly status?: RunStatus;
  readonly limit: number;
  /** Runs strictly after this position (older, or as old with a smaller run id). */
  readonly after?: RunListPosition;
}

/** One page of a tenant's runs, newest first. `last` is set when more runs may follow it. */
export interface RunListPage {
  readonly runs: readonly RunSummary[];
  readonly last?: RunListPosition;
}

/** Up to `wanted` summaries of one list partition after `after`, newest first, following pages. */
const queryListPartition = async (ctx: LedgerContext, pk: string, wanted: number, after: string | undefined): Promise<Record<string, unknown>[]> => {
  const items: Record<string, unknown>[] = [];
  const keyCondition = after === undefined ? '#listPk = :pk' : '#listPk = :pk AND #listSk < :after';
  let start: Record<string, unknown> | undefined;
  do {
    const page = await ctx.client.send(
      new QueryCommand({
        TableName: ctx.tableName,
        IndexName: RUN_LIST_INDEX.indexName,
        ScanIndexForward: false,
        Limit: wanted - items.length,
        ExclusiveStartKey: start,
        ...expressions({ keyCondition }, { ':pk': pk, ':after': after }),
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined && items.length < wanted);
  return items;
};

const newestFirst = (a: SummaryItem, b: SummaryItem): number => (a.listSk < b.listSk ? 1 : a.listSk > b.listSk ? -1 : 0);

/**
 * One page of a tenant's runs, newest first (creation time, then run id, descending). With a
 * status, one Query of that status's partition of the run list index; without one, one Query of
 * each status's partition, merged by sort key. A page resumes strictly after the position the
 * previous one ended on, so a run that changes status between pages is neither repeated nor
 * skipped: its position is its creation time, which never changes. Ended runs carry their final
 * progress; a running run's subtasks are counted (one Query each, eight at a time).
 */
export const listRuns = async (ctx: LedgerContext, request: RunListRequest): Promise<RunListPage> => {
  const statuses = request.status === undefined ? RunStatuses.options : [request.status];
  const after = request.after === undefined ? undefined : runListSort(request.after.createdAt, request.after.runId);
  const wanted = request.limit + 1;
  const found = (await Promise.all(statuses.map((status) => queryListPartition(ctx, runListPartition(request.tenantId, status), wanted, after)))).flat();
  // The index is eventually consistent: a run whose status just changed can briefly be in two partitions.
  const unique = [...new Map(found.map((item) => [String(item.runId), parseItem(SummaryItem, item, { tenantId: request.tenantId })])).values()];
  const ordered = unique.sort(newestFirst).slice(0, wanted);
  const page = ordered.slice(0, request.limit);
  const runs = await mapLimit(page, COUNT_CONCURRENCY, async (item): Promise<RunSummary> => {
    const stored = { runId: item.runId, goal: item.goal, createdAt: item.createdAt, complete: item.complete ?? null };
    if (item.status !== 'running' && item.progress !== undefined) return { ...stored, status: item.status, updatedAt: item.updatedAt, progress: item.progress };
    const live = await liveProgress(ctx, request.tenantId, item.runId);
    return live === undefined
      ? { ...stored, status: item.status, updatedAt: item.updatedAt, progress: runProgress([]) }
      : { ...stored, status: live.status, updatedAt: live.updatedAt, progress: live.progress };
  });
  const lastItem = page.at(-1);
  return ordered.length > request.limit && lastItem !== undefined ? { runs, last: { createdAt: lastItem.createdAt, runId: lastItem.runId } } : { runs };
};

/** The creation time of one of the tenant's runs, from its summary, or `undefined` when it has none. */
export const runCreatedAt = async (ctx: LedgerContext, tenantId: string, runId: string): Promise<string | undefined> => {
  const output = await ctx.client.send(
    new GetCommand({ TableName: ctx.tableName, Key: summaryKey(tenantId, runId), ...expressions({ projection: '#createdAt' }) }),
  );
  const createdAt = output.Item?.createdAt;
  return typeof createdAt === 'string' ? createdAt : undefined;
};

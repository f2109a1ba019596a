/**
 * Appending a round to the manifest. A round can hold more subtasks than one transaction
 * (100 items), so it is written in chunks and then committed by one conditional update of the
 * run item; readers only trust rounds whose commit marker exists. Every chunk re-checks that the
 * run is still running and that this round is the next one, so nothing is added to a cancelled
 * run or to a round already committed.
 */
import { parseTimePoint, type DispatchedSubtask } from '../contract';
import { allowanceOf } from '../domain/allowance';
import { contentHash } from './canonical';
import { ImmutableAssignment, InvalidLedgerInput, RunCancelled, RunEnded, RunNotFound, type LedgerErrorContext } from './errors';
import { cancellationReasons, conditionFailed, conditionFailure, type CancellationReason } from './failures';
import { AppendRoundInput, parseInput } from './inputs';
import { iso, transact, updateItem, type LedgerContext, type LedgerTransactItem } from './io';
import { touchRun } from './summary';
import { parseItem, RunItem, StoredSubtaskItem, type SubtaskItem } from './items';
import { partPuts, partsPrefix, spill, type Spilled } from './parts';
import { runKey, subtaskKey } from './keys';
import { runShards } from './shards';
import { loadRun } from './runs';
import { itemSize } from './size';

/** Subtask puts per transaction: 100 items is DynamoDB's limit and one slot holds the run check. */
export const SUBTASKS_PER_TRANSACTION = 99;
/** Keeps a chunk well under DynamoDB's 4 MB per transaction. */
const BYTES_PER_TRANSACTION = 3_500_000;

/** What `appendRound` did. */
export interface AppendedRound {
  readonly round: number;
  /** The round's subtasks as stored, with their absolute deadlines, in dispatch order. */
  readonly subtasks: readonly DispatchedSubtask[];
  /** Subtask items this call wrote. */
  readonly written: number;
  /** Subtask items an earlier attempt had already written with the same assignment. */
  readonly alreadyPresent: number;
}

type ParsedInput = ReturnType<typeof AppendRoundInput.parse>;

const absoluteDeadline = (subtask: DispatchedSubtask, dispatchedMs: number): number | string => {
  if (subtask.deadline !== undefined) {
    const point = parseTimePoint(subtask.deadline);
    return point?.form === 'instant' ? point.ms : `subtask ${subtask.id}: deadline must be an ISO instant with an offset`;
  }
  if (subtask.deadlineSeconds !== undefined) return dispatchedMs + subtask.deadlineSeconds * 1000;
  return `subtask ${subtask.id}: give an absolute deadline or deadlineSeconds`;
};

/** Fixes each assignment's absolute deadline and checks the round's shape, reporting every problem at once. */
const fixAssignments = (input: ParsedInput, dispatchedMs: number): DispatchedSubtask[] => {
  const issues: string[] = [];
  const seen = new Set<string>();
  const fixed = input.subtasks.map((subtask) => {
    if (subtask.round !== input.round) issues.push(`subtask ${subtask.id}: round ${subtask.round} differs from the round being appended (${input.round})`);
    if (seen.has(subtask.id)) issues.push(`subtask ${subtask.id}: appears twice`);
    seen.add(subtask.id);
    const deadline = absoluteDeadline(subtask, dispatchedMs);
    if (typeof deadline === 'string') issues.push(deadline);
    return { ...subtask, deadline: iso(typeof deadline === 'number' ? deadline : 0) };
  });
  if (issues.length > 0) throw new InvalidLedgerInput({ operation: 'appendRound', tenantId: input.tenantId, runId: input.runId, issues });
  return fixed;
};

const subtaskItem = (
  input: ParsedInput,
  shards: number,
  assignment: DispatchedSubtask,
  position: number,
  dispatchedMs: number,
  nowIso: string,
): SubtaskItem => {
  const allowance = allowanceOf(assignment.budget);
  return {
    ...subtaskKey(input.tenantId, input.runId, assignment.id, shards),
    entity: 'subtask',
    subtaskId: assignment.id,
    round: input.round,
    position,
    assignment,
    assignmentHash: contentHash(assignment),
    dispatchedAt: iso(dispatchedMs),
    deadlineMs: Date.parse(assignment.deadline ?? ''),
    costPerCall: assignment.budget?.estimatedCostPerCall ?? 0,
    callsLimit: allowance.modelCalls,
    costLimit: allowance.cost,
    callsLeft: allowance.modelCalls,
    costLeft: allowance.cost,
    state: 'pending',
    generation: 0,
    updatedAt: nowIso,
  };
};

/** A subtask item as written: a large assignment moved to parts (see `parts.ts`). */
interface Entry {
  readonly item: SubtaskItem;
  readonly stored: Spilled<Record<string, unknown> & { pk: string }>;
}

const toEntry = (item: SubtaskItem): Entry => ({
  item,
  stored: spill<Record<string, unknown> & { pk: string }>(item, ['assignment'], (name) => partsPrefix(item.sk, name)),
});

const entryItems = (entry: Entry): number => 1 + entry.stored.parts.length;
const entryBytes = (entry: Entry): number => itemSize(entry.stored.item) + entry.stored.parts.reduce((sum, part) => sum + itemSize({ ...part }), 0);

/** Splits entries into transactions by item count (a subtask and its parts travel together) and by size. */
const chunk = (entries: readonly Entry[]): Entry[][] => {
  const chunks: Entry[][] = [];
  let current: Entry[] = [];
  let count = 0;
  let bytes = 0;
  for (const entry of entries) {
    const [items, size] = [entryItems(entry), entryBytes(entry)];
    if (current.length > 0 && (count + items > SUBTASKS_PER_TRANSACTION || bytes + size > BYTES_PER_TRANSACTION)) {
      chunks.push(current);
      current = [];
      count = 0;
      bytes = 0;
    }
    current.push(entry);
    count += items;
    bytes += size;
  }
  if (current.length > 0) chunks.push(current);
  return chunks;
};

/** Why the run refused a round: not found, not running, or the round is out of order. `'committed'` when this round already is. */
const runRefusal = (input: ParsedInput, image: Record<string, unknown> | undefined, cause: unknown): Error | 'committed' => {
  const context = { tenantId: input.tenantId, runId: input.runId };
  if (image === undefined) return new RunNotFound(context, { cause });
  const run = parseItem(RunItem, image, context);
  if (run.status === 'cancelled') return new RunCancelled(context, { cause });
  if (run.status !== 'running') return new RunEnded({ ...context, status: run.status }, { cause });
  if (run.round >= input.round) return 'committed';
  return new InvalidLedgerInput(
    { ...context, operation: 'appendRound', issues: [`round ${input.round} cannot follow committed round ${run.round}`] },
    { cause },
  );
};

const runCheck = (input: ParsedInput): LedgerTransactItem => ({
  kind: 'check',
  key: runKey(input.tenantId, input.runId),
  condition: 'attribute_exists(#pk) AND #status = :running AND #round = :previous',
  values: { ':running': 'running', ':previous': input.round - 1 },
});

/** The subtasks of a chunk that already exist; throws if one exists with another assignment. */
const alreadyWritten = (context: LedgerErrorContext, pending: readonly Entry[], reasons: readonly CancellationReason[]): Set<Entry> => {
  const present = new Set<Entry>();
  reasons.forEach((reason, index) => {
    const entry = pending[index];
    if (!conditionFailed(reason) || entry === undefined) return;
    const mine = entry.item;
    const stored = parseItem(StoredSubtaskItem, reason.item, context);
    if (stored.assignmentHash !== mine.assignmentHash) {
      throw new ImmutableAssignment({
        ...context,
        subtaskId: mine.subtaskId,
        detail: `subtask ${mine.subtaskId} was already dispatched in round ${stored.round} with another assignment`,
      });
    }
    present.add(entry);
  });
  return present;
};

/**
 * Writes one chunk. Puts never overwrite (a retried dispatch must not reset a running subtask):
 * items an earlier attempt wrote are checked against their hash and dropped, and the rest retried.
 */
const writeChunk = async (ctx: LedgerContext, input: ParsedInput, entries: readonly Entry[]): Promise<{ written: number; present: number } | 'committed'> => {
  const context = { tenantId: input.tenantId, runId: input.runId };
  let pending = entries;
  let present = 0;
  while (pending.length > 0) {
    try {
      // Subtask Puts first (their cancellation reasons are read by position), then their parts.
      await transact(ctx, { operation: 'appendRound', ...context }, [
        runCheck(input),
        ...pending.map((entry): LedgerTransactItem => ({ kind: 'put', item: entry.stored.item, condition: 'attribute_not_exists(#pk)' })),
        ...pending.flatMap((entry) => partPuts(entry.stored.parts)),
      ]);
      return { written: pending.length, present };
    } catch (error) {
      const reasons = cancellationReasons(error);
      if (reasons === undefined) throw error;
      const [run, ...puts] = reasons;
      if (conditionFailed(run)) {
        const refusal = runRefusal(input, run.item, error);
        if (refusal === 'committed') return refusal;
        throw refusal;
      }
      const existing = alreadyWritten(context, pending, puts);
      if (existing.size === 0) throw error;
      present += existing.size;
      pending = pending.filter((entry) => !existing.has(entry));
    }
  }
  return { written: 0, present };
};

/** Writes the commit marker. `false` when the round was already committed by an earlier attempt. */
const commit = async (ctx: LedgerContext, input: ParsedInput, size: number): Promise<boolean> => {
  try {
    await updateItem(
      ctx,
      { operation: 'appendRound', tenantId: input.tenantId, runId: input.runId },
      runKey(input.tenantId, input.runId),
      {
        update: 'SET #round = :round, #roundSizes = list_append(#roundSizes, :size), #updatedAt = :nowIso',
        condition: 'attribute_exists(#pk) AND #status = :running AND #round = :previous',
      },
      {
        ':round': input.round,
        ':size': [size],
        ':nowIso': iso(ctx.now()),
        ':running': 'running',
        ':previous': input.round - 1,
      },
    );
    return true;
  } catch (error) {
    const failure = conditionFailure(error);
    if (failure === undefined) throw error;
    const refusal = runRefusal(input, failure.item, error);
    if (refusal === 'committed') return false;
    throw refusal;
  }
};

/** A retry found the round committed: it is idempotent only if it asks for exactly what is stored. */
const committedRound = async (ctx: LedgerContext, input: ParsedInput, items: readonly SubtaskItem[]): Promise<AppendedRound> => {
  const context = { tenantId: input.tenantId, runId: input.runId };
  const record = await loadRun(ctx, input.tenantId, input.runId);
  if (record === undefined) throw new RunNotFound(context);
  const stored = record.subtasks.filter((item) => item.round === input.round);
  const hashes = new Map(stored.map((item) => [item.subtaskId, item.assignmentHash]));
  const same = stored.length === items.length && items.every((item) => hashes.get(item.subtaskId) === item.assignmentHash);
  if (!same) throw new ImmutableAssignment({ ...context, detail: `round ${input.round} was already committed with ${stored.length} other subtasks` });
  return { round: input.round, subtasks: stored.map((item) => item.assignment), written: 0, alreadyPresent: stored.length };
};

/**
 * Appends round `round` to the run's manifest: writes the subtask items in chunks of at most
 * {@link SUBTASKS_PER_TRANSACTION}, then commits the round on the run item. Idempotent: a retry
 * with the same subtasks (same assignments, same deadlines) returns the stored round; a different
 * assignment for an existing subtask id throws `ImmutableAssignment`.
 */
export const appendRound = async (ctx: LedgerContext, raw: AppendRoundInput): Promise<AppendedRound> => {
  const input = parseInput(AppendRoundInput, raw, 'appendRound');
  const dispatchedMs = input.dispatchedAt === undefined ? ctx.now() : Date.parse(input.dispatchedAt);
  const assignments = fixAssignments(input, dispatchedMs);
  const nowIso = iso(ctx.now());
  // Each subtask goes to its shard (docs/ledger.md); a run that is not there counts as one shard and is refused by the run check.
  const shards = await runShards(ctx, input.tenantId, input.runId);
  const items = assignments.map((assignment, position) => subtaskItem(input, shards, assignment, position, dispatchedMs, nowIso));
  let written = 0;
  let alreadyPresent = 0;
  for (const part of chunk(items.map(toEntry))) {
    const result = await writeChunk(ctx, input, part);
    if (result === 'committed') return committedRound(ctx, input, items);
    written += result.written;
    alreadyPresent += result.present;
  }
  if (!(await commit(ctx, input, items.length))) return committedRound(ctx, input, items);
  await touchRun(ctx, input.tenantId, input.runId);
  return { round: input.round, subtasks: assignments, written, alreadyPresent };
};

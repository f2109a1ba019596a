/**
 * Pure mappers from stored items to the public contract: the outcome of a subtask as reconcile
 * reads it, and the run resource of `GET /runs/{runId}`. No I/O here, so these are unit-tested
 * with authored items.
 */
import {
  RunResource,
  SubtaskState,
  type RunProgress,
  TerminalState,
  type DispatchedSubtask,
  type LateEvidence,
  type Outcome,
  type SubtaskView,
  type Usage,
} from '../contract';
import type { LateItem, MetaItem, RunItem, SubtaskItem } from './items';
import { describeSubtask } from './reason';

/** Everything stored about one run: what `getRun` returns and `toRunResource` maps. */
export interface RunRecord {
  readonly run: RunItem;
  readonly meta: MetaItem;
  /** Subtasks of committed rounds, in dispatch order. */
  readonly subtasks: readonly SubtaskItem[];
  /** Results refused after a seal or cancellation, in key order (subtask, then generation). */
  readonly late: readonly LateItem[];
  /** Subtask items of a round whose commit marker is not written yet: not part of the manifest. */
  readonly uncommitted: readonly SubtaskItem[];
  /** Copies of hedged subtasks (`hedgeOf`), in dispatch order of what they race: not part of the manifest. */
  readonly copies?: readonly SubtaskItem[];
}

/**
 * Usage of a subtask, read from its counters: what was reserved, whether or not the calls succeeded.
 *
 * @example
 * subtaskUsage({ ...item, callsLimit: 4, callsLeft: 1, costLimit: 28, costLeft: 7 }) // { modelCalls: 3, estimatedCost: 21 }
 */
export const subtaskUsage = (item: Pick<SubtaskItem, 'callsLimit' | 'callsLeft' | 'costLimit' | 'costLeft'>): Usage => ({
  modelCalls: item.callsLimit - item.callsLeft,
  estimatedCost: item.costLimit - item.costLeft,
});

/** Usage of a whole run, read from the run budget counters. Same arithmetic as {@link subtaskUsage}. */
export const runUsage = (run: Pick<RunItem, 'callsLimit' | 'callsLeft' | 'costLimit' | 'costLeft'>): Usage => subtaskUsage(run);

const TERMINAL = new Set<string>(TerminalState.options);

/** True for the five states a subtask ends in. @example isTerminal('timed_out') // true */
export const isTerminal = (state: string): state is TerminalState => TERMINAL.has(state);

/**
 * A subtask's state as its run decides it. Once a run is cancelled its subtasks can no longer end
 * any other way: the run condition refuses every later reservation and outcome. So a subtask
 * still live in the table is read as `cancelled` from the cancel on; the run's closing sweep
 * (`finishRun`) writes that state later, off the cancel's request. A seal that landed first
 * (`timed_out`) stays what it is.
 *
 * @example
 * stateAsRunDecides({ status: 'cancelled' }, 'running') // 'cancelled'
 */
export const stateAsRunDecides = <S extends string>(run: Pick<RunItem, 'status'>, state: S): S | 'cancelled' =>
  run.status === 'cancelled' && !isTerminal(state) ? 'cancelled' : state;

/**
 * A stored subtask as reads show it: a live subtask of a cancelled run is cancelled by the cancel
 * itself ({@link stateAsRunDecides}), at the run's `cancelledAt`.
 *
 * @example
 * asRunDecides(cancelledRun)(pendingItem).state // 'cancelled'
 */
export const asRunDecides =
  (run: Pick<RunItem, 'status' | 'cancelledAt'>) =>
  (item: SubtaskItem): SubtaskItem =>
    stateAsRunDecides(run, item.state) === item.state
      ? item
      : { ...item, state: 'cancelled', closedBy: 'cancel', ...(run.cancelledAt === undefined ? {} : { closedAt: run.cancelledAt }) };

/**
 * The outcome of a terminal subtask as reconcile consumes it; `undefined` while it is live.
 * Sealed and cancelled subtasks get an outcome too (no observation, usage from the counters),
 * so the outcome list always matches the dispatched list once everything has ended.
 *
 * @example
 * toOutcome(sealedItem) // { subtaskId: 'C', state: 'timed_out', observed: null, reason: 'deadline … passed; never claimed…', … }
 */
export const toOutcome = (item: SubtaskItem): Outcome | undefined => {
  if (!isTerminal(item.state)) return undefined;
  const stored = item.outcome;
  const reason = describeSubtask(item);
  return {
    subtaskId: item.subtaskId,
    state: item.state,
    observed: stored?.observed ?? null,
    sources: stored?.sources ?? [],
    sourcesReached: stored?.sourcesReached ?? 0,
    ...(stored?.findings === undefined ? {} : { findings: stored.findings }),
    usage: subtaskUsage(item),
    ...(reason === undefined ? {} : { reason }),
    refusals: stored?.refusals ?? [],
    ...(stored?.baseline === undefined ? {} : { baseline: stored.baseline }),
    // A timed-out subtask keeps what its worker read before the deadline (docs/workers.md, "Checkpoints"),
    // and one that handed over to its hedge pieces the prefix it handed over (docs/hedging.md, "Handover").
    ...((item.state === 'timed_out' || item.handedOverAt !== undefined) && item.checkpoint !== undefined ? { checkpoint: item.checkpoint } : {}),
  };
};

const lateEvidence = (item: LateItem): LateEvidence => ({
  receivedAt: item.receivedAt,
  generation: item.generation,
  refusedBecause: item.refusedBecause,
  outcome: item.outcome,
});

/**
 * One subtask as the run resource shows it (the worker input is left out: it can be large and
 * is the worker's business); for a hedged subtask, its race's copies and winner.
 *
 * @example
 * toSubtaskView(item, []).state // 'running'
 */
export const toSubtaskView = (item: SubtaskItem, late: readonly LateItem[], copies: readonly SubtaskItem[] = []): SubtaskView => {
  const { input: _input, ...assignment } = item.assignment;
  const stored = item.outcome;
  const reason = describeSubtask(item, late);
  const sourcesReached = stored?.sourcesReached ?? 0;
  return {
    ...assignment,
    state: item.state,
    observed: stored?.observed ?? null,
    sources: stored?.sources ?? [],
    sourcesReached,
    usage: subtaskUsage(item),
    ...(reason === undefined ? {} : { reason }),
    refusals: stored?.refusals ?? [],
    ...(stored?.baseline === undefined ? {} : { baseline: stored.baseline }),
    ...(item.state === 'empty' && sourcesReached === 0 ? { sourceUnreachable: true } : {}),
    ...(late.length === 0 ? {} : { late: late.map(lateEvidence) }),
    ...(item.checkpoint === undefined || (isTerminal(item.state) && item.state !== 'timed_out' && item.handedOverAt === undefined)
      ? {}
      : { checkpoint: item.checkpoint }),
    ...(item.handedOverAt === undefined ? {} : { handedOverAt: item.handedOverAt }),
    ...(item.hedgeWinner === undefined ? {} : { hedgeWinner: item.hedgeWinner }),
    ...(copies.length === 0 ? {} : { hedgeCopies: copies.map((copy) => ({ id: copy.subtaskId, assigned: copy.assignment.assigned, state: copy.state })) }),
  };
};

/**
 * Subtasks as the run resource and the subtask pages show them, each with its late evidence and,
 * for a hedged subtask, its race's copies (items whose `hedgeOf` names it).
 *
 * @example
 * toSubtaskViews(record.subtasks, record.late, record.copies).map((view) => view.id) // ['A', 'B', 'C', 'D']
 */
export const toSubtaskViews = (subtasks: readonly SubtaskItem[], late: readonly LateItem[], copies: readonly SubtaskItem[] = []): SubtaskView[] => {
  const lateBySubtask = new Map<string, LateItem[]>();
  for (const item of late) lateBySubtask.set(item.subtaskId, [...(lateBySubtask.get(item.subtaskId) ?? []), item]);
  const copiesBySubtask = new Map<string, SubtaskItem[]>();
  for (const copy of copies) if (copy.hedgeOf !== undefined) copiesBySubtask.set(copy.hedgeOf, [...(copiesBySubtask.get(copy.hedgeOf) ?? []), copy]);
  return subtasks.map((item) => toSubtaskView(item, lateBySubtask.get(item.subtaskId) ?? [], copiesBySubtask.get(item.subtaskId) ?? []));
};

const countByState = (subtasks: readonly Pick<SubtaskItem, 'state'>[]): Record<string, number> => {
  const counts = Object.fromEntries(SubtaskState.options.flatMap((option) => option.options).map((state) => [state, 0]));
  for (const item of subtasks) counts[item.state] = (counts[item.state] ?? 0) + 1;
  return counts;
};

/**
 * The `progress` of a run resource and of a run summary, from its committed subtasks' states.
 *
 * @example
 * runProgress([{ state: 'ok' }, { state: 'running' }]) // { dispatched: 2, terminal: 1, byState: { pending: 0, running: 1, ok: 1, … } }
 */
export const runProgress = (subtasks: readonly Pick<SubtaskItem, 'state'>[]): RunProgress => ({
  dispatched: subtasks.length,
  terminal: subtasks.filter((item) => isTerminal(item.state)).length,
  byState: countByState(subtasks),
});

/**
 * Maps a stored run to `GET /runs/{runId}`'s body, validated against the contract schema.
 * Only committed rounds appear; progress counts every state; usage is the run's counters.
 *
 * @example
 * const record = await ledger.getRun(tenantId, runId);
 * return record ? ok(toRunResource(record)) : notFound();
 */
export const toRunResource = (record: RunRecord): RunResource =>
  runResourceOf(
    { run: record.run, meta: record.meta, progress: runProgress(record.subtasks) },
    toSubtaskViews(record.subtasks, record.late, record.copies ?? []),
  );

/**
 * What the paged forms of a run resource read, without reading every subtask: the run and meta
 * items, the progress counted from the committed subtasks' states (`committedProgress`), and one
 * page of subtasks in id order (none for `?subtasks=none`).
 */
export interface RunPageRecord {
  readonly run: RunItem;
  readonly meta: MetaItem;
  readonly progress: RunProgress;
  /** Absent when no page was asked for (`limit` 0). */
  readonly page?: {
    /** Committed subtasks in id order, each as reads show it (`asRunDecides`). */
    readonly subtasks: readonly SubtaskItem[];
    readonly late: readonly LateItem[];
    readonly copies: readonly SubtaskItem[];
    /** Whether committed subtasks follow the page's last one. */
    readonly more: boolean;
  };
}

/**
 * A run resource holding one page of its subtasks (in id order); the caller adds `subtasksPage`.
 * Everything else is what {@link toRunResource} maps from the whole run.
 *
 * @example
 * toPagedRunResource(await ledger.getRunPage({ tenantId, runId, limit: 100 })).subtasks.length // 100
 */
export const toPagedRunResource = (record: RunPageRecord): RunResource =>
  runResourceOf(record, record.page === undefined ? [] : toSubtaskViews(record.page.subtasks, record.page.late, record.page.copies));

const runResourceOf = (head: Pick<RunPageRecord, 'run' | 'meta' | 'progress'>, subtasks: readonly SubtaskView[]): RunResource => {
  const { run, meta, progress } = head;
  return RunResource.parse({
    runId: run.runId,
    status: run.status,
    goal: meta.goal,
    createdAt: run.createdAt,
    updatedAt: run.updatedAt,
    universe: meta.universe,
    round: run.round,
    progress,
    budget: { modelCalls: run.callsLimit, costLimit: run.costLimit },
    usage: runUsage(run),
    subtasks,
    answer: run.answer ?? null,
    ...(run.error === undefined ? {} : { error: run.error }),
  });
};

/** The manifest's subtasks in dispatch order, as the domain's reconcile reads them. */
export const dispatchedSubtasks = (subtasks: readonly SubtaskItem[]): DispatchedSubtask[] => subtasks.map((item) => item.assignment);

/**
 * `@tessera-fanout/tessera/testing`: runs one worker kind offline, against your own fixtures, with
 * no AWS, and returns its outcome as the pipeline records it.
 *
 * It is the worker Lambda's own path, not a copy of it: `runSubtask` (the SDK the Lambda calls)
 * runs the kind with its scoped tools, so `observed` is what the tools recorded; the in-memory
 * allowance refuses reservations as the ledger does (`BudgetExhausted`, `DeadlinePassed`); the
 * result is bounded, stored and read back with the ledger's own mappers, so `usage` comes from
 * the counters and a subtask that missed its deadline reads as the seal writes it; and the
 * coverage is computed by reconcile, with the assignment as the whole universe.
 *
 * @example
 * import { runOffline } from '@tessera-fanout/tessera/testing';
 * const { outcome, coverage } = await runOffline({ registry, worker: 'todo-review', assigned: { files: [{ path: 'src/a.ts' }] } });
 * // outcome.observed: { files: [{ path: 'src/a.ts' }], recordCount: 12 }; coverage.complete: true
 *
 * @packageDocumentation
 */
import type { z } from 'zod';
import { DispatchedSubtask, Manifest, Outcome, Scope, SubtaskBudget, type Coverage, type OutcomeInput, type Usage } from '../contract';
import { allowanceOf } from '../domain/allowance';
import { buildCoverage } from '../domain/coverage';
import { toPlainJson } from '../ledger/canonical';
import { BudgetExhausted, DeadlinePassed } from '../ledger/errors';
import { toStoredOutcome, type StoredOutcome, type SubtaskItem } from '../ledger/items';
import { boundOutcome } from '../ledger/size';
import { toOutcome } from '../ledger/view';
import type { BudgetPort } from '../workers/model';
import { createModelProvider, parseModelConfig, type ModelProvider } from '../workers/models/provider';
import type { WorkerRegistry } from '../workers/registry';
import { runSubtask } from '../workers/run-subtask';
import type { SetTimer } from '../workers/session';

/**
 * A clock that moves only when told to. The SDK reads the time and starts the deadline timer on
 * it, so advancing it past a subtask's deadline stops the worker exactly as the deadline would.
 *
 * @example
 * const clock = createTestClock('2025-06-01T12:00:00Z');
 * clock.advance(30_000); // fires every timer due in the next 30 s, in order
 */
export interface TestClock {
  /** Epoch milliseconds. */
  now(): number;
  /** Timers on this clock fire when `advance` reaches them. */
  readonly setTimer: SetTimer;
  /** Moves the clock forward by `ms`, firing each timer that falls due, earliest first. */
  advance(ms: number): void;
}

/** Where a test clock starts unless told otherwise. */
const DEFAULT_START = '2025-01-01T00:00:00.000Z';

/**
 * @param start the initial time: epoch milliseconds or an ISO instant. @defaultValue 2025-01-01T00:00:00.000Z
 * @example
 * const clock = createTestClock(); // 2025-01-01T00:00:00.000Z until advanced
 */
export const createTestClock = (start: number | string = DEFAULT_START): TestClock => {
  let time = typeof start === 'number' ? start : Date.parse(start);
  if (!Number.isFinite(time)) throw new RangeError(`createTestClock: ${String(start)} is not a time`);
  let sequence = 0;
  const timers = new Map<number, { at: number; callback: () => void }>();
  const due = (until: number) => {
    let next: [number, { at: number; callback: () => void }] | undefined;
    for (const entry of timers) if (entry[1].at <= until && (next === undefined || entry[1].at < next[1].at)) next = entry;
    return next;
  };
  return {
    now: () => time,
    setTimer: (callback, delayMs) => {
      const id = (sequence += 1);
      timers.set(id, { at: time + Math.max(0, delayMs), callback });
      return () => void timers.delete(id);
    },
    advance: (ms) => {
      if (!(ms >= 0)) throw new RangeError(`advance: ${ms} is not a non-negative number of milliseconds`);
      const target = time + ms;
      for (let next = due(target); next !== undefined; next = due(target)) {
        timers.delete(next[0]);
        time = next[1].at;
        next[1].callback();
      }
      time = target;
    },
  };
};

/**
 * The durable allowance of one subtask, in memory: its counters count down like the ledger's and
 * are shared by every run given it, as the ledger's are shared by the generations of a claim.
 *
 * @example
 * const allowance = createTestAllowance({ modelCalls: 2, estimatedCostPerCall: 7 });
 * await runOffline({ registry, worker: 'tax-statements', assigned, allowance });
 * allowance.usage() // { modelCalls: 2, estimatedCost: 14 }
 */
export interface TestAllowance {
  readonly budget: SubtaskBudget;
  /** What has been reserved so far: calls, and their cost at the fixed estimate. */
  usage(): Usage;
}

interface Counters {
  callsLeft: number;
  costLeft: number;
}

const COUNTERS = new WeakMap<TestAllowance, Counters>();

/**
 * @example
 * createTestAllowance({ modelCalls: 4, estimatedCostPerCall: 7 }).usage() // { modelCalls: 0, estimatedCost: 0 }
 */
export const createTestAllowance = (budget: z.input<typeof SubtaskBudget>): TestAllowance => {
  const parsed = SubtaskBudget.parse(budget);
  const limits = allowanceOf(parsed);
  const counters: Counters = { callsLeft: limits.modelCalls, costLeft: limits.cost };
  const allowance: TestAllowance = {
    budget: parsed,
    usage: () => ({ modelCalls: limits.modelCalls - counters.callsLeft, estimatedCost: limits.cost - counters.costLeft }),
  };
  COUNTERS.set(allowance, counters);
  return allowance;
};

/** The allowance a run gets when it names neither `budget` nor `allowance`. */
export const DEFAULT_TEST_BUDGET: SubtaskBudget = Object.freeze({ modelCalls: 4, estimatedCostPerCall: 1 });

/**
 * @example
 * runOffline({ registry, worker: 'todo-review', assigned: { files: [{ path: 'a.ts' }] }, clock: createTestClock() });
 */
export interface RunOfflineOptions {
  /** The registry of your worker module (`createRegistry([...])`). */
  readonly registry: WorkerRegistry;
  /** The kind to run. */
  readonly worker: string;
  /** The subtask's scope, in the kind's dimension: `{ from, toExclusive }`, `{ ids }` or `{ files }`. */
  readonly assigned: z.input<typeof Scope>;
  /** The subtask's `input`, checked against the kind's input schema as dispatch would. */
  readonly input?: unknown;
  readonly questionIds?: readonly string[];
  /** @defaultValue 'S1' */
  readonly subtaskId?: string;
  /** The subtask's allowance. @defaultValue {@link DEFAULT_TEST_BUDGET}, or the `allowance`'s */
  readonly budget?: z.input<typeof SubtaskBudget>;
  /** Counters to reserve from, shared with other runs (a later generation of the same subtask). */
  readonly allowance?: TestAllowance;
  /** The subtask's `model` field: `offline` (default), `offline:broaden`, or a model your `models` allow. */
  readonly model?: string;
  /** @defaultValue the offline model, as a deployment without `MODEL_PROVIDER` */
  readonly models?: ModelProvider;
  /** The deadline, from the clock's time at the start. @defaultValue 60000 */
  readonly deadlineInMs?: number;
  /** @defaultValue the real clock (`Date.now` and `setTimeout`) */
  readonly clock?: Pick<TestClock, 'now' | 'setTimer'>;
  /** Cancels the run, as `DELETE /runs/{runId}` would. */
  readonly signal?: AbortSignal;
}

/** What one offline run produced. */
export interface OfflineRun {
  /** The subtask as dispatched: absolute deadline, allowance, scope, input. */
  readonly subtask: DispatchedSubtask;
  /** The outcome as the ledger holds it and reconcile reads it (usage from the counters). */
  readonly outcome: Outcome;
  /**
   * What the worker handed in. The ledger keeps a result that arrives after the deadline or a
   * cancellation only as late evidence; then it differs from `outcome`. `undefined` when the
   * worker never started.
   */
  readonly reported: OutcomeInput | undefined;
  /** The coverage reconcile computes for this subtask, its assignment being the whole universe. */
  readonly coverage: Coverage;
}

const realClock: Pick<TestClock, 'now'> & { readonly setTimer?: SetTimer } = { now: Date.now };

/** `reserveBudget` of the ledger, for one subtask's counters: deadline first, then calls, then cost. */
const budgetPort = (allowance: TestAllowance, subtaskId: string, deadlineMs: number, now: () => number): BudgetPort => ({
  reserve: async () => {
    const counters = COUNTERS.get(allowance);
    if (counters === undefined) throw new TypeError('runOffline: the allowance was not made by createTestAllowance');
    if (deadlineMs <= now()) throw new DeadlinePassed({ subtaskId, deadline: new Date(deadlineMs).toISOString() });
    const cost = allowance.budget.estimatedCostPerCall;
    if (counters.callsLeft < 1) throw new BudgetExhausted({ subtaskId, limit: 'subtask', counter: 'calls', remaining: counters.callsLeft, requested: 1 });
    if (counters.costLeft < cost) throw new BudgetExhausted({ subtaskId, limit: 'subtask', counter: 'cost', remaining: counters.costLeft, requested: cost });
    counters.callsLeft -= 1;
    counters.costLeft -= cost;
  },
});

/** What `recordOutcome` stores: the contract's defaults, plain JSON findings, the ledger's size bounds. */
const stored = (reported: OutcomeInput) => {
  const outcome = boundOutcome({ ...Outcome.parse(reported), findings: toPlainJson(reported.findings) });
  return toStoredOutcome(outcome);
};

const iso = (ms: number): string => new Date(ms).toISOString();

/** The worker id of the claim an offline run holds (the Lambda request id in the pipeline); seal reasons name it. */
export const OFFLINE_WORKER_ID = 'offline';

/** The subtask after `recordOutcome`: the stored state is the bounded outcome's, not the worker's. */
const recordedAs = (item: SubtaskItem, outcome: StoredOutcome, now: number): SubtaskItem => ({
  ...item,
  state: outcome.state,
  outcome,
  outcomeGeneration: 1,
  finishedAt: iso(now),
});

/**
 * Runs one subtask of `worker` through the worker SDK, offline, and returns its outcome as the
 * pipeline records it, with the coverage reconcile derives from it.
 *
 * As in the pipeline: a subtask whose deadline has passed (or whose run was cancelled) before it
 * starts is never claimed; one that stops at its deadline is sealed `timed_out` with no
 * observation; a cancelled one is closed `cancelled`; everything else is recorded as the SDK
 * classified it. It throws what the worker Lambda would not record either: an unknown kind, or a
 * `TransientFailure` (the queue would deliver the message again).
 *
 * @example
 * const { outcome, coverage } = await runOffline({ registry, worker: 'todo-review', assigned: { files: [{ path: 'a.ts' }, { path: 'b.ts' }] } });
 * // a worker that never read b.ts: coverage.complete === false, coverage.gaps[0].files === [{ path: 'b.ts' }]
 */
export const runOffline = async (options: RunOfflineOptions): Promise<OfflineRun> => {
  const kind = options.registry.get(options.worker);
  const clock = options.clock ?? realClock;
  const startedAt = clock.now();
  const allowance = options.allowance ?? createTestAllowance(options.budget ?? DEFAULT_TEST_BUDGET);
  const subtask = DispatchedSubtask.parse({
    id: options.subtaskId ?? 'S1',
    worker: options.worker,
    round: 1,
    questionIds: [...(options.questionIds ?? [])],
    assigned: options.assigned,
    deadline: iso(startedAt + (options.deadlineInMs ?? 60_000)),
    budget: allowance.budget,
    ...(options.input === undefined ? {} : { input: options.input }),
    ...(options.model === undefined ? {} : { model: options.model }),
  });
  const deadlineMs = Date.parse(subtask.deadline ?? '');
  let cancelledAt: number | undefined;
  const onAbort = () => void (cancelledAt ??= clock.now());
  if (options.signal?.aborted) onAbort();
  options.signal?.addEventListener('abort', onAbort, { once: true });

  // claimSubtask refuses a subtask whose deadline passed or whose run ended: nothing runs.
  const claimed = cancelledAt === undefined && clock.now() < deadlineMs;
  let reported: OutcomeInput | undefined;
  try {
    if (claimed) {
      reported = await runSubtask({
        subtask,
        registry: options.registry,
        models: options.models ?? createModelProvider({ config: parseModelConfig({}) }),
        budget: budgetPort(allowance, subtask.id, deadlineMs, clock.now),
        now: clock.now,
        ...(clock.setTimer === undefined ? {} : { setTimer: clock.setTimer }),
        ...(options.signal === undefined ? {} : { signal: options.signal }),
      });
    }
  } finally {
    options.signal?.removeEventListener('abort', onAbort);
  }

  const now = clock.now();
  const usage = allowance.usage();
  const limits = allowanceOf(allowance.budget);
  const item: SubtaskItem = {
    pk: 'testing',
    sk: `SUB#${subtask.id}`,
    entity: 'subtask',
    subtaskId: subtask.id,
    round: subtask.round,
    position: 0,
    assignment: subtask,
    assignmentHash: '',
    dispatchedAt: iso(startedAt),
    deadlineMs,
    costPerCall: allowance.budget.estimatedCostPerCall,
    callsLimit: limits.modelCalls,
    costLimit: limits.cost,
    callsLeft: limits.modelCalls - usage.modelCalls,
    costLeft: limits.cost - usage.estimatedCost,
    state: 'running',
    generation: claimed ? 1 : 0,
    ...(claimed ? { workerId: OFFLINE_WORKER_ID } : {}),
    updatedAt: iso(now),
  };
  // The order of the ledger's conditions: a closed run refuses the result, then a passed deadline.
  const recorded: SubtaskItem =
    cancelledAt !== undefined
      ? { ...item, state: 'cancelled', closedBy: 'cancel', closedAt: iso(cancelledAt) }
      : reported === undefined || reported.state === 'timed_out' || now >= deadlineMs
        ? { ...item, state: 'timed_out', sealedAt: iso(Math.max(now, deadlineMs)) }
        : recordedAs(item, stored(reported), now);
  const outcome = toOutcome(recorded);
  if (outcome === undefined) throw new Error(`runOffline: subtask ${subtask.id} did not end`);
  const manifest = Manifest.parse({
    universe: { dimension: kind.dimension, ...subtask.assigned },
    subtasks: [subtask],
    sources: options.registry.sources(),
  });
  return { subtask, outcome, reported, coverage: buildCoverage(manifest, [outcome]) };
};

import fc from 'fast-check';
import { randomUUID } from 'node:crypto';
import { TesseraApiError, type TesseraClient } from '../../lib/client';
import { TerminalState, type RunRequestInput, type RunResource } from '../../lib/contract';
import type { SubtaskMessage } from '../../lib/queue/message';

/**
 * Random fault schedules for the `chaos` worker kind, the driver that plays one against a tessera
 * API, and the invariants every run must keep whatever the schedule did. The e2e property suite
 * (test/e2e/chaos.e2e.test.ts) and the chaos benchmark (bench/chaos.bench.ts) share them.
 */

/** What one subtask does wrong, and what the harness does to its message. */
export interface SubtaskFaults {
  /** The chaos kind's fault (examples/app/chaos.ts). */
  readonly fault: 'none' | 'ignore-deadline' | 'transient' | 'malformed' | 'crash';
  /** `ignore-deadline`: work after reading; past the deadline it hands in a late result. */
  readonly delayMs: number;
  /** `transient`: milliseconds after submission from which deliveries succeed; `null`: never (a poison message). */
  readonly recoversAfterMs: number | null;
  /** Model calls the worker makes; more than `allowance` runs it out of budget. */
  readonly modelCalls: number;
  /** The subtask's model-call allowance. */
  readonly allowance: number;
  /** Extra copies of its subtask message sent to the queue (SQS may deliver any message twice). */
  readonly duplicates: number;
  /** When the copies are sent, after the run's first round is dispatched. */
  readonly duplicateAfterMs: number;
  /** Carries a question, so losing it degrades the answer. */
  readonly asksQuestion: boolean;
}

/** One run: its subtasks' faults, deadlines, policy, run budget and a cancel at a random time. */
export interface Schedule {
  readonly subtasks: readonly SubtaskFaults[];
  readonly deadlineSeconds: number;
  /** Retries per `timed_out` and `invalid` subtask (in later rounds, while `maxRounds` allows). */
  readonly retries: number;
  readonly maxRounds: number;
  /** The run's model-call budget as a share of the subtasks' allowances (0–1]. */
  readonly runBudgetShare: number;
  /** Cancel the run this long after submission; `null`: never. */
  readonly cancelAfterMs: number | null;
}

/** Deadlines are short so that hundreds of runs fit in minutes; every fault plays out within them. */
const DEADLINE_SECONDS = { min: 2, max: 4 } as const;

const subtaskFaults: fc.Arbitrary<SubtaskFaults> = fc.record({
  fault: fc.constantFrom('none', 'none', 'ignore-deadline', 'transient', 'malformed', 'crash'),
  delayMs: fc.integer({ min: 0, max: (DEADLINE_SECONDS.max + 2) * 1000 }),
  // One transient subtask in three never recovers: a poison message, dead-lettered.
  recoversAfterMs: fc.oneof({ weight: 2, arbitrary: fc.integer({ min: 0, max: 5_000 }) }, { weight: 1, arbitrary: fc.constant(null) }),
  modelCalls: fc.integer({ min: 0, max: 3 }),
  allowance: fc.integer({ min: 1, max: 2 }),
  duplicates: fc.integer({ min: 0, max: 2 }),
  duplicateAfterMs: fc.integer({ min: 0, max: 4_000 }),
  asksQuestion: fc.boolean(),
});

/**
 * A run's fault schedule.
 *
 * @example
 * fc.sample(scheduleArbitrary, { seed: 42, numRuns: 1 })[0]
 */
export const scheduleArbitrary: fc.Arbitrary<Schedule> = fc.record({
  subtasks: fc.array(subtaskFaults, { minLength: 1, maxLength: 4 }),
  deadlineSeconds: fc.integer(DEADLINE_SECONDS),
  retries: fc.integer({ min: 0, max: 1 }),
  maxRounds: fc.integer({ min: 1, max: 2 }),
  runBudgetShare: fc.double({ min: 0.25, max: 1, noNaN: true }),
  // One run in four is cancelled, at any time from before dispatch to after its end.
  cancelAfterMs: fc.oneof({ weight: 3, arbitrary: fc.constant(null) }, { weight: 1, arbitrary: fc.integer({ min: 0, max: 6_000 }) }),
});

const COST_PER_CALL = 2;

/**
 * The run request of a schedule: one `chaos` subtask per entry, each owning one id of the universe.
 *
 * @example
 * chaosRequest(schedule, Date.now()).subtasks?.[0]?.worker // 'chaos'
 */
export const chaosRequest = (schedule: Schedule, submittedAt: number): RunRequestInput => {
  const ids = schedule.subtasks.map((_, index) => `item-${index + 1}`);
  const allowances = schedule.subtasks.reduce((sum, s) => sum + s.allowance, 0);
  const runCalls = Math.max(1, Math.floor(allowances * schedule.runBudgetShare));
  return {
    goal: `Chaos: ${schedule.subtasks.map((s) => s.fault).join(', ')}`,
    universe: { dimension: 'ids', ids },
    // Every question a subtask is given is declared (the planner refuses an undeclared one).
    ...(schedule.subtasks.some((s) => s.asksQuestion)
      ? { questions: schedule.subtasks.flatMap((s, index) => (s.asksQuestion ? [{ id: `q${index + 1}` }] : [])) }
      : {}),
    subtasks: schedule.subtasks.map((s, index) => ({
      id: `S${index + 1}`,
      worker: 'chaos',
      scope: { ids: [ids[index] as string] },
      ...(s.asksQuestion ? { questionIds: [`q${index + 1}`] } : {}),
      input: {
        fault: s.fault,
        delayMs: s.delayMs,
        modelCalls: s.modelCalls,
        ...(s.fault === 'transient' && s.recoversAfterMs !== null ? { recoversAt: new Date(submittedAt + s.recoversAfterMs).toISOString() } : {}),
      },
      deadlineSeconds: schedule.deadlineSeconds,
      // Planning refuses a subtask allowance beyond the run's budget; the run's budget still runs
      // out first when the subtasks together ask for more than it holds.
      budget: { modelCalls: Math.min(s.allowance, runCalls), estimatedCostPerCall: COST_PER_CALL },
    })),
    policy: { retry: { timed_out: schedule.retries, invalid: schedule.retries, empty: 0 }, maxRounds: schedule.maxRounds },
    budget: { modelCalls: runCalls, costLimit: runCalls * COST_PER_CALL },
  };
};

/** Where a schedule is played: the API, and a way to put a subtask message on the chaos queue. */
export interface ChaosTarget {
  readonly client: TesseraClient;
  readonly tenantId: string;
  deliver(message: SubtaskMessage): Promise<void>;
}

/** What a run looked like when it ended, and again after its late results had time to land. */
export interface PlayedRun {
  readonly schedule: Schedule;
  readonly runId: string;
  /** The last read within the wait: ended with its answer, unless the run never ended. */
  readonly ended: RunResource | null;
  readonly settled: RunResource | null;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A 5xx answer or a connection that failed: worth asking again, as any client of an API would. */
const transient = (error: unknown): boolean =>
  (error instanceof TesseraApiError && error.status >= 500) || (error instanceof TypeError && error.message === 'fetch failed');

/** Calls the API, asking again after a transient failure until `giveUpAt`; other errors propagate. */
const retrying = async <T>(call: () => Promise<T>, giveUpAt: number): Promise<T> => {
  for (let attempt = 1; ; attempt += 1) {
    try {
      return await call();
    } catch (error) {
      if (!transient(error) || Date.now() > giveUpAt) throw error;
      await sleep(Math.min(2_000, 200 * attempt));
    }
  }
};

const ended = (run: RunResource) => run.status !== 'running' && run.answer !== null;

const dispatched = async (client: TesseraClient, runId: string, giveUpAt: number): Promise<boolean> => {
  while (Date.now() < giveUpAt) {
    const run = await retrying(() => client.getRun(runId), giveUpAt);
    if (run.progress.dispatched > 0 || run.status !== 'running') return run.progress.dispatched > 0;
    await sleep(100);
  }
  return false;
};

/** After the longest late result (`ignore-deadline` ends at most this long after its deadline) could land. */
const SETTLE_MS = 2_000;

/**
 * Submits a schedule's run, injects its harness faults (duplicates, a cancel) at their times,
 * waits for the run to end, then reads it again once late results could have landed.
 *
 * @example
 * const played = await playSchedule(target, schedule, { waitMs: 60_000 });
 */
export const playSchedule = async (target: ChaosTarget, schedule: Schedule, options: { waitMs: number }): Promise<PlayedRun> => {
  const submittedAt = Date.now();
  const giveUpAt = submittedAt + options.waitMs;
  // The idempotency key makes asking again after a lost answer safe: one run, whatever happened.
  const idempotencyKey = `chaos-${randomUUID()}`;
  const { runId } = await retrying(() => target.client.createRun(chaosRequest(schedule, submittedAt), { idempotencyKey }), giveUpAt);
  const injections: Promise<unknown>[] = [];
  if (schedule.cancelAfterMs !== null) {
    const after = schedule.cancelAfterMs;
    injections.push(
      sleep(after).then(() =>
        retrying(() => target.client.cancelRun(runId), giveUpAt).catch((error: unknown) => {
          // Cancelling a run that already ended is refused with 409: that is the API working.
          if (!(error instanceof TesseraApiError && error.status === 409)) throw error;
        }),
      ),
    );
  }
  injections.push(
    dispatched(target.client, runId, giveUpAt).then((ok) =>
      Promise.all(
        ok
          ? schedule.subtasks.map(async (s, index) => {
              await sleep(s.duplicateAfterMs);
              for (let copy = 0; copy < s.duplicates; copy += 1) {
                await target.deliver({ v: 1, tenantId: target.tenantId, runId, subtaskId: `S${index + 1}` });
              }
            })
          : [],
      ),
    ),
  );
  let last: RunResource | null = null;
  while (Date.now() < giveUpAt) {
    last = await retrying(() => target.client.getRun(runId), giveUpAt);
    if (ended(last)) break;
    await sleep(250);
  }
  await Promise.all(injections);
  await sleep(SETTLE_MS);
  const settled = await retrying(() => target.client.getRun(runId), Date.now() + options.waitMs);
  return { schedule, runId, ended: last, settled };
};

/** The invariants, each a name and the runs that break it. */
export interface InvariantCounts {
  readonly runs: number;
  readonly subtasks: number;
  /** Terminal states seen, over all subtasks of all runs. */
  readonly states: Readonly<Record<string, number>>;
  readonly statuses: Readonly<Record<string, number>>;
  /** Per invariant: how many runs broke it (0 everywhere is the expected result). */
  readonly violations: Readonly<Record<InvariantName, number>>;
}

export const INVARIANTS = {
  oneTerminalState: 'every dispatched subtask has exactly one terminal state',
  withinAllowance: 'no counter exceeds its allowance',
  runEnded: 'no run is left non-terminal',
  completeIffClean: 'coverage.complete is true exactly when no gap and no degraded line exists',
} as const;
export type InvariantName = keyof typeof INVARIANTS;

const TERMINAL = new Set<string>(TerminalState.options);

/**
 * What is wrong with one played run, invariant by invariant (empty lists when all hold).
 *
 * @example
 * violations(played).runEnded // [] when the run ended with its answer
 */
export const violations = (played: PlayedRun): Record<InvariantName, string[]> => {
  const found: Record<InvariantName, string[]> = { oneTerminalState: [], withinAllowance: [], runEnded: [], completeIffClean: [] };
  const { ended, settled } = played;
  if (ended === null || settled === null || ended.status === 'running' || ended.answer === null) {
    found.runEnded.push(`status ${ended?.status ?? 'unknown'}, answer ${ended?.answer ? 'present' : 'missing'}`);
    return found;
  }
  for (const run of [ended, settled]) {
    const ids = run.subtasks.map((s) => s.id);
    if (new Set(ids).size !== ids.length) found.oneTerminalState.push(`duplicate subtask ids: ${ids.join(',')}`);
    for (const s of run.subtasks) if (!TERMINAL.has(s.state)) found.oneTerminalState.push(`${s.id} is ${s.state}`);
    if (run.progress.dispatched !== run.subtasks.length || run.progress.terminal !== run.progress.dispatched) {
      found.oneTerminalState.push(`progress ${run.progress.terminal}/${run.progress.dispatched} of ${run.subtasks.length} subtasks`);
    }
    for (const s of run.subtasks) {
      const budget = s.budget;
      if (budget && (s.usage.modelCalls > budget.modelCalls || s.usage.estimatedCost > budget.modelCalls * budget.estimatedCostPerCall)) {
        found.withinAllowance.push(`${s.id} used ${JSON.stringify(s.usage)} of ${JSON.stringify(budget)}`);
      }
    }
    if (run.usage.modelCalls > run.budget.modelCalls || run.usage.estimatedCost > run.budget.costLimit) {
      found.withinAllowance.push(`run used ${JSON.stringify(run.usage)} of ${JSON.stringify(run.budget)}`);
    }
    const summed = run.subtasks.reduce(
      (sum, s) => ({ modelCalls: sum.modelCalls + s.usage.modelCalls, estimatedCost: sum.estimatedCost + s.usage.estimatedCost }),
      { modelCalls: 0, estimatedCost: 0 },
    );
    if (summed.modelCalls !== run.usage.modelCalls || summed.estimatedCost !== run.usage.estimatedCost) {
      found.withinAllowance.push(`run usage ${JSON.stringify(run.usage)} is not the sum of its subtasks' ${JSON.stringify(summed)}`);
    }
    const coverage = run.answer?.coverage;
    if (coverage && coverage.complete !== (coverage.gaps.length === 0 && coverage.degradedReason.length === 0)) {
      found.completeIffClean.push(`complete ${coverage.complete} with ${coverage.gaps.length} gaps and degraded [${coverage.degradedReason.join(', ')}]`);
    }
  }
  // A terminal state is final: reading the run again after late results landed shows the same one.
  const before = new Map(ended.subtasks.map((s) => [s.id, s.state]));
  for (const s of settled.subtasks) {
    if (before.has(s.id) && before.get(s.id) !== s.state) found.oneTerminalState.push(`${s.id} went from ${before.get(s.id)} to ${s.state}`);
  }
  if (settled.status !== ended.status) found.runEnded.push(`status went from ${ended.status} to ${settled.status}`);
  for (const name of Object.keys(found) as InvariantName[]) found[name] = [...new Set(found[name])];
  return found;
};

/**
 * Counts over many played runs: subtask states, run statuses, and the runs breaking each invariant.
 *
 * @example
 * countInvariants(played).violations.runEnded // 0
 */
export const countInvariants = (runs: readonly PlayedRun[]): InvariantCounts => {
  const states: Record<string, number> = {};
  const statuses: Record<string, number> = {};
  const broken: Record<InvariantName, number> = { oneTerminalState: 0, withinAllowance: 0, runEnded: 0, completeIffClean: 0 };
  let subtasks = 0;
  for (const played of runs) {
    const run = played.settled ?? played.ended;
    statuses[run?.status ?? 'unknown'] = (statuses[run?.status ?? 'unknown'] ?? 0) + 1;
    for (const s of run?.subtasks ?? []) {
      subtasks += 1;
      states[s.state] = (states[s.state] ?? 0) + 1;
    }
    const found = violations(played);
    for (const name of Object.keys(found) as InvariantName[]) if (found[name].length > 0) broken[name] += 1;
  }
  return { runs: runs.length, subtasks, states, statuses, violations: broken };
};

/**
 * Plays schedules with at most `concurrency` runs in flight at once.
 *
 * @example
 * const played = await playAll(target, schedules, { concurrency: 20, waitMs: 60_000 });
 */
export const playAll = async (target: ChaosTarget, schedules: readonly Schedule[], options: { concurrency: number; waitMs: number }): Promise<PlayedRun[]> => {
  const results: PlayedRun[] = new Array(schedules.length);
  let next = 0;
  const lane = async () => {
    while (next < schedules.length) {
      const index = next;
      next += 1;
      results[index] = await playSchedule(target, schedules[index] as Schedule, { waitMs: options.waitMs });
    }
  };
  await Promise.all(Array.from({ length: Math.min(options.concurrency, schedules.length) }, lane));
  return results;
};

import type { AslState, AslStateMachine } from '../lib/infra/asl';
import { InfraError } from '../lib/infra/errors';
import { STATE_NAMES } from '../lib/infra/run-state-machine';

/*
 * Counts what one subtask costs the run's state machine under the callback pattern we built and
 * under the poll-loop fallback, by walking the synthesized ASL, so docs/deadlines.md quotes
 * figures derived from the definition rather than from a sketch of it.
 */

/**
 * History events Step Functions records per state (HistoryEventType in the SFN API).
 * A Lambda task: TaskStateEntered, TaskScheduled, TaskStarted, TaskSucceeded, TaskStateExited;
 * a `.waitForTaskToken` task adds TaskSubmitted. Map adds MapStateEntered/Started/Succeeded/
 * Exited once, and MapIterationStarted/Succeeded per item.
 */
export const HISTORY_EVENTS = {
  task: 5,
  callbackTask: 6,
  choice: 2,
  wait: 2,
  succeed: 2,
  fail: 1,
  pass: 2,
  mapState: 4,
  mapIteration: 2,
  execution: 2,
} as const;

/** Step Functions' hard limit on one execution's history. */
export const HISTORY_EVENT_LIMIT = 25_000;

/** The region whose list prices {@link PRICES} holds. */
export const PRICES_REGION = 'us-east-1';

/**
 * Published list prices (USD) in {@link PRICES_REGION}, Lambda on arm64, each with the AWS pricing page that states it (DynamoDB:
 * the on-demand prices since the November 2024 reduction). Free tiers are left out. This is the
 * project's one price table: the deadline figures here and the pipeline benchmark both read it.
 */
export const PRICES = {
  stateTransition: {
    usd: 0.025 / 1000,
    text: '$0.025 per 1,000 state transitions (Standard workflows)',
    source: 'AWS Step Functions Pricing',
    page: 'https://aws.amazon.com/step-functions/pricing/',
  },
  lambdaRequest: { usd: 0.2 / 1_000_000, text: '$0.20 per 1M requests', source: 'AWS Lambda Pricing', page: 'https://aws.amazon.com/lambda/pricing/' },
  lambdaGbSecond: {
    usd: 0.0000133334,
    text: '$0.0000133334 per GB-second (arm64)',
    source: 'AWS Lambda Pricing',
    page: 'https://aws.amazon.com/lambda/pricing/',
  },
  sqsRequest: {
    usd: 0.4 / 1_000_000,
    text: '$0.40 per 1M requests (standard queue; each 64 KB of payload is one request)',
    source: 'Amazon SQS Pricing',
    page: 'https://aws.amazon.com/sqs/pricing/',
  },
  writeUnit: {
    usd: 0.625 / 1_000_000,
    text: '$0.625 per 1M write request units (on-demand, since November 2024)',
    source: 'Amazon DynamoDB Pricing for On-Demand Capacity',
    page: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
  readUnit: {
    usd: 0.125 / 1_000_000,
    text: '$0.125 per 1M read request units (on-demand, since November 2024)',
    source: 'Amazon DynamoDB Pricing for On-Demand Capacity',
    page: 'https://aws.amazon.com/dynamodb/pricing/on-demand/',
  },
} as const;

/** The assumed deadline-function invocation the cost column rests on: the construct's 512 MB default, 50 ms billed. */
export const DEADLINE_INVOCATION = { gb: 0.5, seconds: 0.05 } as const;

/** What walking one path through a state machine cost. */
export interface PathCost {
  /** States entered: what Standard workflows bill. */
  readonly transitions: number;
  readonly historyEvents: number;
  readonly lambdaInvocations: number;
  /** The states in the order they were entered. */
  readonly path: readonly string[];
}

/** Picks the branch a Choice takes, given how many times that Choice was entered before. */
export type ChoiceDecider = (choiceName: string, priorVisits: number) => string;

const eventsOf = (state: AslState): number => {
  switch (state.Type) {
    case 'Task':
      // A task that waits (a callback, or a child execution with `.sync`) records TaskSubmitted too.
      return state.Resource?.endsWith('.waitForTaskToken') || state.Resource?.includes(':states:startExecution.sync')
        ? HISTORY_EVENTS.callbackTask
        : HISTORY_EVENTS.task;
    case 'Choice':
      return HISTORY_EVENTS.choice;
    case 'Wait':
      return HISTORY_EVENTS.wait;
    case 'Succeed':
      return HISTORY_EVENTS.succeed;
    case 'Fail':
      return HISTORY_EVENTS.fail;
    case 'Map':
      return HISTORY_EVENTS.mapState;
    // No tessera state machine has a Parallel state; it is counted as a Pass, as it always was.
    case 'Pass':
    case 'Parallel':
      return HISTORY_EVENTS.pass;
  }
};

const isLambdaTask = (state: AslState): boolean => state.Type === 'Task' && (state.Resource ?? '').includes(':lambda:invoke');

const MAX_STEPS = 100_000;

/**
 * Walks one successful path from `StartAt` to a Succeed or Fail state, following `Next` and
 * asking `decide` at each Choice. A Map counts its own events only; iterations are the caller's.
 *
 * @example
 * walkPath(iteration, () => 'Await') // callback: Arm → IsSubtaskOpen → Await → SubtaskDone
 */
export const walkPath = (machine: AslStateMachine, decide: ChoiceDecider): PathCost => {
  const visits = new Map<string, number>();
  const path: string[] = [];
  let historyEvents = 0;
  let lambdaInvocations = 0;
  let name: string | undefined = machine.StartAt;
  while (name !== undefined) {
    const state: AslState | undefined = machine.States[name];
    if (!state) throw new InfraError(`state ${name} is not defined`);
    if (path.length >= MAX_STEPS) throw new InfraError(`path did not end within ${MAX_STEPS} states`);
    path.push(name);
    historyEvents += eventsOf(state);
    if (isLambdaTask(state)) lambdaInvocations += 1;
    const prior: number = visits.get(name) ?? 0;
    visits.set(name, prior + 1);
    name = state.Type === 'Choice' ? decide(name, prior) : state.End ? undefined : state.Next;
  }
  return { transitions: path.length, historyEvents, lambdaInvocations, path };
};

/** The subtask iteration: the item processor of the batch machine's AwaitBatchSubtasks Map. */
export const subtaskIteration = (batch: AslStateMachine): AslStateMachine => {
  const processor = batch.States[STATE_NAMES.awaitBatchSubtasks]?.ItemProcessor;
  if (!processor) throw new InfraError(`${STATE_NAMES.awaitBatchSubtasks} has no ItemProcessor`);
  return processor;
};

/**
 * The poll-loop fallback built from the same iteration: `Await` becomes a Wait of `pollSeconds`
 * that goes back to `Arm`, which is exactly the check a poll loop repeats.
 */
export const pollLoopIteration = (iteration: AslStateMachine, pollSeconds: number): AslStateMachine => ({
  ...iteration,
  States: { ...iteration.States, [STATE_NAMES.await]: { Type: 'Wait', Seconds: pollSeconds, Next: STATE_NAMES.arm } },
});

/** Callback path of one subtask that finishes before its deadline. */
export const callbackSubtaskCost = (iteration: AslStateMachine): PathCost =>
  walkPath(iteration, (choice) => (choice === STATE_NAMES.isSubtaskOpen ? STATE_NAMES.await : fail(choice)));

/**
 * Callback path of one subtask that misses its deadline: Await's `States.Timeout` catcher leads
 * to Seal, modelled by pointing Await's `Next` there (a timed-out task records TaskTimedOut in
 * place of TaskSucceeded, so the event count is the same).
 */
export const callbackTimeoutCost = (iteration: AslStateMachine): PathCost =>
  walkPath(timingOut(iteration, STATE_NAMES.await), (choice) => (choice === STATE_NAMES.isSubtaskOpen ? STATE_NAMES.await : fail(choice)));

/**
 * Callback path of one hedged subtask that finishes after its hedge started: AwaitHedge times
 * out when the hedge is due (modelled as in `callbackTimeoutCost`), Hedge starts the copies, and
 * the second Arm waits for the deadline as without a hedge.
 */
export const callbackHedgedCost = (iteration: AslStateMachine): PathCost =>
  walkPath(timingOut(iteration, STATE_NAMES.awaitHedge), (choice, prior) =>
    choice === STATE_NAMES.isSubtaskOpen ? (prior === 0 ? STATE_NAMES.awaitHedge : STATE_NAMES.await) : fail(choice),
  );

/** The iteration with `taskName`'s `Next` pointed at its `States.Timeout` catcher's target. */
const timingOut = (iteration: AslStateMachine, taskName: string): AslStateMachine => {
  const task = iteration.States[taskName];
  const timeoutTarget = task?.Catch?.find((c) => c.ErrorEquals.includes('States.Timeout'))?.Next;
  if (!task || !timeoutTarget) throw new InfraError(`${taskName} has no States.Timeout catcher`);
  // A task that ends the iteration on success (`End`) hands over to its catcher when it times out.
  const { End: _ends, ...rest } = task;
  return { ...iteration, States: { ...iteration.States, [taskName]: { ...rest, Next: timeoutTarget } } };
};

/** Poll path of one subtask that finishes `durationSeconds` after dispatch, checked every `pollSeconds`. */
export const pollSubtaskCost = (iteration: AslStateMachine, durationSeconds: number, pollSeconds: number): PathCost =>
  walkPath(pollLoopIteration(iteration, pollSeconds), (choice, prior) => {
    if (choice !== STATE_NAMES.isSubtaskOpen) return fail(choice);
    // The check entered for the n-th time runs at n × pollSeconds after dispatch.
    return prior * pollSeconds >= durationSeconds ? STATE_NAMES.subtaskDone : STATE_NAMES.await;
  });

/** Events of one batch's child execution outside its subtask iterations (the execution, LoadBatch, the Map state). */
export const batchOverheadEvents = (batch: AslStateMachine): number => HISTORY_EVENTS.execution + walkPath(batch, fail).historyEvents;

/** Every state a state can hand over to: `Next`, each Choice branch and `Default`, each Catch target. */
const successors = (state: AslState): string[] => [
  ...(state.Next === undefined ? [] : [state.Next]),
  ...(state.Choices ?? []).flatMap((choice) => (typeof choice.Next === 'string' ? [choice.Next] : [])),
  ...(state.Default === undefined ? [] : [state.Default]),
  ...(state.Catch ?? []).map((c) => c.Next),
];

/**
 * The most history events any path from `from` to an end records, entering no state twice (a
 * loop back, such as NextRound? → Dispatch, is the next round and is counted per round). A caught
 * task records its failure in place of TaskSucceeded, so its events are the same.
 *
 * @example
 * worstPathEvents(subtaskIteration(batchAsl)) // Arm → IsSubtaskOpen → Await → WaitForDeadline → Seal
 */
export const worstPathEvents = (machine: AslStateMachine, from: string = machine.StartAt): number => {
  const worst = (name: string, seen: ReadonlySet<string>): number => {
    const state = machine.States[name];
    if (!state) throw new InfraError(`state ${name} is not defined`);
    const next = successors(state).filter((target) => !seen.has(target));
    const after = next.map((target) => worst(target, new Set([...seen, target])));
    return eventsOf(state) + Math.max(0, ...after);
  };
  return worst(from, new Set([from]));
};

/** `state` with every state it hands over to renamed by `rename`. */
const retargeted = (state: AslState, rename: (name: string) => string): AslState => ({
  ...state,
  ...(state.Next === undefined ? {} : { Next: rename(state.Next) }),
  ...(state.Default === undefined ? {} : { Default: rename(state.Default) }),
  ...(state.Choices === undefined ? {} : { Choices: state.Choices.map((c) => (typeof c.Next === 'string' ? { ...c, Next: rename(c.Next) } : c)) }),
  ...(state.Catch === undefined ? {} : { Catch: state.Catch.map((c) => ({ ...c, Next: rename(c.Next) })) }),
});

const HEDGE_STATES: ReadonlySet<string> = new Set([STATE_NAMES.awaitHedge, STATE_NAMES.hedge]);

/**
 * The iteration as a subtask without a hedge runs it: Arm never answers `hedgeSeconds`, so
 * IsSubtaskOpen never takes its branches to AwaitHedge or Hedge.
 */
export const unhedgedIteration = (iteration: AslStateMachine): AslStateMachine => {
  const check = iteration.States[STATE_NAMES.isSubtaskOpen];
  if (!check?.Choices) throw new InfraError(`${STATE_NAMES.isSubtaskOpen} is not a Choice`);
  const choices = check.Choices.filter((c) => typeof c.Next !== 'string' || !HEDGE_STATES.has(c.Next));
  return { ...iteration, States: { ...iteration.States, [STATE_NAMES.isSubtaskOpen]: { ...check, Choices: choices } } };
};

const AFTER_HEDGE = ' (after hedge)';

/**
 * The iteration of a subtask that declares a hedge, unrolled: the first pass may take the hedge
 * branches; Hedge goes back to Arm, which answers without `hedgeSeconds` once the race started,
 * so the second pass (states suffixed ` (after hedge)`) is {@link unhedgedIteration}. The loop
 * back is then a path like any other, which {@link worstPathEvents} can walk.
 */
export const hedgedIterationUnrolled = (iteration: AslStateMachine): AslStateMachine => {
  const hedge = iteration.States[STATE_NAMES.hedge];
  if (hedge?.Next !== STATE_NAMES.arm) throw new InfraError(`${STATE_NAMES.hedge} does not go back to ${STATE_NAMES.arm}`);
  const second = Object.entries(unhedgedIteration(iteration).States).map(([name, state]) => [name + AFTER_HEDGE, retargeted(state, (n) => n + AFTER_HEDGE)]);
  return {
    ...iteration,
    States: { ...iteration.States, [STATE_NAMES.hedge]: { ...hedge, Next: STATE_NAMES.arm + AFTER_HEDGE }, ...Object.fromEntries(second) },
  };
};

/** A run's history arithmetic, counted on the synthesized definitions (docs/deadlines.md, "One round path"). */
export interface CountedHistory {
  /** In the run's execution, once: its start and end (2), plus the costliest ending, Finalize then RunFailed (6). */
  readonly perRun: number;
  /** In the run's execution, per round: Dispatch, the AwaitBatches Map state, Reconcile, NextRound?. */
  readonly perRound: number;
  /** In the run's execution, per batch: StartBatch (a `.sync` Task) and its Map iteration. */
  readonly perBatch: number;
  /** In a batch's child execution, once: its start and end, LoadBatch, the AwaitBatchSubtasks Map state. */
  readonly perChild: number;
  /** In the child, per subtask whose outcome releases Await. */
  readonly finishedSubtask: number;
  /** In the child, per subtask that reaches its deadline. */
  readonly timedOutSubtask: number;
  /** In the child, per subtask on its costliest path (Await fails, WaitForDeadline, Seal). */
  readonly worstSubtask: number;
  /** In the child, per hedged subtask on its costliest path (the iteration unrolled once after Hedge). */
  readonly worstHedgedSubtask: number;
}

/**
 * The history arithmetic of the run's machine `run` and the batch's child machine `batch`.
 *
 * @example
 * historyOf(runAsl, batchAsl) // { perRun: 8, perRound: 16, perBatch: 8, perChild: 11, …, worstHedgedSubtask: 40 }
 */
export const historyOf = (run: AslStateMachine, batch: AslStateMachine): CountedHistory => {
  const iteration = subtaskIteration(batch);
  const processor = run.States[STATE_NAMES.awaitBatches]?.ItemProcessor;
  if (!processor) throw new InfraError(`${STATE_NAMES.awaitBatches} has no ItemProcessor`);
  const rounds = (n: number) =>
    walkPath(run, (choice, prior) => (choice !== STATE_NAMES.nextRound ? fail(choice) : prior + 1 < n ? STATE_NAMES.dispatch : STATE_NAMES.runEnded));
  // After NextRound?: RunEnded; after any caught failure: Finalize, then RunFailed or FinalizeFailed.
  const endings = [STATE_NAMES.runEnded, STATE_NAMES.runFailed, STATE_NAMES.finalize].map((name) => worstPathEvents(run, name));
  return {
    perRun: HISTORY_EVENTS.execution + Math.max(...endings),
    perRound: rounds(2).historyEvents - rounds(1).historyEvents,
    perBatch: worstPathEvents(processor) + HISTORY_EVENTS.mapIteration,
    perChild: batchOverheadEvents(batch),
    finishedSubtask: callbackSubtaskCost(iteration).historyEvents + HISTORY_EVENTS.mapIteration,
    timedOutSubtask: callbackTimeoutCost(iteration).historyEvents + HISTORY_EVENTS.mapIteration,
    worstSubtask: worstPathEvents(unhedgedIteration(iteration)) + HISTORY_EVENTS.mapIteration,
    worstHedgedSubtask: worstPathEvents(hedgedIterationUnrolled(iteration)) + HISTORY_EVENTS.mapIteration,
  };
};

const fail = (choice: string): never => {
  throw new InfraError(`no decision for Choice ${choice}`);
};

/** One row of the comparison in docs/deadlines.md. */
export interface DeadlineFigure {
  readonly design: string;
  readonly durationSeconds: number;
  readonly transitions: number;
  readonly historyEvents: number;
  readonly lambdaInvocations: number;
  /** Largest batch whose child execution fits the 25,000-event history. */
  readonly maxSubtasksPerExecution: number;
  /** Step Functions transitions plus deadline-function invocations, per 1,000 subtasks. */
  readonly usdPer1000Subtasks: number;
  /** Worst-case delay between an outcome being written and the Map noticing it, in seconds. */
  readonly worstNoticeDelaySeconds: number;
}

const usdPer1000 = (cost: PathCost): number =>
  1000 *
  (cost.transitions * PRICES.stateTransition.usd +
    cost.lambdaInvocations * (PRICES.lambdaRequest.usd + DEADLINE_INVOCATION.gb * DEADLINE_INVOCATION.seconds * PRICES.lambdaGbSecond.usd));

const figure = (design: string, durationSeconds: number, cost: PathCost, overhead: number, delay: number): DeadlineFigure => ({
  design,
  durationSeconds,
  transitions: cost.transitions,
  historyEvents: cost.historyEvents + HISTORY_EVENTS.mapIteration,
  lambdaInvocations: cost.lambdaInvocations,
  maxSubtasksPerExecution: Math.floor((HISTORY_EVENT_LIMIT - overhead) / (cost.historyEvents + HISTORY_EVENTS.mapIteration)),
  usdPer1000Subtasks: usdPer1000(cost),
  worstNoticeDelaySeconds: delay,
});

/**
 * The callback design against poll loops at each interval, for subtasks of each duration.
 *
 * @example
 * deadlineFigures(batchAsl, [10, 60, 300], [1, 5]).find((f) => f.design === 'poll 5 s' && f.durationSeconds === 60)
 */
export const deadlineFigures = (batch: AslStateMachine, durationsSeconds: readonly number[], pollIntervalsSeconds: readonly number[]): DeadlineFigure[] => {
  const iteration = subtaskIteration(batch);
  const overhead = batchOverheadEvents(batch);
  return durationsSeconds.flatMap((duration) => [
    figure('callback', duration, callbackSubtaskCost(iteration), overhead, 0),
    ...pollIntervalsSeconds.map((k) => figure(`poll ${k} s`, duration, pollSubtaskCost(iteration, duration, k), overhead, k)),
  ]);
};

/**
 * Renders figures as a Markdown table.
 *
 * @example
 * console.log(figuresTable(deadlineFigures(batchAsl, [60], [5])));
 */
export const figuresTable = (figures: readonly DeadlineFigure[]): string => {
  const header =
    '| subtask duration | design | transitions | history events | Lambda invocations | max subtasks / execution | USD per 1,000 subtasks | worst notice delay |\n' +
    '|---:|---|---:|---:|---:|---:|---:|---:|';
  const rows = figures.map(
    (f) =>
      `| ${f.durationSeconds} s | ${f.design} | ${f.transitions} | ${f.historyEvents} | ${f.lambdaInvocations} | ${f.maxSubtasksPerExecution.toLocaleString('en-US')} | $${f.usdPer1000Subtasks.toFixed(3)} | ${f.worstNoticeDelaySeconds === 0 ? 'none (pushed)' : `${f.worstNoticeDelaySeconds} s`} |`,
  );
  return [header, ...rows].join('\n');
};

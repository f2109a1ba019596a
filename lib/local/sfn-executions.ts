import { randomUUID } from 'node:crypto';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError } from 'aws-local-stepfunctions';
import { z } from 'zod';
import { EXECUTION_STATUS_CHANGE } from '../orchestration/execution-events';
import { EndpointMisconfiguredError, StatesApiError, TaskFailure } from './errors';
import type { LambdaInvoker } from './lambda-client';
import { silentLog, type LocalLog } from './log';
import { callbackTaskHandler } from './sfn-callback-task';
import { lambdaTaskHandler } from './sfn-lambda-task';
import { startExecutionTaskHandler, type StartExecutionTaskDeps } from './sfn-start-execution-task';
import { observed, type JsonValue, type TaskHandler } from './sfn-task';
import type { LocalStateMachine } from './state-machines';
import { createTaskTokens, type TaskTokenRegistry } from './task-tokens';

/**
 * Executions of the template's state machines, run in-process by aws-local-stepfunctions, with
 * AWS's execution-name rules and each execution's event log kept while it runs and for a bounded
 * number of finished executions after ({@link ExecutionRetention}).
 */

/** An execution's status, as DescribeExecution reports it. */
export const ExecutionStatus = z.enum(['RUNNING', 'SUCCEEDED', 'FAILED', 'TIMED_OUT', 'ABORTED']);
export type ExecutionStatus = z.infer<typeof ExecutionStatus>;

/** One event of aws-local-stepfunctions' event log (`StateEntered`, `MapIterationStarted`, …). */
export interface ExecutionEvent {
  readonly type: string;
  readonly timestamp: number;
  readonly [field: string]: unknown;
}

/** What the local service knows about one execution. */
export interface ExecutionRecord {
  readonly executionArn: string;
  readonly stateMachineArn: string;
  readonly name: string;
  /** The input as given (JSON text). */
  readonly input: string;
  readonly startDate: Date;
  status: ExecutionStatus;
  stopDate?: Date;
  output?: string;
  error?: string;
  cause?: string;
  /**
   * The execution's event log, in order; nested Map and Parallel events included. Emptied when the
   * retention prunes it (`eventLog: 'pruned'`).
   */
  readonly events: ExecutionEvent[];
  /** Whether {@link ExecutionRecord.events} is the whole log, or was pruned after the execution finished. */
  eventLog: 'kept' | 'pruned';
  /**
   * State transitions as Step Functions bills them: one per state entered, Map iterations
   * included. Counted as the events arrive, so it stays when the log is pruned.
   */
  transitions: number;
}

/** The local Step Functions service behind the JSON endpoint, also usable in-process. */
export interface ExecutionService {
  start(input: { stateMachineArn: string; name?: string; input?: string }): ExecutionRecord;
  describe(executionArn: string): ExecutionRecord;
  stop(input: { executionArn: string; error?: string; cause?: string }): ExecutionRecord;
  list(input: { stateMachineArn: string; statusFilter?: ExecutionStatus }): ExecutionRecord[];
  sendTaskSuccess(token: string, output: string): void;
  sendTaskFailure(token: string, error?: string, cause?: string): void;
  sendTaskHeartbeat(token: string): void;
  /** Every execution so far, oldest first. */
  executions(): readonly ExecutionRecord[];
  /** Called for each event of each execution as it happens (for live progress); returns an unsubscribe. */
  subscribe(listener: (record: ExecutionRecord, event: ExecutionEvent) => void): () => void;
  /** Called when an execution starts (RUNNING) and when it ends, as Step Functions reports status changes to EventBridge. */
  onStatusChange(listener: (record: ExecutionRecord) => void): () => void;
  /** Resolves when the execution is no longer RUNNING. */
  settled(executionArn: string): Promise<ExecutionRecord>;
  /** Aborts every running execution and waits for them to end. */
  shutdown(): Promise<void>;
}

/**
 * The EventBridge event Step Functions sends when an execution's status changes, as a rule's
 * target receives it.
 *
 * @example
 * executionStatusChangeEvent(record, { region: 'us-east-1', accountId: '000000000000' })['detail-type'] // 'Step Functions Execution Status Change'
 */
export const executionStatusChangeEvent = (record: ExecutionRecord, where: { region: string; accountId: string }) => ({
  version: '0',
  id: randomUUID(),
  'detail-type': EXECUTION_STATUS_CHANGE.detailType,
  source: EXECUTION_STATUS_CHANGE.source,
  account: where.accountId,
  time: (record.stopDate ?? record.startDate).toISOString().replace(/\.\d{3}Z$/, 'Z'),
  region: where.region,
  resources: [record.executionArn],
  detail: {
    executionArn: record.executionArn,
    stateMachineArn: record.stateMachineArn,
    name: record.name,
    status: record.status,
    startDate: record.startDate.getTime(),
    stopDate: record.stopDate?.getTime() ?? null,
    input: record.input,
    output: record.output ?? null,
    inputDetails: { included: true },
    outputDetails: record.output === undefined ? null : { included: true },
    error: record.error ?? null,
    cause: record.cause ?? null,
  },
});

/** AWS's execution-name rule: 1–80 characters, none of whitespace, brackets, wildcards, `"#%\^|~`$&,;:/` or control characters. */
const EXECUTION_NAME = /^[^\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]{1,80}$/;

const parseInput = (text: string): JsonValue => {
  try {
    const value: JsonValue = JSON.parse(text);
    return value;
  } catch (error) {
    throw new StatesApiError('InvalidExecutionInput', `Invalid execution input: ${(error as Error).message}`);
  }
};

/** A running execution: how to abort it, when it is fully done, and why it was stopped. */
interface RunningExecution {
  readonly abort: () => void;
  done: Promise<void>;
  stopReason?: { error?: string; cause?: string };
}

const failureOf = (error: unknown): { status: ExecutionStatus; error: string; cause: string } => {
  if (error instanceof ExecutionTimeoutError)
    return { status: 'TIMED_OUT', error: 'States.Timeout', cause: 'The execution ran longer than its TimeoutSeconds' };
  if (error instanceof ExecutionAbortedError) return { status: 'ABORTED', error: '', cause: '' };
  const reason = error instanceof ExecutionError && error.cause instanceof Error ? error.cause : error;
  if (!(reason instanceof Error)) return { status: 'FAILED', error: 'States.Runtime', cause: String(reason) };
  // A Lambda failure carries Lambda's error document as its cause; AWS reports that document as JSON.
  const cause = typeof reason.cause === 'object' && reason.cause !== null ? JSON.stringify(reason.cause) : reason.message;
  return { status: 'FAILED', error: reason.name, cause };
};

/**
 * How much of its finished executions the service keeps. AWS keeps a closed execution for 90
 * days; a local service that kept every one, each with its event log (the state input and output
 * of every Map iteration), grows with every subtask it ever ran. So it keeps the most recently
 * finished ones, and only the newest of those with their event logs:
 *
 * - a finished execution past the newest `eventLogs` loses its event log (`eventLog: 'pruned'`,
 *   `events` empty); everything DescribeExecution answers, and its `transitions`, stay;
 * - one past the newest `finished` is forgotten: DescribeExecution and ListExecutions no longer
 *   know it, as AWS forgets one after its retention period. Its name stays taken (a start under it
 *   is refused with `ExecutionAlreadyExists`, as AWS refuses a closed execution's name), which
 *   costs the service one ARN string per forgotten execution.
 *
 * A running execution is never pruned: its children, the callers waiting on it and its live
 * listeners see all of it.
 */
export interface ExecutionRetention {
  /** Finished executions kept, the most recently finished. */
  readonly finished: number;
  /** Of those, how many keep their event logs, the most recently finished. */
  readonly eventLogs: number;
}

/**
 * The defaults: enough for a test or benchmark to read back every execution of the runs it just
 * made (a run's parent and its batch children, events included), and bounded for a `tessera
 * serve` that runs all day.
 */
export const DEFAULT_EXECUTION_RETENTION: ExecutionRetention = Object.freeze({ finished: 1_000, eventLogs: 32 });

/**
 * The local Step Functions service for a set of state machines: the execution registry. Each
 * Task runs through a local adapter of its own (sfn-lambda-task.ts, sfn-callback-task.ts,
 * sfn-start-execution-task.ts); finished executions are pruned as {@link ExecutionRetention} says.
 *
 * @example
 * const states = createExecutionService({ stateMachines, lambda: createLambdaInvoker({ endpoint, region }), region });
 * const { executionArn } = states.start({ stateMachineArn, name: runId, input: JSON.stringify(request) });
 * await states.settled(executionArn);
 */
export const createExecutionService = (options: {
  stateMachines: readonly LocalStateMachine[];
  /** Invokes the Lambda of every Task, callback or not: one client for the whole service. */
  lambda: LambdaInvoker;
  /**
   * URL of the local Lambda endpoint. Every Task runs through `lambda`, but aws-local-stepfunctions
   * would invoke Lambda with a default SDK client, which only the process environment can point
   * somewhere; every start checks that it points here, so no execution can ever invoke real AWS Lambda.
   */
  lambdaEndpoint: string;
  region: string;
  accountId?: string;
  log?: LocalLog;
  tokens?: TaskTokenRegistry;
  /**
   * The account's quota of open (running) executions, across all machines: a start past it is
   * refused with `ExecutionLimitExceeded`, as AWS refuses one past its Standard quota of 1,000,000
   * per Region. Unlimited by default; tests set a small one to see StartBatch retry.
   */
  maxOpenExecutions?: number;
  /** How much of its finished executions the service keeps. @default DEFAULT_EXECUTION_RETENTION */
  retention?: ExecutionRetention;
}): ExecutionService => {
  const log = options.log ?? silentLog;
  const tokens = options.tokens ?? createTaskTokens();
  const retention = options.retention ?? DEFAULT_EXECUTION_RETENTION;
  for (const [field, value] of Object.entries(retention)) {
    if (!Number.isInteger(value) || value < 0)
      throw new TypeError(`createExecutionService: retention.${field} must be a whole number, 0 or more (got ${value})`);
  }
  /** Every execution known, in the order they started. */
  const records = new Map<string, ExecutionRecord>();
  const running = new Map<string, RunningExecution>();
  /** Finished executions still known, oldest-finished first; `withEvents` is how many at its end keep their logs. */
  const finishedOrder: string[] = [];
  let withEvents = 0;
  /** Names of forgotten executions, still taken. */
  const forgotten = new Set<string>();
  const listeners = new Set<(record: ExecutionRecord, event: ExecutionEvent) => void>();
  const statusListeners = new Set<(record: ExecutionRecord) => void>();
  const placeholder = `tessera-local-task-token-placeholder-${randomUUID()}`;
  /** Running children by the execution that started them: a parent that ends stops its children, as `.sync` does on AWS. */
  const children = new Map<string, Set<string>>();

  const stateMachine = (arn: string): LocalStateMachine => {
    const found = options.stateMachines.find((machine) => machine.arn === arn);
    if (!found) throw new StatesApiError('StateMachineDoesNotExist', `State Machine Does Not Exist: '${arn}'`);
    return found;
  };

  const record = (executionArn: string): ExecutionRecord => {
    const found = records.get(executionArn);
    if (!found) throw new StatesApiError('ExecutionDoesNotExist', `Execution Does Not Exist: '${executionArn}'`);
    return found;
  };

  /** Keeps the newest finished executions and, of those, the newest event logs (see {@link ExecutionRetention}). */
  const prune = (finished: ExecutionRecord): void => {
    finishedOrder.push(finished.executionArn);
    withEvents += 1;
    while (withEvents > retention.eventLogs) {
      const oldest = records.get(finishedOrder[finishedOrder.length - withEvents] ?? '');
      if (oldest) {
        oldest.events.length = 0;
        oldest.eventLog = 'pruned';
      }
      withEvents -= 1;
    }
    while (finishedOrder.length > retention.finished) {
      const arn = finishedOrder.shift() as string;
      records.delete(arn);
      forgotten.add(arn);
    }
    withEvents = Math.min(withEvents, finishedOrder.length);
  };

  /** A listener that throws (a progress printer, say) must not break the execution's bookkeeping. */
  const notify = (execution: ExecutionRecord, event: ExecutionEvent): void => {
    for (const listener of listeners) {
      try {
        listener(execution, event);
      } catch (error) {
        log({ level: 'warn', component: 'states', message: `an execution listener failed: ${(error as Error).message}` });
      }
    }
  };

  const notifyStatus = (execution: ExecutionRecord): void => {
    for (const listener of statusListeners) {
      try {
        listener(execution);
      } catch (error) {
        log({ level: 'warn', component: 'states', message: `a status listener failed: ${(error as Error).message}` });
      }
    }
  };

  const collectEvents = async (execution: ExecutionRecord, events: AsyncGenerator<unknown>): Promise<void> => {
    for await (const event of events) {
      // The library's event objects always carry `type` and `timestamp`; its EventLog type is not exported.
      const entry = event as ExecutionEvent;
      execution.events.push(entry);
      if (entry.type === 'StateEntered') execution.transitions += 1;
      notify(execution, entry);
    }
  };

  const finish = (execution: ExecutionRecord, result: { status: ExecutionStatus; output?: string; error?: string; cause?: string }): void => {
    execution.status = result.status;
    execution.stopDate = new Date();
    if (result.output !== undefined) execution.output = result.output;
    if (result.error) execution.error = result.error;
    if (result.cause) execution.cause = result.cause;
    tokens.closeExecution(execution.executionArn);
    for (const child of children.get(execution.executionArn) ?? []) {
      stop({ executionArn: child, error: 'States.Aborted', cause: `its parent ${execution.name} ended ${result.status}` });
    }
    children.delete(execution.executionArn);
    log({
      level: 'info',
      component: 'states',
      message: `${execution.name} ${result.status}`,
      data: { executionArn: execution.executionArn, error: result.error },
    });
    notifyStatus(execution);
  };

  const taskDeps = { lambda: options.lambda, tokens, log, placeholder };
  const childDeps: StartExecutionTaskDeps = {
    start: (request) => start(request),
    settled: (executionArn) => settled(executionArn),
    adopt: (parentArn, childArn) => {
      const siblings = children.get(parentArn) ?? new Set<string>();
      siblings.add(childArn);
      children.set(parentArn, siblings);
    },
    release: (parentArn, childArn) => children.get(parentArn)?.delete(childArn),
    log,
  };

  const run = (machine: LocalStateMachine, execution: ExecutionRecord): void => {
    const context = {
      Execution: { Id: execution.executionArn, Name: execution.name, StartTime: execution.startDate.toISOString() },
      StateMachine: { Id: machine.arn, Name: machine.name },
      Task: { Token: placeholder },
    };
    /**
     * Set once the execution is stopped or has ended. aws-local-stepfunctions still starts every
     * Map iteration its concurrency limit had queued after an abort, each running its first state
     * (an iteration's abort listener is added to a signal already aborted, so it never fires); on
     * AWS a stopped execution runs nothing more. So every Task of a stopped execution fails at
     * once, without invoking anything: a cancelled round of 10,000 subtasks invokes no Lambda.
     */
    let ended = false;
    const unlessEnded =
      (stateName: string, handler: TaskHandler): TaskHandler =>
      (input) =>
        ended ? observed(Promise.reject(new TaskFailure('States.Aborted', `${execution.name} had ended before ${stateName} ran`))) : handler(input);
    const taskResourceLocalHandlers = Object.fromEntries(
      [
        ...[...machine.lambdaTasks].map(([stateName, resource]) => [stateName, lambdaTaskHandler(taskDeps, stateName, resource)] as const),
        ...[...machine.callbackTasks].map(
          ([stateName, task]) => [stateName, callbackTaskHandler(taskDeps, execution.executionArn, stateName, task, context)] as const,
        ),
        ...[...machine.startExecutionTasks.keys()].map(
          (stateName) => [stateName, startExecutionTaskHandler(childDeps, execution.executionArn, stateName)] as const,
        ),
      ].map(([stateName, handler]) => [stateName, unlessEnded(stateName, handler)] as const),
    );
    const started = machine.machine.run(parseInput(execution.input), { overrides: { taskResourceLocalHandlers }, context });
    const entry: RunningExecution = {
      abort: () => {
        ended = true;
        started.abort();
      },
      done: Promise.resolve(),
    };
    started.result.then(
      () => (ended = true),
      () => (ended = true),
    );
    const events = collectEvents(execution, started.eventLogs);
    entry.done = started.result
      .then(
        (output) => finish(execution, { status: 'SUCCEEDED', output: JSON.stringify(output) }),
        (error: unknown) => finish(execution, { ...failureOf(error), ...entry.stopReason }),
      )
      .then(() => events)
      .finally(() => {
        running.delete(execution.executionArn);
        // Only once its last event is in: a pruned log must not fill up again.
        prune(execution);
      });
    running.set(execution.executionArn, entry);
  };

  const requireLocalLambda = (): void => {
    const actual = process.env.AWS_ENDPOINT_URL_LAMBDA;
    if (actual !== options.lambdaEndpoint) throw new EndpointMisconfiguredError('AWS_ENDPOINT_URL_LAMBDA', options.lambdaEndpoint, actual);
    if (process.env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS)
      throw new EndpointMisconfiguredError('AWS_IGNORE_CONFIGURED_ENDPOINT_URLS', 'unset', process.env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS);
  };

  const start: ExecutionService['start'] = (request) => {
    requireLocalLambda();
    const machine = stateMachine(request.stateMachineArn);
    const name = request.name ?? randomUUID();
    if (!EXECUTION_NAME.test(name)) throw new StatesApiError('InvalidName', `Invalid Name: '${name}'`);
    const input = request.input ?? '{}';
    parseInput(input);
    const executionArn = `arn:aws:states:${options.region}:${options.accountId ?? '000000000000'}:execution:${machine.name}:${name}`;
    const existing = records.get(executionArn);
    if (existing) {
      // Standard workflows: the same name and input while running is the same execution (an idempotent retry).
      if (existing.status === 'RUNNING' && existing.input === input) return existing;
      throw new StatesApiError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
    }
    if (forgotten.has(executionArn)) throw new StatesApiError('ExecutionAlreadyExists', `Execution Already Exists: '${executionArn}'`);
    if (options.maxOpenExecutions !== undefined && running.size >= options.maxOpenExecutions) {
      throw new StatesApiError('ExecutionLimitExceeded', `Maximum number of running executions reached: ${options.maxOpenExecutions}`);
    }
    const execution: ExecutionRecord = {
      executionArn,
      stateMachineArn: machine.arn,
      name,
      input,
      startDate: new Date(),
      status: 'RUNNING',
      events: [],
      eventLog: 'kept',
      transitions: 0,
    };
    records.set(executionArn, execution);
    run(machine, execution);
    notifyStatus(execution);
    return execution;
  };

  const settled: ExecutionService['settled'] = async (executionArn) => {
    const execution = record(executionArn);
    await running.get(executionArn)?.done;
    return execution;
  };

  const stop: ExecutionService['stop'] = (request) => {
    const execution = record(request.executionArn);
    const active = running.get(request.executionArn);
    if (active && execution.status === 'RUNNING') {
      active.stopReason = { ...(request.error ? { error: request.error } : {}), ...(request.cause ? { cause: request.cause } : {}) };
      active.abort();
    }
    return execution;
  };

  return {
    start,
    stop,
    describe: record,
    list: ({ stateMachineArn, statusFilter }) => {
      stateMachine(stateMachineArn);
      return [...records.values()]
        .filter((execution) => execution.stateMachineArn === stateMachineArn && (!statusFilter || execution.status === statusFilter))
        .reverse();
    },
    sendTaskSuccess: (token, output) => tokens.succeed(token, output),
    sendTaskFailure: (token, error, cause) => tokens.fail(token, error, cause),
    sendTaskHeartbeat: (token) => tokens.heartbeat(token),
    executions: () => [...records.values()],
    subscribe: (listener) => {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    onStatusChange: (listener) => {
      statusListeners.add(listener);
      return () => statusListeners.delete(listener);
    },
    settled,
    shutdown: async () => {
      const active = [...running.values()];
      for (const entry of active) entry.abort();
      await Promise.all(active.map((entry) => entry.done));
    },
  };
};

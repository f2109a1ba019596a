import { randomUUID } from 'node:crypto';
import { ExecutionAbortedError, ExecutionError, ExecutionTimeoutError, type StateMachine } from 'aws-local-stepfunctions';
import { z } from 'zod';
import { EXECUTION_STATUS_CHANGE } from '../orchestration/execution-events';
import './polyfills';
import { EndpointMisconfiguredError, StatesApiError, TaskFailure } from './errors';
import type { LambdaInvoker } from './lambda-client';
import { silentLog, type LocalLog } from './log';
import { readReferencePath } from './reference-path';
import type { CallbackTask, LocalStateMachine } from './state-machines';
import { createTaskTokens, type TaskTokenRegistry } from './task-tokens';

/**
 * Executions of the template's state machines, run in-process by aws-local-stepfunctions, with
 * AWS's execution-name rules, the callback pattern emulated, and each execution's event log kept.
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
  /** The execution's event log, in order; nested Map and Parallel events included. */
  readonly events: ExecutionEvent[];
}

/**
 * State transitions as Step Functions bills them: one per state entered, Map iterations included.
 *
 * @example
 * stateTransitions(cloud.executions.describe(executionArn)) // 3 for a one-item Map of Arm → Await
 */
export const stateTransitions = (record: Pick<ExecutionRecord, 'events'>): number =>
  record.events.filter((event) => event.type === 'StateEntered').length;

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

/** A JSON value as aws-local-stepfunctions types it. */
type JsonValue = Parameters<StateMachine['run']>[0];

/** AWS's execution-name rule: 1–80 characters, none of whitespace, brackets, wildcards, `"#%\^|~`$&,;:/` or control characters. */
const EXECUTION_NAME = /^[^\s<>{}[\]?*"#%\\^|~`$&,;:/\u0000-\u001f\u007f-\u009f]{1,80}$/;

/** aws-local-stepfunctions' default when a Task sets no timeout (the ASL specification's 60 s). */
const LIBRARY_DEFAULT_TASK_TIMEOUT_MS = 60_000;

const parseInput = (text: string): JsonValue => {
  try {
    const value: JsonValue = JSON.parse(text);
    return value;
  } catch (error) {
    throw new StatesApiError('InvalidExecutionInput', `Invalid execution input: ${(error as Error).message}`);
  }
};

/**
 * The callback Task's timeout, computed exactly as aws-local-stepfunctions computes it (a truthy
 * `TimeoutSeconds`, else `TimeoutSecondsPath` against the Task's effective input, else 60 s), so
 * the token closes just before the library raises `States.Timeout`. `undefined` when the path does
 * not give a positive integer: the library then fails the state with `States.Runtime`.
 */
const callbackTimeoutMs = (task: CallbackTask, input: unknown, context: unknown): number | undefined => {
  if (task.TimeoutSeconds) return task.TimeoutSeconds * 1000;
  if (task.TimeoutSecondsPath === undefined) return LIBRARY_DEFAULT_TASK_TIMEOUT_MS;
  const seconds = readReferencePath(task.TimeoutSecondsPath, input, context);
  return Number.isInteger(seconds) && (seconds as number) >= 1 ? (seconds as number) * 1000 : undefined;
};

/** Puts the minted token wherever the definition placed `$$.Task.Token` (also inside formatted strings). */
const withToken = (value: unknown, placeholder: string, token: string): unknown => {
  if (typeof value === 'string') return value.replaceAll(placeholder, token);
  if (Array.isArray(value)) return value.map((item) => withToken(item, placeholder, token));
  if (typeof value === 'object' && value !== null) {
    return Object.fromEntries(Object.entries(value).map(([key, item]) => [key, withToken(item, placeholder, token)]));
  }
  return value;
};

const CallbackParameters = z.looseObject({
  FunctionName: z.string().min(1),
  Payload: z.unknown().optional(),
  InvocationType: z.enum(['RequestResponse', 'Event']).optional(),
});

const StartExecutionParameters = z.looseObject({
  StateMachineArn: z.string().min(1),
  Input: z.unknown().optional(),
  Name: z.string().optional(),
});

/** A running execution: how to abort it, when it is fully done, and why it was stopped. */
interface RunningExecution {
  readonly abort: () => void;
  done: Promise<void>;
  stopReason?: { error?: string; cause?: string };
}

/** The library abandons a Task's promise when it times out or aborts; it must never reject unobserved. */
const observed = <T>(promise: Promise<T>): Promise<T> => {
  promise.catch(() => undefined);
  return promise;
};

const failureOf = (error: unknown): { status: ExecutionStatus; error: string; cause: string } => {
  if (error instanceof ExecutionTimeoutError) return { status: 'TIMED_OUT', error: 'States.Timeout', cause: 'The execution ran longer than its TimeoutSeconds' };
  if (error instanceof ExecutionAbortedError) return { status: 'ABORTED', error: '', cause: '' };
  const reason = error instanceof ExecutionError && error.cause instanceof Error ? error.cause : error;
  if (!(reason instanceof Error)) return { status: 'FAILED', error: 'States.Runtime', cause: String(reason) };
  // A Lambda failure carries Lambda's error document as its cause; AWS reports that document as JSON.
  const cause = typeof reason.cause === 'object' && reason.cause !== null ? JSON.stringify(reason.cause) : reason.message;
  return { status: 'FAILED', error: reason.name, cause };
};

/**
 * The local Step Functions service for a set of state machines.
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
}): ExecutionService => {
  const log = options.log ?? silentLog;
  const tokens = options.tokens ?? createTaskTokens();
  const records = new Map<string, ExecutionRecord>();
  const running = new Map<string, RunningExecution>();
  const listeners = new Set<(record: ExecutionRecord, event: ExecutionEvent) => void>();
  const statusListeners = new Set<(record: ExecutionRecord) => void>();
  const placeholder = `tessera-local-task-token-placeholder-${randomUUID()}`;

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

  const invokeForCallback = async (parameters: z.infer<typeof CallbackParameters>, token: string): Promise<void> => {
    let outcome;
    try {
      outcome = await options.lambda.invoke(parameters.FunctionName, parameters.Payload ?? {}, { invocationType: parameters.InvocationType ?? 'RequestResponse' });
    } catch (error) {
      const code = (error as Error).cause instanceof Error ? ((error as Error).cause as Error).name : 'ServiceException';
      tokens.close(token, 'its Lambda could not be invoked');
      throw new TaskFailure(`Lambda.${code}`, (error as Error).message);
    }
    if (!outcome.ok) {
      tokens.close(token, 'its Lambda failed');
      throw new TaskFailure(outcome.error.errorType, JSON.stringify(outcome.error));
    }
  };

  /** The local handler of one callback Task: mint a token, invoke the Lambda with it, wait for the callback. */
  const callbackHandler = (execution: ExecutionRecord, stateName: string, task: CallbackTask, context: unknown) => (input: unknown) =>
    observed(
      (async () => {
        const timeoutMs = callbackTimeoutMs(task, input, context);
        if (timeoutMs === undefined) throw new TaskFailure('States.Runtime', `${task.TimeoutSecondsPath} is not a positive integer`);
        const { token, settled } = tokens.open({ executionArn: execution.executionArn, stateName }, timeoutMs);
        const parameters = CallbackParameters.safeParse(withToken(input, placeholder, token));
        if (!parameters.success) {
          tokens.close(token, 'its parameters were invalid');
          throw new TaskFailure('States.Runtime', `lambda:invoke.waitForTaskToken parameters are invalid: ${z.prettifyError(parameters.error)}`);
        }
        log({ level: 'debug', component: 'states', message: `${stateName} waits for its task token`, data: { executionArn: execution.executionArn } });
        await invokeForCallback(parameters.data, token);
        // SendTaskSuccess only accepts JSON output, so what settles the token is a JSON value.
        return settled as Promise<JsonValue>;
      })(),
    );

  /** Running children by the execution that started them: a parent that ends stops its children, as `.sync` does on AWS. */
  const children = new Map<string, Set<string>>();

  /**
   * The local handler of one `startExecution.sync:2` Task: start the child state machine in
   * process, wait for it, and answer what Step Functions answers (DescribeExecution, `Output` as
   * JSON); a child that does not succeed fails the Task with `States.TaskFailed`, as on AWS.
   */
  const startExecutionHandler = (parent: ExecutionRecord, stateName: string) => (input: unknown) =>
    observed(
      (async () => {
        const parameters = StartExecutionParameters.safeParse(input);
        if (!parameters.success) throw new TaskFailure('States.Runtime', `startExecution parameters are invalid: ${z.prettifyError(parameters.error)}`);
        const { StateMachineArn, Input, Name } = parameters.data;
        let child: ExecutionRecord;
        try {
          child = start({ stateMachineArn: StateMachineArn, ...(Name === undefined ? {} : { name: Name }), input: JSON.stringify(Input ?? {}) });
        } catch (error) {
          // The integration names a refused start after the API's error: StepFunctions.<code>.
          if (error instanceof StatesApiError) throw new TaskFailure(`StepFunctions.${error.code}`, error.message);
          throw error;
        }
        const siblings = children.get(parent.executionArn) ?? new Set<string>();
        siblings.add(child.executionArn);
        children.set(parent.executionArn, siblings);
        log({ level: 'debug', component: 'states', message: `${stateName} started ${child.name}`, data: { executionArn: child.executionArn } });
        const ended = await settled(child.executionArn);
        siblings.delete(child.executionArn);
        const described = {
          ExecutionArn: ended.executionArn,
          StateMachineArn: ended.stateMachineArn,
          Name: ended.name,
          Status: ended.status,
          StartDate: ended.startDate.getTime(),
          StopDate: ended.stopDate?.getTime(),
          Input: JSON.parse(ended.input) as JsonValue,
        };
        if (ended.status !== 'SUCCEEDED') {
          throw new TaskFailure('States.TaskFailed', JSON.stringify({ ...described, Error: ended.error, Cause: ended.cause }));
        }
        return { ...described, Output: (ended.output === undefined ? null : JSON.parse(ended.output)) as JsonValue };
      })(),
    );

  /**
   * The local handler of a plain Lambda Task (a function ARN, or `lambda:invoke`, which the Lambda
   * endpoint unwraps): the same Invoke request the library would send, through the service's one
   * Lambda client. The library builds a new SDK client for every Task it runs itself, and each
   * opens a connection of its own that the endpoint keeps: two file descriptors per Map
   * iteration, which a run of thousands of subtasks turns into thousands (`EMFILE`). Failures
   * are reported as the library reports them: the error named by the function's `errorType`,
   * `errorType: errorMessage` as its message, the error document as its cause.
   */
  const lambdaTaskHandler = (stateName: string, resource: string) => (input: unknown) =>
    observed(
      (async () => {
        let outcome;
        try {
          outcome = await options.lambda.invoke(resource, input);
        } catch (error) {
          const code = (error as Error).cause instanceof Error ? ((error as Error).cause as Error).name : 'ServiceException';
          throw new TaskFailure(`Lambda.${code}`, (error as Error).message);
        }
        if (!outcome.ok) {
          log({ level: 'debug', component: 'states', message: `${stateName}: its Lambda failed with ${outcome.error.errorType}` });
          throw new TaskFailure(outcome.error.errorType, `${outcome.error.errorType}: ${outcome.error.errorMessage}`, { cause: outcome.error });
        }
        return outcome.payload as JsonValue;
      })(),
    );

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
    for (const child of children.get(execution.executionArn) ?? []) stop({ executionArn: child, error: 'States.Aborted', cause: `its parent ${execution.name} ended ${result.status}` });
    children.delete(execution.executionArn);
    log({ level: 'info', component: 'states', message: `${execution.name} ${result.status}`, data: { executionArn: execution.executionArn, error: result.error } });
    notifyStatus(execution);
  };

  const run = (machine: LocalStateMachine, execution: ExecutionRecord): void => {
    const context = {
      Execution: { Id: execution.executionArn, Name: execution.name, StartTime: execution.startDate.toISOString() },
      StateMachine: { Id: machine.arn, Name: machine.name },
      Task: { Token: placeholder },
    };
    const taskResourceLocalHandlers = Object.fromEntries([
      ...[...machine.lambdaTasks].map(([stateName, resource]) => [stateName, lambdaTaskHandler(stateName, resource)] as const),
      ...[...machine.callbackTasks].map(([stateName, task]) => [stateName, callbackHandler(execution, stateName, task, context)] as const),
      ...[...machine.startExecutionTasks.keys()].map((stateName) => [stateName, startExecutionHandler(execution, stateName)] as const),
    ]);
    const started = machine.machine.run(parseInput(execution.input), { overrides: { taskResourceLocalHandlers }, context });
    const entry: RunningExecution = { abort: started.abort, done: Promise.resolve() };
    const events = collectEvents(execution, started.eventLogs);
    entry.done = started.result
      .then(
        (output) => finish(execution, { status: 'SUCCEEDED', output: JSON.stringify(output) }),
        (error: unknown) => finish(execution, { ...failureOf(error), ...entry.stopReason }),
      )
      .then(() => events)
      .finally(() => running.delete(execution.executionArn));
    running.set(execution.executionArn, entry);
  };

  const requireLocalLambda = (): void => {
    const actual = process.env.AWS_ENDPOINT_URL_LAMBDA;
    if (actual !== options.lambdaEndpoint) throw new EndpointMisconfiguredError('AWS_ENDPOINT_URL_LAMBDA', options.lambdaEndpoint, actual);
    if (process.env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS) throw new EndpointMisconfiguredError('AWS_IGNORE_CONFIGURED_ENDPOINT_URLS', 'unset', process.env.AWS_IGNORE_CONFIGURED_ENDPOINT_URLS);
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
    if (options.maxOpenExecutions !== undefined && running.size >= options.maxOpenExecutions) {
      throw new StatesApiError('ExecutionLimitExceeded', `Maximum number of running executions reached: ${options.maxOpenExecutions}`);
    }
    const execution: ExecutionRecord = { executionArn, stateMachineArn: machine.arn, name, input, startDate: new Date(), status: 'RUNNING', events: [] };
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

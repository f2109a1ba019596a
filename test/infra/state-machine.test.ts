import { beforeAll, describe, expect, test } from 'vitest';
import { findState, type AslState, type AslStateMachine } from '../../lib/infra/asl';
import {
  callbackHedgedCost,
  callbackSubtaskCost,
  callbackTimeoutCost,
  deadlineFigures,
  batchOverheadEvents,
  pollSubtaskCost,
} from '../../bench/deadline-figures';
import { batchStateMachineDefinition } from '../../lib/infra/synthesized';
import { TRANSIENT_ERRORS } from '../../lib/infra/transient-errors';
import { START_EXECUTION_REFUSED_ERRORS } from '../../lib/orchestration/errors';
import { WriteConflict } from '../../lib/ledger/errors';
import { EnqueueFailed } from '../../lib/queue/errors';
import { logicalIdAt, synthTesseraStack, type Synthesized } from './synth';

const INVOKE = 'arn:${AWS::Partition}:states:::lambda:invoke';

let synth: Synthesized;
let asl: AslStateMachine;
/** The batch's child machine: LoadBatch, then the per-subtask iteration over its subtasks. */
let batchAsl: AslStateMachine;
const fn = (name: string) => `\${${logicalIdAt(synth.template, 'AWS::Lambda::Function', `/${name}/Function/Resource`)}.Arn}`;
const state = (name: string): AslState => {
  const found = findState(asl, name) ?? findState(batchAsl, name);
  if (!found) throw new Error(`no state ${name}`);
  return found;
};
const iteration = (): AslStateMachine => {
  const processor = batchAsl.States.AwaitBatchSubtasks?.ItemProcessor;
  if (!processor) throw new Error('AwaitBatchSubtasks has no ItemProcessor');
  return processor;
};

beforeAll(() => {
  synth = synthTesseraStack();
  asl = synth.asl;
  batchAsl = batchStateMachineDefinition(synth.template.toJSON());
});

describe('state machine resource', () => {
  test('is Standard, traced, logs ALL events without execution data, and times out after 6 × 900 s', () => {
    const logGroup = logicalIdAt(synth.template, 'AWS::Logs::LogGroup', '/Runs/Logs/Resource');
    synth.template.hasResourceProperties('AWS::StepFunctions::StateMachine', {
      StateMachineType: 'STANDARD',
      TracingConfiguration: { Enabled: true },
      LoggingConfiguration: {
        Level: 'ALL',
        IncludeExecutionData: false,
        Destinations: [{ CloudWatchLogsLogGroup: { LogGroupArn: { 'Fn::GetAtt': [logGroup, 'Arn'] } } }],
      },
    });
    expect(asl.TimeoutSeconds).toBe(5400);
  });
});

describe('run flow', () => {
  test('Dispatch, Reconcile and Finalize wait out their five-minute functions plus 30 s, never the 60-s default of the States Language', () => {
    const functionTimeout = (name: string) => {
      const id = logicalIdAt(synth.template, 'AWS::Lambda::Function', `/${name}/Function/Resource`);
      return (synth.template.toJSON().Resources[id].Properties as { Timeout: number }).Timeout;
    };
    // Both functions may run five minutes (a round of 10,000 subtasks in one invocation).
    expect([functionTimeout('DispatchFunction'), functionTimeout('ReconcileFunction')]).toEqual([300, 300]);
    expect(['Dispatch', 'Reconcile', 'Finalize'].map((name) => state(name).TimeoutSeconds)).toEqual([330, 330, 330]);
  });

  test('starts at Dispatch, which sends the whole execution input and keeps only the payload', () => {
    expect(asl.StartAt).toBe('Dispatch');
    expect(state('Dispatch')).toMatchObject({
      Type: 'Task',
      Resource: INVOKE,
      Parameters: { FunctionName: fn('DispatchFunction'), 'Payload.$': '$' },
      OutputPath: '$.Payload',
      Next: 'AwaitBatches',
    });
  });

  test('one round path: Dispatch → AwaitBatches → Reconcile → NextRound?, with no per-subtask state in the run’s machine', () => {
    expect(Object.keys(asl.States).sort()).toEqual([
      'AwaitBatches',
      'Dispatch',
      'Finalize',
      'FinalizeFailed',
      'NextRound?',
      'Reconcile',
      'RunEnded',
      'RunFailed',
    ]);
    expect(Object.keys(state('AwaitBatches').ItemProcessor?.States ?? {})).toEqual(['StartBatch']);
  });

  test('AwaitBatches maps $.batches 40 at a time; StartBatch starts the batch machine with .sync:2, its batch only, and keeps its status only', () => {
    const batchMachine = { Ref: logicalIdAt(synth.template, 'AWS::StepFunctions::StateMachine', '/Runs/BatchStateMachine/Resource') };
    const map = state('AwaitBatches');
    expect(map).toMatchObject({ Type: 'Map', ItemsPath: '$.batches', MaxConcurrency: 40, ResultPath: null, Next: 'Reconcile' });
    expect(map.ItemSelector).toEqual({
      'runId.$': '$.runId',
      'tenantId.$': '$.tenantId',
      'round.$': '$$.Map.Item.Value.round',
      'batch.$': '$$.Map.Item.Value.batch',
    });
    const startBatch = map.ItemProcessor?.States.StartBatch as Record<string, unknown> & { Parameters: Record<string, unknown> };
    expect(startBatch).toMatchObject({
      Type: 'Task',
      Resource: 'arn:${AWS::Partition}:states:::states:startExecution.sync:2',
      // Twice the deadline horizon (900 s): a batch holds one round.
      TimeoutSeconds: 1800,
      ResultSelector: { 'status.$': '$.Status' },
      End: true,
    });
    expect(startBatch.Parameters.Input).toEqual({
      'runId.$': '$.runId',
      'tenantId.$': '$.tenantId',
      'round.$': '$.round',
      'batch.$': '$.batch',
      'AWS_STEP_FUNCTIONS_STARTED_BY_EXECUTION_ID.$': '$$.Execution.Id',
    });
    expect(startBatch.Parameters['Name.$']).toBe("States.Format('{}-{}-{}', $.runId, $.round, $.batch)");
    expect(JSON.stringify(startBatch.Parameters.StateMachineArn)).toContain(batchMachine.Ref);
    // A refused start (quota, throttling) is retried with the run-level budget: 2 s doubling to
    // 30 s, 6 attempts, full jitter. A failed child (States.TaskFailed) is not, nor anything else.
    expect(startBatch.Retry).toEqual([
      { ErrorEquals: [...START_EXECUTION_REFUSED_ERRORS], IntervalSeconds: 2, MaxAttempts: 6, BackoffRate: 2, MaxDelaySeconds: 30, JitterStrategy: 'FULL' },
    ]);
    expect(map.Catch).toEqual([{ ErrorEquals: ['States.ALL'], ResultPath: '$.error', Next: 'Finalize' }]);
  });

  test('batchConcurrency sets how many batches run at once', () => {
    const fewer = synthTesseraStack({ fanOut: { batchConcurrency: 4 } });
    expect(findState(fewer.asl, 'AwaitBatches')).toMatchObject({ Type: 'Map', MaxConcurrency: 4 });
    // The subtasks inside each batch are unaffected.
    expect(findState(batchStateMachineDefinition(fewer.template.toJSON()), 'AwaitBatchSubtasks')).toMatchObject({ MaxConcurrency: 40 });
  });

  test('a batch’s child: LoadBatch reads its subtasks, AwaitBatchSubtasks maps them 40 at a time and answers the batch number, ending the child', () => {
    expect(batchAsl.StartAt).toBe('LoadBatch');
    expect(Object.keys(batchAsl.States)).toEqual(['LoadBatch', 'AwaitBatchSubtasks']);
    expect(state('LoadBatch')).toMatchObject({
      Resource: INVOKE,
      Parameters: {
        FunctionName: fn('DeadlineFunction'),
        Payload: { action: 'batch', 'runId.$': '$.runId', 'tenantId.$': '$.tenantId', 'round.$': '$.round', 'batch.$': '$.batch' },
      },
      ResultSelector: { 'items.$': '$.Payload.items' },
      ResultPath: '$.loaded',
      Next: 'AwaitBatchSubtasks',
    });
    expect(state('AwaitBatchSubtasks')).toMatchObject({
      Type: 'Map',
      ItemsPath: '$.loaded.items',
      MaxConcurrency: 40,
      ResultPath: null,
      OutputPath: '$.batch',
      End: true,
    });
    expect(iteration().StartAt).toBe('Arm');
  });

  test('Reconcile is told the run and round, and its payload becomes the state', () => {
    expect(state('Reconcile')).toMatchObject({
      Resource: INVOKE,
      Parameters: {
        FunctionName: fn('ReconcileFunction'),
        Payload: { mode: 'reconcile', 'runId.$': '$.runId', 'tenantId.$': '$.tenantId', 'round.$': '$.round' },
      },
      OutputPath: '$.Payload',
      Next: 'NextRound?',
    });
  });

  test("follow-up loop: NextRound? sends next == dispatch back to Dispatch, else RunEnded, whatever the run's status", () => {
    expect(state('NextRound?')).toEqual({
      Type: 'Choice',
      Choices: [{ Variable: '$.next', StringEquals: 'dispatch', Next: 'Dispatch' }],
      Default: 'RunEnded',
    });
    expect(state('RunEnded').Type).toBe('Succeed');
    // RunFailed is reached only through Finalize: a step failed, so the execution fails too.
    expect(state('RunFailed')).toMatchObject({ Type: 'Fail', Error: 'RunFailed' });
  });
});

describe('deadline path', () => {
  test('Arm sends the item to the deadline function and keeps its payload under $.Payload', () => {
    expect(state('Arm')).toMatchObject({
      Type: 'Task',
      Resource: INVOKE,
      Parameters: {
        FunctionName: fn('DeadlineFunction'),
        Payload: { action: 'arm', 'runId.$': '$.runId', 'tenantId.$': '$.tenantId', 'subtaskId.$': '$.subtaskId', 'deadline.$': '$.deadline' },
      },
      ResultSelector: { 'Payload.$': '$.Payload' },
      Next: 'IsSubtaskOpen',
    });
  });

  test('IsSubtaskOpen: terminal → SubtaskDone, expired → Seal, a hedge due now → Hedge, a hedge pending → AwaitHedge, otherwise Await', () => {
    expect(state('IsSubtaskOpen')).toEqual({
      Type: 'Choice',
      Choices: [
        { Variable: '$.Payload.status', StringEquals: 'terminal', Next: 'SubtaskDone' },
        { Variable: '$.Payload.status', StringEquals: 'expired', Next: 'Seal' },
        {
          // presence first: a Choice on an absent path is a runtime error, and 0 s cannot be a TimeoutSecondsPath
          And: [
            { Variable: '$.Payload.hedgeSeconds', IsPresent: true },
            { Variable: '$.Payload.hedgeSeconds', NumericEquals: 0 },
          ],
          Next: 'Hedge',
        },
        { Variable: '$.Payload.hedgeSeconds', IsPresent: true, Next: 'AwaitHedge' },
      ],
      Default: 'Await',
    });
    expect(state('SubtaskDone').Type).toBe('Succeed');
  });

  test('Await waits for a task token, at most $.Payload.timeoutSeconds, keeping the callback beside the payload', () => {
    expect(state('Await')).toMatchObject({
      Type: 'Task',
      Resource: 'arn:${AWS::Partition}:states:::lambda:invoke.waitForTaskToken',
      TimeoutSecondsPath: '$.Payload.timeoutSeconds',
      Parameters: {
        FunctionName: fn('DeadlineFunction'),
        Payload: {
          action: 'await',
          'taskToken.$': '$$.Task.Token',
          'runId.$': '$.Payload.runId',
          'tenantId.$': '$.Payload.tenantId',
          'subtaskId.$': '$.Payload.subtaskId',
          'deadline.$': '$.Payload.deadline',
          // the same path as TimeoutSecondsPath, so it resolves against raw and effective input alike
          'timeoutSeconds.$': '$.Payload.timeoutSeconds',
        },
      },
      ResultPath: '$.callback',
      End: true,
    });
    expect(state('Await').TimeoutSeconds).toBeUndefined();
  });
});

describe('hedge path', () => {
  test('AwaitHedge waits for a task token at most $.Payload.hedgeSeconds (Arm answers it only when due before the deadline)', () => {
    expect(state('AwaitHedge')).toMatchObject({
      Type: 'Task',
      Resource: 'arn:${AWS::Partition}:states:::lambda:invoke.waitForTaskToken',
      TimeoutSecondsPath: '$.Payload.hedgeSeconds',
      Parameters: {
        FunctionName: fn('DeadlineFunction'),
        Payload: {
          action: 'await',
          'taskToken.$': '$$.Task.Token',
          'runId.$': '$.Payload.runId',
          'tenantId.$': '$.Payload.tenantId',
          'subtaskId.$': '$.Payload.subtaskId',
          'deadline.$': '$.Payload.deadline',
          'hedgeSeconds.$': '$.Payload.hedgeSeconds',
        },
      },
      ResultPath: '$.callback',
      End: true,
    });
    expect(state('AwaitHedge').TimeoutSeconds).toBeUndefined();
  });

  test('AwaitHedge: States.Timeout (the hedge came due) → Hedge; any other error waits for the deadline', () => {
    expect(state('AwaitHedge').Catch).toEqual([
      { ErrorEquals: ['States.Timeout'], Next: 'Hedge', ResultPath: '$.awaitError' },
      { ErrorEquals: ['States.ALL'], Next: 'WaitForDeadline', ResultPath: '$.awaitError' },
    ]);
  });

  test('Hedge names the subtask from $.Payload, keeps the payload (the Map item again) and goes back to Arm', () => {
    expect(state('Hedge')).toMatchObject({
      Type: 'Task',
      Resource: INVOKE,
      Parameters: {
        FunctionName: fn('DeadlineFunction'),
        Payload: {
          action: 'hedge',
          'runId.$': '$.Payload.runId',
          'tenantId.$': '$.Payload.tenantId',
          'subtaskId.$': '$.Payload.subtaskId',
          'deadline.$': '$.Payload.deadline',
        },
      },
      OutputPath: '$.Payload',
      Next: 'Arm',
    });
    // Arm reads the item's own fields from `$`: the Hedge step's payload must carry them.
    expect(state('Arm').Parameters?.Payload).toMatchObject({
      'runId.$': '$.runId',
      'tenantId.$': '$.tenantId',
      'subtaskId.$': '$.subtaskId',
      'deadline.$': '$.deadline',
    });
  });

  test('a hedge that cannot start never seals early: Hedge catches everything into WaitForDeadline', () => {
    expect(state('Hedge').Catch).toEqual([{ ErrorEquals: ['States.ALL'], Next: 'WaitForDeadline', ResultPath: '$.hedgeError' }]);
  });
});

describe('seal path', () => {
  test('Await: States.Timeout seals at once; any other error first waits for the deadline', () => {
    expect(state('Await').Catch).toEqual([
      { ErrorEquals: ['States.Timeout'], Next: 'Seal', ResultPath: '$.awaitError' },
      { ErrorEquals: ['States.ALL'], Next: 'WaitForDeadline', ResultPath: '$.awaitError' },
    ]);
    expect(state('WaitForDeadline')).toEqual({ Type: 'Wait', TimestampPath: '$.Payload.deadline', Next: 'Seal' });
  });

  test('Seal names the subtask from $.Payload and ends the iteration itself, with no Succeed state after it', () => {
    expect(state('Seal')).toMatchObject({
      Type: 'Task',
      Resource: INVOKE,
      Parameters: {
        FunctionName: fn('DeadlineFunction'),
        Payload: { action: 'seal', 'runId.$': '$.Payload.runId', 'tenantId.$': '$.Payload.tenantId', 'subtaskId.$': '$.Payload.subtaskId' },
      },
      End: true,
    });
    expect(findState(batchAsl, 'SubtaskSealed')).toBeUndefined();
  });
});

describe('failure handling', () => {
  const allTasks = (): [string, AslState][] =>
    [...Object.entries(asl.States), ...Object.entries(batchAsl.States), ...Object.entries(iteration().States)].filter(([, s]) => s.Type === 'Task');

  test('every Task retries exactly the transient errors, with jittered backoff', () => {
    expect(
      allTasks()
        .map(([name]) => name)
        .sort(),
    ).toEqual(['Arm', 'Await', 'AwaitHedge', 'Dispatch', 'Finalize', 'Hedge', 'LoadBatch', 'Reconcile', 'Seal']);
    for (const [, task] of allTasks()) {
      expect(task.Retry).toHaveLength(1);
      expect(task.Retry?.[0]).toMatchObject({ ErrorEquals: [...TRANSIENT_ERRORS], BackoffRate: 2, JitterStrategy: 'FULL' });
    }
  });

  test("the retried errors are the ones the handlers really throw, plus Lambda's transient faults and throttling", () => {
    const retried = state('Dispatch').Retry?.[0]?.ErrorEquals ?? [];
    // The adapters' transient errors, named as a handler that throws them reports them.
    expect(retried).toContain(new WriteConflict({ runId: 'r1', operation: 'appendRound', attempts: 8 }).name);
    expect(retried).toContain(new EnqueueFailed(['A'], ['ServiceUnavailable']).name);
    // What AWS recommends every Lambda task retry, and Lambda's own throttling.
    for (const name of [
      'Lambda.ServiceException',
      'Lambda.AWSLambdaException',
      'Lambda.SdkClientException',
      'Lambda.ClientExecutionTimeoutException',
      'Lambda.TooManyRequestsException',
    ]) {
      expect(retried).toContain(name);
    }
    // DynamoDB throttling that outlasted the SDK's retries.
    for (const name of ['ThrottlingException', 'ProvisionedThroughputExceededException', 'RequestLimitExceeded']) expect(retried).toContain(name);
    // A name no error class carries would only hide a drift.
    expect(retried).not.toContain('TransientError');
    expect(new Set(retried).size).toBe(retried.length);
  });

  test('subtask tasks retry briefly (1 s, 2 attempts): a retried Await must not stretch the deadline by much', () => {
    for (const name of ['Arm', 'Await', 'AwaitHedge', 'Hedge', 'Seal']) {
      expect(state(name).Retry?.[0]).toMatchObject({ IntervalSeconds: 1, MaxAttempts: 2, MaxDelaySeconds: 2 });
    }
    for (const name of ['Dispatch', 'Reconcile', 'Finalize', 'LoadBatch']) {
      expect(state(name).Retry?.[0]).toMatchObject({ IntervalSeconds: 2, MaxAttempts: 6, MaxDelaySeconds: 30 });
    }
  });

  test('Dispatch, AwaitBatches and Reconcile catch everything into Finalize, keeping the run ids', () => {
    for (const name of ['Dispatch', 'AwaitBatches', 'Reconcile']) {
      expect(state(name).Catch).toEqual([{ ErrorEquals: ['States.ALL'], Next: 'Finalize', ResultPath: '$.error' }]);
    }
  });

  test('Finalize records the run as failed with the error, then fails the execution; its own failure is named', () => {
    expect(state('Finalize')).toMatchObject({
      Resource: INVOKE,
      Parameters: {
        FunctionName: fn('ReconcileFunction'),
        Payload: { mode: 'abort', 'runId.$': '$.runId', 'tenantId.$': '$.tenantId', 'error.$': '$.error' },
      },
      Next: 'RunFailed',
      Catch: [{ ErrorEquals: ['States.ALL'], Next: 'FinalizeFailed', ResultPath: '$.finalizeError' }],
    });
    expect(state('FinalizeFailed')).toMatchObject({ Type: 'Fail', Error: 'FinalizeFailed' });
  });

  test('no run can end silent or stuck: every state can reach an end, and every transition targets a real state', () => {
    for (const machine of [asl, batchAsl, iteration()]) {
      const targets = (s: AslState): string[] => [
        ...(s.Next ? [s.Next] : []),
        ...(s.Default ? [s.Default] : []),
        ...(s.Catch ?? []).map((c) => c.Next),
        ...(s.Choices ?? []).map((c) => String(c.Next)),
      ];
      const ends = new Set(
        Object.entries(machine.States)
          .filter(([, s]) => s.Type === 'Succeed' || s.Type === 'Fail' || s.End)
          .map(([n]) => n),
      );
      // Fixed point: a state reaches an end if any of its targets does.
      let grew = true;
      while (grew) {
        grew = false;
        for (const [name, s] of Object.entries(machine.States)) {
          if (!ends.has(name) && targets(s).some((t) => ends.has(t))) {
            ends.add(name);
            grew = true;
          }
        }
      }
      expect([...ends].sort()).toEqual(Object.keys(machine.States).sort());
      for (const s of Object.values(machine.States)) {
        for (const target of targets(s)) expect(Object.keys(machine.States)).toContain(target);
      }
    }
  });
});

describe('deadline figures, counted on the synthesized definition', () => {
  test('callback: a finished subtask costs 3 transitions and 13 events (+2 for the iteration), 2 invocations', () => {
    const cost = callbackSubtaskCost(iteration());
    expect(cost).toEqual({
      path: ['Arm', 'IsSubtaskOpen', 'Await'],
      transitions: 3,
      historyEvents: 5 + 2 + 6,
      lambdaInvocations: 2,
    });
  });

  test('callback: a timed-out subtask goes Await → Seal: 4 transitions, 18 events, 3 invocations', () => {
    expect(callbackTimeoutCost(iteration())).toEqual({
      path: ['Arm', 'IsSubtaskOpen', 'Await', 'Seal'],
      transitions: 4,
      historyEvents: 5 + 2 + 6 + 5,
      lambdaInvocations: 3,
    });
  });

  test('hedged: Arm → AwaitHedge times out → Hedge → Arm → Await: 7 transitions, 31 events (+2), 5 invocations', () => {
    expect(callbackHedgedCost(iteration())).toEqual({
      path: ['Arm', 'IsSubtaskOpen', 'AwaitHedge', 'Hedge', 'Arm', 'IsSubtaskOpen', 'Await'],
      transitions: 7,
      // Arm 5, Choice 2, callback 6, Hedge 5, Arm 5, Choice 2, callback 6
      historyEvents: 5 + 2 + 6 + 5 + 5 + 2 + 6,
      lambdaInvocations: 5,
    });
  });

  test('poll every 5 s, done after 60 s: 13 checks and 12 waits', () => {
    const cost = pollSubtaskCost(iteration(), 60, 5);
    expect(cost.transitions).toBe(13 + 13 + 12 + 1);
    expect(cost.historyEvents).toBe(13 * 5 + 13 * 2 + 12 * 2 + 2);
    expect(cost.lambdaInvocations).toBe(13);
  });

  test('poll every 1 s, done after 10 s: 11 checks and 10 waits', () => {
    const cost = pollSubtaskCost(iteration(), 10, 1);
    expect([cost.transitions, cost.historyEvents, cost.lambdaInvocations]).toEqual([33, 99, 11]);
  });

  test('one batch’s child outside its iterations: execution 2 + LoadBatch 5 + Map 4', () => {
    expect(batchOverheadEvents(batchAsl)).toBe(11);
  });

  test('history limit: 1,665 callback subtasks per child execution against 209 polled every 5 s for 60 s', () => {
    const figures = deadlineFigures(batchAsl, [60], [5]);
    // (25,000 − 11) / 15 and (25,000 − 11) / 119, rounded down
    expect(figures.map((f) => [f.design, f.maxSubtasksPerExecution])).toEqual([
      ['callback', 1665],
      ['poll 5 s', 209],
    ]);
  });

  test('cost per 1,000 callback subtasks: 3,000 transitions ($0.075) plus 2,000 small invocations', () => {
    const [callback] = deadlineFigures(batchAsl, [60], []);
    // 3 × $0.000025 + 2 × ($0.0000002 + 0.5 GB × 0.05 s × $0.0000133334), times 1,000
    expect(callback?.usdPer1000Subtasks).toBeCloseTo(0.07607, 5);
  });
});

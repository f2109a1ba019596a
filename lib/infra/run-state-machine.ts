import { Duration, Names, RemovalPolicy } from 'aws-cdk-lib';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import * as tasks from 'aws-cdk-lib/aws-stepfunctions-tasks';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import { TRANSIENT_ERRORS } from './transient-errors';
import { START_EXECUTION_REFUSED_ERRORS } from '../orchestration/errors';
import { RUN_EXECUTION_ERRORS } from '../orchestration/execution-events';

/**
 * State names of the run state machine. The handlers, the local cloud's callback emulation and
 * the rendered-ASL tests all address states by these names, so they are part of the interface.
 *
 * @example
 * findState(asl, STATE_NAMES.await)?.TimeoutSecondsPath // '$.Payload.timeoutSeconds'
 */
export const STATE_NAMES = {
  dispatch: 'Dispatch',
  arm: 'Arm',
  isSubtaskOpen: 'IsSubtaskOpen',
  subtaskDone: 'SubtaskDone',
  await: 'Await',
  awaitHedge: 'AwaitHedge',
  hedge: 'Hedge',
  waitForDeadline: 'WaitForDeadline',
  seal: 'Seal',
  reconcile: 'Reconcile',
  nextRound: 'NextRound?',
  runEnded: 'RunEnded',
  runFailed: 'RunFailed',
  finalize: 'Finalize',
  finalizeFailed: 'FinalizeFailed',
  /** The run's Map over a round's batch descriptors. */
  awaitBatches: 'AwaitBatches',
  /** One batch: start its child execution and wait for it (`states:startExecution.sync:2`). */
  startBatch: 'StartBatch',
  /** The child's first state: its batch's subtasks from the ledger. */
  loadBatch: 'LoadBatch',
  /** The child's Map over its batch's subtasks, the per-subtask iteration; its output is the batch number only. */
  awaitBatchSubtasks: 'AwaitBatchSubtasks',
} as const;

/**
 * History events of one batch's child execution, counted on the definition this module builds
 * (test/infra/history-bound.test.ts walks the synthesized one and checks each figure): once per
 * child (its start and end 2, LoadBatch 5, the AwaitBatchSubtasks Map state 4), and per subtask
 * on the costliest path a hedged subtask can take (Arm, IsSubtaskOpen, AwaitHedge, Hedge, Arm,
 * IsSubtaskOpen, Await fails, WaitForDeadline, Seal, and its Map iteration).
 */
export const BATCH_EXECUTION_HISTORY = { limit: 25_000, perChild: 11, worstHedgedSubtask: 40 } as const;

/** Subtasks per batch, by default (`TesseraFanOut`'s `batchSubtasks`): 20 child executions for the largest round of 10,000. */
export const BATCH_SUBTASKS = 500;

/**
 * The most subtasks one batch may hold so that its child execution fits Step Functions' history
 * limit even if every subtask declares a hedge and takes its costliest path: ⌊(25,000 − 11) / 40⌋.
 * The construct refuses a larger `batchSubtasks` at synth; it is the one history bound there is.
 */
export const MAX_BATCH_SUBTASKS = Math.floor((BATCH_EXECUTION_HISTORY.limit - BATCH_EXECUTION_HISTORY.perChild) / BATCH_EXECUTION_HISTORY.worstHedgedSubtask);

/** Errors a task retries; defined beside the errors themselves (see `transient-errors.ts`). */
export { TRANSIENT_ERRORS } from './transient-errors';

/**
 * Retry budgets. Run-level tasks can wait out a longer outage. Tasks inside a subtask iteration
 * race an absolute deadline, so they retry briefly: a retried `Await` restarts its timer from
 * the `timeoutSeconds` that `Arm` computed, and these delays (1 s + 2 s at most) are the most it
 * can notice a deadline late. The deadline itself is judged by the ledger against the instant.
 */
export const RETRY_PROFILES = {
  run: { interval: Duration.seconds(2), maxAttempts: 6, backoffRate: 2, maxDelay: Duration.seconds(30) },
  subtask: { interval: Duration.seconds(1), maxAttempts: 2, backoffRate: 2, maxDelay: Duration.seconds(2) },
} as const;

export interface RunStateMachineProps {
  readonly dispatch: lambda.IFunction;
  readonly deadline: lambda.IFunction;
  readonly reconcile: lambda.IFunction;
  /** Subtask iterations that wait at once; more wait their turn, deadlines unchanged. */
  readonly mapMaxConcurrency: number;
  /** Overall execution timeout: a backstop, never the normal way a run ends. */
  readonly timeout: Duration;
  /**
   * How long one batch's child execution may run (its own timeout, and StartBatch's): a round
   * waits at most the longest deadline, so this is that plus room to seal. An explicit timeout on
   * StartBatch also keeps the local interpreter from its 60-second Task default.
   * @default - the run's `timeout`
   */
  readonly batchTimeout?: Duration;
  /**
   * Batches of a round whose child executions run at once (1–40): each waits on up to
   * `mapMaxConcurrency` subtasks. @default 40 (`BATCH_MAP_CONCURRENCY`)
   */
  readonly batchConcurrency?: number;
  readonly logRetention: logs.RetentionDays;
  readonly logRemovalPolicy: RemovalPolicy;
}

/**
 * Batches whose child executions run at once, by default: an inline Map's own ceiling. Each child
 * waits on up to `mapMaxConcurrency` subtasks, so 40 batches keep 1,600 subtask waits open at once.
 */
export const BATCH_MAP_CONCURRENCY = 40;

/** cdk-nag findings both state machines' roles share, each with its reason. */
const LAMBDA_AND_LOG_SUPPRESSIONS = [
  {
    id: 'AwsSolutions-IAM5',
    reason: "CDK grants lambda:InvokeFunction on each function and its versions (ARN:*) so a qualified invoke works; the functions are this construct's own.",
    appliesTo: [{ regex: '/^Resource::<.*\\.Arn>:\\*$/g' }],
  },
  {
    id: 'AwsSolutions-IAM5',
    reason: 'Log delivery (logs:CreateLogDelivery and the like) and X-Ray (xray:PutTraceSegments and the like) support no resource-level permissions.',
    appliesTo: ['Resource::*'],
  },
];

type RetryProfile = (typeof RETRY_PROFILES)[keyof typeof RETRY_PROFILES];

type InvokeOptions = Omit<tasks.LambdaInvokeProps, 'lambdaFunction' | 'payload' | 'retryOnServiceExceptions'>;

/**
 * A Lambda task on the optimized integration with the transient-error retry of `profile`
 * (CDK's own service-exception retry is off, so each task carries exactly one retrier).
 */
const invoke = (
  scope: Construct,
  name: string,
  fn: lambda.IFunction,
  payload: sfn.TaskInput,
  profile: RetryProfile,
  options: InvokeOptions = {},
): tasks.LambdaInvoke => {
  const task = new tasks.LambdaInvoke(scope, name, { ...options, lambdaFunction: fn, payload, retryOnServiceExceptions: false });
  task.addRetry({ errors: [...TRANSIENT_ERRORS], jitterStrategy: sfn.JitterType.FULL, ...profile });
  return task;
};

/**
 * Room a run-level Task leaves its function past the function's own timeout, for the invoke
 * around it: Lambda ends the function first, so the Task never cuts a running handler short.
 */
const RUN_TASK_MARGIN = Duration.seconds(30);

/**
 * A run-level Task's own timeout: its function's timeout plus {@link RUN_TASK_MARGIN}, or none
 * when the function's timeout is not known (an imported function). Step Functions sets no Task
 * timeout by default, so an invoke that never returns would hold the run until the execution's
 * own timeout; with this, the Task fails and its Catch closes the run. The States Language's
 * default is 60 s instead, and the local interpreter applies it: the explicit timeout is also
 * what lets a Dispatch of a 10,000-subtask round, or a Finalize sweeping it, run its five
 * minutes locally.
 */
const runTaskTimeout = (fn: lambda.IFunction): { taskTimeout: sfn.Timeout } | Record<string, never> => {
  const timeout = (fn as { timeout?: unknown }).timeout;
  return timeout instanceof Duration ? { taskTimeout: sfn.Timeout.duration(timeout.plus(RUN_TASK_MARGIN)) } : {};
};

/** `runId`, `tenantId` and `subtaskId` read from `base`: `$` for a Map item, `$.Payload` after Arm. */
const subtaskKey = (base: string) => ({
  runId: sfn.JsonPath.stringAt(`${base}.runId`),
  tenantId: sfn.JsonPath.stringAt(`${base}.tenantId`),
  subtaskId: sfn.JsonPath.stringAt(`${base}.subtaskId`),
});

/**
 * One subtask, against its absolute deadline: the iteration of each batch's child Map. Arm reads the ledger and answers from the same
 * instant whenever the iteration starts: already terminal, already expired, or the seconds
 * left. Await registers a task token and waits at most those seconds for the worker's answer.
 * A subtask with a hedge pending waits in AwaitHedge until the hedge is due, is hedged, and
 * goes back to Arm (docs/hedging.md).
 */
const subtaskIteration = (scope: Construct, deadline: lambda.IFunction): sfn.IChainable => {
  // Seal and the two waits end the iteration themselves: a Succeed after them would be one more
  // billed transition per subtask that carries nothing (the Map discards every iteration's output).
  const seal = invoke(scope, STATE_NAMES.seal, deadline, sfn.TaskInput.fromObject({ action: 'seal', ...subtaskKey('$.Payload') }), RETRY_PROFILES.subtask);

  // Only a subtask Arm found already terminal ends here: a Choice branch needs a state to go to.
  const subtaskDone = new sfn.Succeed(scope, STATE_NAMES.subtaskDone);
  const waitForDeadline = new sfn.Wait(scope, STATE_NAMES.waitForDeadline, {
    time: sfn.WaitTime.timestampPath('$.Payload.deadline'),
  }).next(seal);

  /** A callback wait for the worker's answer, ending at the whole seconds at `secondsPath`. */
  const callbackWait = (name: string, field: 'timeoutSeconds' | 'hedgeSeconds') =>
    invoke(
      scope,
      name,
      deadline,
      sfn.TaskInput.fromObject({
        action: 'await',
        taskToken: sfn.JsonPath.taskToken,
        ...subtaskKey('$.Payload'),
        deadline: sfn.JsonPath.stringAt('$.Payload.deadline'),
        // Repeated here so `$.Payload.<field>` exists in the effective input as well as in the
        // raw state input: AWS resolves TimeoutSecondsPath against the state input, the local
        // emulator against the input after Parameters. The same path then means the same value.
        [field]: sfn.JsonPath.numberAt(`$.Payload.${field}`),
      }),
      RETRY_PROFILES.subtask,
      {
        integrationPattern: sfn.IntegrationPattern.WAIT_FOR_TASK_TOKEN,
        taskTimeout: sfn.Timeout.at(`$.Payload.${field}`),
        resultPath: '$.callback',
      },
    );

  const awaitOutcome = callbackWait(STATE_NAMES.await, 'timeoutSeconds')
    // Catch keeps `$.Payload` (resultPath below it), so Seal still knows which subtask.
    .addCatch(seal, { errors: [sfn.Errors.TIMEOUT], resultPath: '$.awaitError' })
    // Any other failure must not seal early: wait out the original instant, then seal.
    .addCatch(waitForDeadline, { errors: [sfn.Errors.ALL], resultPath: '$.awaitError' });

  const arm = invoke(
    scope,
    STATE_NAMES.arm,
    deadline,
    sfn.TaskInput.fromObject({ action: 'arm', ...subtaskKey('$'), deadline: sfn.JsonPath.stringAt('$.deadline') }),
    RETRY_PROFILES.subtask,
    { resultSelector: { 'Payload.$': '$.Payload' } },
  );

  // Hedge: start the race and enqueue the copies, then Arm again (which no longer answers
  // `hedgeSeconds`, so the iteration waits for the deadline as without a hedge). Its payload is
  // the Map item again, so Arm reads it as it reads the first. A hedge that cannot be started is
  // no reason to seal early: like a failed Await, it waits out the instant, then seals.
  const hedge = invoke(
    scope,
    STATE_NAMES.hedge,
    deadline,
    sfn.TaskInput.fromObject({ action: 'hedge', ...subtaskKey('$.Payload'), deadline: sfn.JsonPath.stringAt('$.Payload.deadline') }),
    RETRY_PROFILES.subtask,
    { outputPath: '$.Payload' },
  )
    .addCatch(waitForDeadline, { errors: [sfn.Errors.ALL], resultPath: '$.hedgeError' })
    .next(arm);

  // Arm answers `hedgeSeconds` only while a hedge is due before the deadline, so this wait ends
  // at min(hedge, deadline); its timeout is the hedge coming due, never the deadline.
  const awaitHedge = callbackWait(STATE_NAMES.awaitHedge, 'hedgeSeconds')
    .addCatch(hedge, { errors: [sfn.Errors.TIMEOUT], resultPath: '$.awaitError' })
    .addCatch(waitForDeadline, { errors: [sfn.Errors.ALL], resultPath: '$.awaitError' });

  const hedgeSeconds = '$.Payload.hedgeSeconds';
  return arm.next(
    new sfn.Choice(scope, STATE_NAMES.isSubtaskOpen)
      .when(sfn.Condition.stringEquals('$.Payload.status', 'terminal'), subtaskDone)
      .when(sfn.Condition.stringEquals('$.Payload.status', 'expired'), seal)
      // A Choice on an absent path is a runtime error, so presence is tested first. A hedge due
      // now (0 s) cannot be waited for: TimeoutSecondsPath must be at least 1.
      .when(sfn.Condition.and(sfn.Condition.isPresent(hedgeSeconds), sfn.Condition.numberEquals(hedgeSeconds, 0)), hedge)
      .when(sfn.Condition.isPresent(hedgeSeconds), awaitHedge)
      .otherwise(awaitOutcome),
  );
};

/**
 * The Standard state machine of one run: Dispatch a round, wait for its batches, each a child
 * execution that waits for each subtask until its absolute deadline (callback pattern), Reconcile, loop for follow-up rounds, and on any failure
 * Finalize the run as failed with its coverage. Task payloads are fixed shapes that the handlers
 * parse with zod; see docs/architecture.md.
 *
 * @example
 * const machine = new RunStateMachine(this, 'Runs', {
 *   dispatch, deadline, reconcile, mapMaxConcurrency: 40, timeout: Duration.minutes(90),
 *   logRetention: RetentionDays.ONE_MONTH, logRemovalPolicy: RemovalPolicy.RETAIN,
 * });
 * machine.stateMachine.grantStartExecution(api);
 */
export class RunStateMachine extends Construct {
  readonly stateMachine: sfn.StateMachine;
  /**
   * The state machine of one batch of a round (docs/deadlines.md, "One round path"): LoadBatch
   * reads the batch's subtasks from the ledger, then the per-subtask iteration waits for each
   * until its absolute deadline. The run's StartBatch starts one execution per batch and waits for it.
   */
  readonly batchStateMachine: sfn.StateMachine;
  readonly logGroup: logs.LogGroup;

  constructor(scope: Construct, id: string, props: RunStateMachineProps) {
    super(scope, id);
    this.logGroup = new logs.LogGroup(this, 'Logs', {
      // The /aws/vendedlogs/ prefix keeps Step Functions from growing the account's 5 KB
      // CloudWatch Logs resource policy with one entry per state machine.
      logGroupName: `/aws/vendedlogs/states/${Names.uniqueResourceName(this, { maxLength: 200, separator: '-' })}`,
      retention: props.logRetention,
      removalPolicy: props.logRemovalPolicy,
    });
    this.batchStateMachine = new sfn.StateMachine(this, 'BatchStateMachine', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(this.batchDefinition(props)),
      timeout: props.batchTimeout ?? props.timeout,
      tracingEnabled: true,
      logs: { destination: this.logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    this.stateMachine = new sfn.StateMachine(this, 'StateMachine', {
      stateMachineType: sfn.StateMachineType.STANDARD,
      definitionBody: sfn.DefinitionBody.fromChainable(this.definition(props)),
      timeout: props.timeout,
      tracingEnabled: true,
      // Execution data is left out of the logs: task inputs carry task tokens, which are
      // bearer credentials for the waiting state, and logs never carry payloads or secrets.
      logs: { destination: this.logGroup, level: sfn.LogLevel.ALL, includeExecutionData: false },
    });
    NagSuppressions.addResourceSuppressions(this.batchStateMachine, LAMBDA_AND_LOG_SUPPRESSIONS, true);
    NagSuppressions.addResourceSuppressions(
      this.stateMachine,
      [
        ...LAMBDA_AND_LOG_SUPPRESSIONS,
        {
          id: 'AwsSolutions-IAM5',
          reason:
            "StartBatch waits for its child (startExecution.sync:2): Step Functions needs DescribeExecution and StopExecution on the batch machine's executions (execution:<batch machine name>:*, whose execution names are made at run time); CDK scopes them to that one machine.",
          // Any partition, region and account: a stack with a concrete env (the emulator lane's) writes them literally.
          appliesTo: [{ regex: '/^Resource::arn:.*:states:.*:execution:.*BatchStateMachine.*\\*$/g' }],
        },
      ],
      true,
    );
  }

  private invoke(name: string, fn: lambda.IFunction, payload: sfn.TaskInput, profile: RetryProfile, options: InvokeOptions = {}): tasks.LambdaInvoke {
    return invoke(this, name, fn, payload, profile, options);
  }

  private definition(props: RunStateMachineProps): sfn.IChainable {
    const runFailed = new sfn.Fail(this, STATE_NAMES.runFailed, {
      error: RUN_EXECUTION_ERRORS.runFailed,
      cause: 'The run ended failed; GET /runs/{runId} holds its coverage and reason.',
    });
    const finalize = this.finalize(props.reconcile, runFailed);
    const catchToFinalize = { errors: [sfn.Errors.ALL], resultPath: '$.error' };

    const dispatch = this.invoke(STATE_NAMES.dispatch, props.dispatch, sfn.TaskInput.fromJsonPathAt('$'), RETRY_PROFILES.run, {
      outputPath: '$.Payload',
      ...runTaskTimeout(props.dispatch),
    }).addCatch(finalize, catchToFinalize);

    const reconcile = this.invoke(
      STATE_NAMES.reconcile,
      props.reconcile,
      sfn.TaskInput.fromObject({
        mode: 'reconcile',
        runId: sfn.JsonPath.stringAt('$.runId'),
        tenantId: sfn.JsonPath.stringAt('$.tenantId'),
        round: sfn.JsonPath.numberAt('$.round'),
      }),
      RETRY_PROFILES.run,
      { outputPath: '$.Payload', ...runTaskTimeout(props.reconcile) },
    ).addCatch(finalize, catchToFinalize);

    // Reconcile's output is already the next Dispatch input (round + 1), so the loop needs no glue.
    // A run that Reconcile recorded ends its execution SUCCEEDED, whatever the run's own status
    // (a policy failure is an answer, not a fault), so a FAILED execution always means something
    // went wrong and the ExecutionsUnfinished alarm can count every one of them.
    const nextRound = new sfn.Choice(this, STATE_NAMES.nextRound)
      .when(sfn.Condition.stringEquals('$.next', 'dispatch'), dispatch)
      .otherwise(new sfn.Succeed(this, STATE_NAMES.runEnded));

    // Every round runs the same way: one iteration per batch descriptor, each starting the batch's
    // child execution and waiting for it, so the run's own history grows by batches, never by subtasks. Only the child's status comes back, so the run's state stays
    // a few dozen bytes per batch; a child that fails, times out or is aborted fails StartBatch,
    // and the Catch closes the run through Finalize with its coverage.
    const startBatch = new tasks.StepFunctionsStartExecution(this, STATE_NAMES.startBatch, {
      stateMachine: this.batchStateMachine,
      integrationPattern: sfn.IntegrationPattern.RUN_JOB,
      input: sfn.TaskInput.fromObject({
        runId: sfn.JsonPath.stringAt('$.runId'),
        tenantId: sfn.JsonPath.stringAt('$.tenantId'),
        round: sfn.JsonPath.numberAt('$.round'),
        batch: sfn.JsonPath.numberAt('$.batch'),
      }),
      // One name per batch of a round: a repeated start of the same batch is the same execution.
      name: sfn.JsonPath.format('{}-{}-{}', sfn.JsonPath.stringAt('$.runId'), sfn.JsonPath.stringAt('$.round'), sfn.JsonPath.stringAt('$.batch')),
      associateWithParent: true,
      taskTimeout: sfn.Timeout.duration(props.batchTimeout ?? props.timeout),
      resultSelector: { 'status.$': '$.Status' },
    });
    // A start refused by the open-executions quota or by throttling is retried like a run-level
    // Lambda: the same name again, so a start that did happen is not started twice.
    startBatch.addRetry({ errors: [...START_EXECUTION_REFUSED_ERRORS], jitterStrategy: sfn.JitterType.FULL, ...RETRY_PROFILES.run });
    const awaitBatches = new sfn.Map(this, STATE_NAMES.awaitBatches, {
      itemsPath: '$.batches',
      maxConcurrency: props.batchConcurrency ?? BATCH_MAP_CONCURRENCY,
      itemSelector: {
        runId: sfn.JsonPath.stringAt('$.runId'),
        tenantId: sfn.JsonPath.stringAt('$.tenantId'),
        round: sfn.JsonPath.numberAt('$$.Map.Item.Value.round'),
        batch: sfn.JsonPath.numberAt('$$.Map.Item.Value.batch'),
      },
      resultPath: sfn.JsonPath.DISCARD,
    })
      .itemProcessor(startBatch)
      .addCatch(finalize, catchToFinalize);

    return dispatch.next(awaitBatches).next(reconcile).next(nextRound);
  }

  /** One batch: LoadBatch, then the per-subtask iteration over its subtasks; the child answers its batch number. */
  private batchDefinition(props: RunStateMachineProps): sfn.IChainable {
    // Its own scope: the child's states are apart from the run's in the construct tree.
    const scope = new Construct(this, 'Batch');
    const loadBatch = invoke(
      scope,
      STATE_NAMES.loadBatch,
      props.deadline,
      sfn.TaskInput.fromObject({
        action: 'batch',
        runId: sfn.JsonPath.stringAt('$.runId'),
        tenantId: sfn.JsonPath.stringAt('$.tenantId'),
        round: sfn.JsonPath.numberAt('$.round'),
        batch: sfn.JsonPath.numberAt('$.batch'),
      }),
      RETRY_PROFILES.run,
      { resultSelector: { 'items.$': '$.Payload.items' }, resultPath: '$.loaded' },
    );
    // The Map's OutputPath answers the batch number, with no Succeed state after it to pay for.
    const awaitBatchSubtasks = new sfn.Map(scope, STATE_NAMES.awaitBatchSubtasks, {
      itemsPath: '$.loaded.items',
      maxConcurrency: props.mapMaxConcurrency,
      resultPath: sfn.JsonPath.DISCARD,
      outputPath: '$.batch',
    }).itemProcessor(subtaskIteration(scope, props.deadline));
    return loadBatch.next(awaitBatchSubtasks);
  }

  /** The one way a run ends after a failure: recorded failed, with coverage, then RunFailed. */
  private finalize(reconcile: lambda.IFunction, runFailed: sfn.Fail): sfn.IChainable {
    return this.invoke(
      STATE_NAMES.finalize,
      reconcile,
      sfn.TaskInput.fromObject({
        mode: 'abort',
        runId: sfn.JsonPath.stringAt('$.runId'),
        tenantId: sfn.JsonPath.stringAt('$.tenantId'),
        error: sfn.JsonPath.objectAt('$.error'),
      }),
      RETRY_PROFILES.run,
      runTaskTimeout(reconcile),
    )
      .addCatch(
        new sfn.Fail(this, STATE_NAMES.finalizeFailed, {
          error: RUN_EXECUTION_ERRORS.finalizeFailed,
          cause: 'The run could not be recorded as failed; its ledger status may still read running.',
        }),
        { errors: [sfn.Errors.ALL], resultPath: '$.finalizeError' },
      )
      .next(runFailed);
  }
}

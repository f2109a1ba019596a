import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { Annotations, ArnFormat, Duration, RemovalPolicy, Stack } from 'aws-cdk-lib';
import type * as cloudwatch from 'aws-cdk-lib/aws-cloudwatch';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import * as logs from 'aws-cdk-lib/aws-logs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type * as sfn from 'aws-cdk-lib/aws-stepfunctions';
import { NagSuppressions } from 'cdk-nag';
import { Construct } from 'constructs';
import type { RunStatus, TerminalState } from '../contract';
import { OUTCOME_ATTRIBUTES } from '../ledger/items';
import { METRIC_DIMENSIONS, METRICS } from '../observability/metrics';
import type { UnfinishedExecutionStatus } from '../orchestration/execution-events';
import { LEDGER_ACTIONS, type LedgerFunction, type LedgerGrant, type TenantScopedFunction } from '../ledger/access';
import { LEDGER_TABLE, RUN_LIST_INDEX } from '../ledger/table';
import { ENV } from '../runtime/environment';
import { kindCapacity } from '../runtime/capacity';
import { MODEL_ENV } from '../workers/models/config';
import { FAN_OUT_DEFAULTS, MAX_RECEIVE_COUNT, MAX_ROUNDS, type WorkerKindSettings } from './defaults';
import { InvalidConstructProps } from './errors';
import { FAN_OUT_METADATA_KEY, type FanOutMetadata } from './fan-out-metadata';
import { FanOutMonitoring } from './fan-out-monitoring';
import { parseFanOutSettings, type FanOutSettings } from './fan-out-settings';
import { RunClosure } from './run-closure';
import { runMetric, type RunMetricName } from './run-metrics';
import { RunStateMachine } from './run-state-machine';
import { RunsApi, type ApiThrottle, type JwtAuthConfig } from './runs-api';
import { SubtaskQueues } from './subtask-queues';
import { TesseraFunction, type TesseraFunctionProps } from './tessera-function';
import { projectOf, writeFunctionEntry, type WorkerProject } from './function-entries';
import { packageModule } from './handler-metadata';
import { readWorkerModule, WorkerModuleUnreadable, type WorkerModuleSummary } from './worker-module-reader';

/** Which model adapter workers and synthesis use. */
export type ModelConfig =
  | { readonly provider: 'offline' }
  /** Bedrock; the functions may invoke this one model and no other. */
  | { readonly provider: 'bedrock'; readonly modelId: string };

/** A tenant's allowance per UTC day, across all its runs. */
export interface TenantDailyAllowance {
  readonly modelCalls: number;
  /** In the same integer cost units as request budgets. */
  readonly costLimit: number;
}

export interface TesseraFanOutProps {
  /** JWT issuer and audiences the API accepts, and the claim naming the tenant. */
  readonly auth: JwtAuthConfig;
  /** Browser origins allowed to call the API. @default - none: no CORS configuration */
  readonly corsAllowedOrigins?: readonly string[];
  /** Stage-wide API throttling. @default { rateLimit: 20, burstLimit: 40 } */
  readonly throttle?: ApiThrottle;
  /**
   * The worker module: a module exporting `registry` (or a default export) made with
   * `createRegistry([...])`. It is read at synth time: each of its kinds gets a queue and an
   * event-source mapping, and it is bundled into every function that runs or plans worker kinds.
   * A relative `entry` is resolved against the current directory, as NodejsFunction's is.
   */
  readonly workers: WorkerModuleProps;
  /**
   * Settings per worker kind, keyed by kind name; a key that names no kind of the worker module
   * fails synth. @default - every kind: `maxConcurrency` 5
   */
  readonly kinds?: Readonly<Record<string, WorkerKindSettings>>;
  /** Worker Lambda timeout; the claim lease equals it. @default Duration.minutes(2) */
  readonly workerTimeout?: Duration;
  /**
   * How long each worker event source gathers messages before it invokes the worker with a batch
   * that is not full (`MaximumBatchingWindowInSeconds`, whole seconds, 0–300). A window means
   * fewer, fuller invocations, and every subtask waits up to that long before it starts.
   * @default Duration.seconds(0): the worker is invoked as soon as messages arrive, as Lambda's own default
   */
  readonly workerBatchingWindow?: Duration;
  /** Latest deadline a subtask may ask for, from dispatch. @default Duration.minutes(15) */
  readonly maxDeadline?: Duration;
  /** Subtasks waited on at once by each batch's Map (1–40). @default 40 */
  readonly mapMaxConcurrency?: number;
  /**
   * Batches of a round whose child executions run at once (1–40), each waiting on up to
   * `mapMaxConcurrency` of its subtasks; lower it to bound the Lambda invocations a large round
   * makes at once. @default 40 (`BATCH_MAP_CONCURRENCY`)
   */
  readonly batchConcurrency?: number;
  /**
   * Subtasks per batch, each batch of a round run by a child execution of its own
   * (docs/deadlines.md, "One round path"); at most 624 (`MAX_BATCH_SUBTASKS`), so a child's
   * history holds its batch with every subtask hedged. @default 500 (`BATCH_SUBTASKS`)
   */
  readonly batchSubtasks?: number;
  /**
   * Ignored, kept so that apps which set it still compile: it was the largest round run on the
   * run's own inline Map, and every round now runs as batches (docs/deadlines.md, "One round
   * path"). Setting it adds a synth warning.
   * @deprecated every round runs as batches; use `batchSubtasks`.
   */
  readonly inlineSubtasks?: number;
  /** Per-tenant daily model allowance. @default { modelCalls: 2000, costLimit: 200000 } */
  readonly tenantDailyAllowance?: TenantDailyAllowance;
  /** Model adapter. @default { provider: 'offline' } */
  readonly model?: ModelConfig;
  /** Retention of every log group. @default logs.RetentionDays.ONE_MONTH */
  readonly logRetention?: logs.RetentionDays;
  /** Removal policy of the ledger table and the log groups. @default RemovalPolicy.RETAIN */
  readonly removalPolicy?: RemovalPolicy;
  /** DynamoDB deletion protection on the ledger table. @default true */
  readonly deletionProtection?: boolean;
  /** Actions of every alarm, such as an `SnsAction`. @default - none */
  readonly alarmActions?: readonly cloudwatch.IAlarmAction[];
  /** Share of finished runs with incomplete coverage, per hour, that raises the alarm. @default 0.05 */
  readonly degradedRunRateThreshold?: number;
  /** Powertools service name of every function, and the `service` dimension of run metrics. @default 'tessera' */
  readonly serviceName?: string;
}

/** Where the deployment's worker kinds come from. */
export interface WorkerModuleProps {
  /** Path of the worker module: `src/workers.ts`. */
  readonly entry: string;
}

/** The five Lambda functions of a fan-out. */
export interface FanOutFunctions {
  readonly api: TesseraFunction;
  readonly dispatch: TesseraFunction;
  readonly deadline: TesseraFunction;
  readonly worker: TesseraFunction;
  readonly reconcile: TesseraFunction;
}

/** Construct ids of the ledger-access roles, beside the functions' own (`ApiFunction`, …). */
const LEDGER_ACCESS_IDS = { api: 'Api', dispatch: 'Dispatch', deadline: 'Deadline', worker: 'Worker' } as const satisfies Record<TenantScopedFunction, string>;

/** What `grantReadLedger` allows: reads of items, queries and scans, never a write. */
const LEDGER_READ_ACTIONS = ['dynamodb:GetItem', 'dynamodb:BatchGetItem', 'dynamodb:Query', 'dynamodb:Scan', 'dynamodb:DescribeTable'] as const;

/** Actions that answer a waiting task token. */
const TASK_RESPONSE_ACTIONS = ['states:SendTaskSuccess', 'states:SendTaskFailure', 'states:SendTaskHeartbeat'];

/**
 * The whole tessera fan-out as one construct: the authenticated HTTP API, the run ledger table,
 * a queue per worker kind with a shared dead-letter queue, the five functions, the run state
 * machine, and its alarms. Drop it into any stack; bring your own JWT issuer.
 *
 * @example
 * const fanOut = new TesseraFanOut(this, 'FanOut', {
 *   auth: { issuer: `https://cognito-idp.${this.region}.amazonaws.com/${pool.userPoolId}`, audiences: [client.userPoolClientId] },
 *   workers: { entry: 'src/workers.ts' },
 *   kinds: { 'transaction-feed': { maxConcurrency: 10 } },
 *   model: { provider: 'bedrock', modelId: 'anthropic.claude-3-haiku-20240307-v1:0' },
 * });
 * new CfnOutput(this, 'ApiUrl', { value: fanOut.api.url });
 */
export class TesseraFanOut extends Construct {
  readonly api: RunsApi;
  readonly table: dynamodb.Table;
  readonly stateMachine: sfn.StateMachine;
  /** The state machine of one batch of a batched round, started by the run's StartBatch. */
  readonly batchStateMachine: sfn.StateMachine;
  /** Queue of each worker kind, by kind name. */
  readonly queues: Readonly<Record<string, sqs.Queue>>;
  /** JSON object from worker kind to queue URL (a token until deploy), for outputs and tooling. */
  readonly queueUrlsJson: string;
  readonly deadLetterQueue: sqs.Queue;
  readonly functions: FanOutFunctions;
  readonly monitoring: FanOutMonitoring;
  readonly runClosure: RunClosure;
  /** The validated settings this fan-out was built from, defaults applied. */
  readonly settings: FanOutSettings;
  /** Absolute path of the worker module. */
  readonly workerModule: string;
  /** The ledger-access role of each tenant-scoped function, assumed per tenant. */
  readonly ledgerAccessRoles: Readonly<Record<TenantScopedFunction, iam.Role>>;

  constructor(scope: Construct, id: string, props: TesseraFanOutProps) {
    super(scope, id);
    if (props.inlineSubtasks !== undefined) {
      Annotations.of(this).addWarningV2(
        'tessera:inlineSubtasksIgnored',
        'inlineSubtasks is ignored: every round runs as batches of child executions; size them with batchSubtasks (docs/deadlines.md, "One round path")',
      );
    }
    const workers = readWorkers(this.node.path, props);
    this.workerModule = workers.path;
    this.settings = parseFanOutSettings(this.node.path, settingsInput(this.node.path, props, workers.summary.kinds));
    // Read back from the cloud assembly by `tessera serve`, which runs the local cloud with these settings.
    this.node.addMetadata(FAN_OUT_METADATA_KEY, fanOutMetadata(this.settings, this.workerModule));
    const logRetention = props.logRetention ?? logs.RetentionDays.ONE_MONTH;
    const removalPolicy = props.removalPolicy ?? RemovalPolicy.RETAIN;
    this.table = this.ledgerTable(removalPolicy, props.deletionProtection ?? true);
    const subtaskQueues = new SubtaskQueues(this, 'Queues', {
      workerKinds: Object.entries(this.settings.kinds).map(([kind, settings]) => ({ kind, ...settings })),
      workerTimeout: Duration.seconds(this.settings.workerTimeoutSeconds),
      batchingWindow: Duration.seconds(this.settings.workerBatchingWindowSeconds),
    });
    this.queues = subtaskQueues.queues;
    this.queueUrlsJson = subtaskQueues.queueUrlsJson();
    this.deadLetterQueue = subtaskQueues.deadLetterQueue;
    this.functions = this.createFunctions(workers, logRetention, removalPolicy);
    // Dispatch enqueues each round; the deadline function enqueues a hedged subtask's copies
    // (its Hedge step). Both send to the kind queues only, never to the dead-letter queue.
    for (const sender of [this.functions.dispatch, this.functions.deadline]) {
      subtaskQueues.grantSend(sender);
      sender.function.addEnvironment(ENV.queueUrls, subtaskQueues.queueUrlsJson());
    }
    subtaskQueues.attachWorker(this.functions.worker.function, { batchSize: FAN_OUT_DEFAULTS.workerBatchSize });

    const runs = new RunStateMachine(this, 'Runs', {
      dispatch: this.functions.dispatch.function,
      deadline: this.functions.deadline.function,
      reconcile: this.functions.reconcile.function,
      mapMaxConcurrency: this.settings.mapMaxConcurrency,
      batchConcurrency: this.settings.batchConcurrency,
      // Every round may wait out a full deadline; one more span covers dispatch and synthesis.
      timeout: Duration.seconds(this.settings.maxDeadlineSeconds * (MAX_ROUNDS + 1)),
      // A batch holds one round: its longest deadline, and as long again to arm and seal the rest.
      batchTimeout: Duration.seconds(this.settings.maxDeadlineSeconds * 2),
      logRetention,
      logRemovalPolicy: removalPolicy,
    });
    this.stateMachine = runs.stateMachine;
    this.batchStateMachine = runs.batchStateMachine;
    this.ledgerAccessRoles = this.grantRunAccess();
    // A run whose execution ends without recording it (Finalize failed, aborted, timed out) is
    // closed by the reconcile function's abort path, from the execution's status change.
    this.runClosure = new RunClosure(this, 'RunClosure', { stateMachine: this.stateMachine, closer: this.functions.reconcile.function });

    this.api = new RunsApi(this, 'Api', {
      handler: this.functions.api.function,
      auth: { ...props.auth, tenantClaim: this.settings.auth.tenantClaim },
      corsAllowedOrigins: this.settings.corsAllowedOrigins,
      throttle: this.settings.throttle,
      logRetention,
      logRemovalPolicy: removalPolicy,
    });
    this.monitoring = new FanOutMonitoring(this, 'Monitoring', {
      serviceName: this.settings.serviceName,
      stateMachine: this.stateMachine,
      batchStateMachine: this.batchStateMachine,
      deadLetterQueue: this.deadLetterQueue,
      runClosureDeadLetterQueue: this.runClosure.deadLetterQueue,
      functions: Object.fromEntries(Object.entries(this.functions).map(([name, fn]) => [name, fn.function])),
      degradedRunRateThreshold: this.settings.degradedRunRateThreshold,
      alarmActions: props.alarmActions ?? [],
    });
  }

  /**
   * Any run metric of this fan-out (namespace `Tessera`, its `service` dimension), the sum over 5
   * minutes unless `props` say otherwise. The named `metric*()` methods below are this, with the
   * metric's own dimension.
   *
   * @example
   * fanOut.metric('RunsDegraded', { period: Duration.hours(1) }).createAlarm(this, 'Degraded', { threshold: 5, evaluationPeriods: 1 });
   */
  metric(metricName: RunMetricName, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return runMetric(this.settings.serviceName, metricName, {}, props);
  }

  /** Runs that ended with this status (`RunsFinished`, dimension `status`). */
  metricRunsFinished(status: Exclude<RunStatus, 'running'>, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return runMetric(this.settings.serviceName, METRICS.runsFinished, { [METRIC_DIMENSIONS.status]: status }, props);
  }

  /** Runs that ended with `coverage.complete: false` (`RunsDegraded`). */
  metricRunsDegraded(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(METRICS.runsDegraded, props);
  }

  /** Degraded runs by one reason, such as `timed_out` or `gap_unresolved` (`RunsDegradedByReason`, dimension `reason`). */
  metricRunsDegradedByReason(reason: string, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return runMetric(this.settings.serviceName, METRICS.degradedByReason, { [METRIC_DIMENSIONS.reason]: reason }, props);
  }

  /** Subtasks of finished runs that ended in this state (`SubtasksByState`, dimension `state`). */
  metricSubtasksByState(state: TerminalState, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return runMetric(this.settings.serviceName, METRICS.subtasksByState, { [METRIC_DIMENSIONS.state]: state }, props);
  }

  /** Observed gaps re-checked against another source (`GapsRechecked`). */
  metricGapsRechecked(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(METRICS.gapsRechecked, props);
  }

  /**
   * Runs still open when their execution ended with this status, closed from the execution's
   * status change (`RunsClosedOnExecutionEnd`, dimension `executionStatus`).
   */
  metricRunsClosedOnExecutionEnd(executionStatus: UnfinishedExecutionStatus, props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return runMetric(this.settings.serviceName, METRICS.runsClosedOnExecutionEnd, { [METRIC_DIMENSIONS.executionStatus]: executionStatus }, props);
  }

  /** Worker results that arrived after their subtask was sealed or cancelled (`LateResults`). */
  metricLateResults(props?: cloudwatch.MetricOptions): cloudwatch.Metric {
    return this.metric(METRICS.lateResults, props);
  }

  /**
   * Lets an operator (a role, a user, a support tool's function) read both state machines'
   * executions and their histories: what a run stuck in `running` is waiting on. Grants no start,
   * stop or task response.
   *
   * @example
   * fanOut.grantReadExecutions(supportRole);
   */
  grantReadExecutions(grantee: iam.IGrantable): iam.Grant {
    const machines = [this.stateMachine, this.batchStateMachine];
    const stack = Stack.of(this);
    // Executions are named by run id, so their ARNs are known only as a pattern under each machine.
    const executions = machines.map((machine) =>
      stack.formatArn({ service: 'states', resource: 'execution', resourceName: `${machine.stateMachineName}:*`, arnFormat: ArnFormat.COLON_RESOURCE_NAME }),
    );
    const grant = iam.Grant.addToPrincipal({
      grantee,
      actions: ['states:ListExecutions', 'states:DescribeStateMachine'],
      resourceArns: machines.map((machine) => machine.stateMachineArn),
    }).combine(iam.Grant.addToPrincipal({ grantee, actions: ['states:DescribeExecution', 'states:GetExecutionHistory'], resourceArns: executions }));
    if (grantee instanceof Construct) {
      NagSuppressions.addResourceSuppressions(
        grantee,
        [
          {
            id: 'AwsSolutions-IAM5',
            reason: "Reading a run's execution needs its ARN, which ends in the run id: the grant covers this fan-out's executions only.",
            appliesTo: [{ regex: '/^Resource::arn:<AWS::Partition>:states:<AWS::Region>:<AWS::AccountId>:execution:<.*StateMachine.*\\.Name>:\\*$/g' }],
          },
        ],
        true,
      );
    }
    return grant;
  }

  /**
   * Lets an operator receive and delete the messages of both dead-letter queues: subtask messages a
   * worker failed three times, and the status changes of executions whose run could not be closed.
   *
   * @example
   * fanOut.grantConsumeDeadLetters(onCallRole);
   */
  grantConsumeDeadLetters(grantee: iam.IGrantable): iam.Grant {
    return this.deadLetterQueue.grantConsumeMessages(grantee).combine(this.runClosure.deadLetterQueue.grantConsumeMessages(grantee));
  }

  /**
   * Lets a reporting or export job read the run ledger: every tenant's runs, subtasks, outcomes
   * and answers (the table and its run-list index), and nothing else. It crosses tenants: grant it
   * to operators' tools, never to anything a tenant controls. Tenants read their own runs through
   * the API with their JWT, which needs no IAM grant.
   *
   * @example
   * fanOut.grantReadLedger(exportFunction);
   */
  grantReadLedger(grantee: iam.IGrantable): iam.Grant {
    // The table and its one index by name: no `index/*` wildcard for cdk-nag to flag on the grantee.
    return iam.Grant.addToPrincipal({
      grantee,
      actions: [...LEDGER_READ_ACTIONS],
      resourceArns: [this.table.tableArn, `${this.table.tableArn}/index/${RUN_LIST_INDEX.indexName}`],
    });
  }

  private ledgerTable(removalPolicy: RemovalPolicy, deletionProtection: boolean): dynamodb.Table {
    const table = new dynamodb.Table(this, 'Ledger', {
      partitionKey: { name: LEDGER_TABLE.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: LEDGER_TABLE.sortKey, type: dynamodb.AttributeType.STRING },
      timeToLiveAttribute: LEDGER_TABLE.timeToLiveAttribute,
      billingMode: dynamodb.BillingMode.PAY_PER_REQUEST,
      encryption: dynamodb.TableEncryption.AWS_MANAGED,
      pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: true },
      deletionProtection,
      removalPolicy,
    });
    // GET /runs: a tenant's runs by status, newest first (docs/ledger.md, "The run list").
    table.addGlobalSecondaryIndex({
      indexName: RUN_LIST_INDEX.indexName,
      partitionKey: { name: RUN_LIST_INDEX.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: RUN_LIST_INDEX.sortKey, type: dynamodb.AttributeType.STRING },
      projectionType: dynamodb.ProjectionType.ALL,
    });
    return table;
  }

  private createFunctions(workers: ReadWorkers, logRetention: logs.RetentionDays, removalPolicy: RemovalPolicy): FanOutFunctions {
    const { settings } = this;
    const { model } = settings;
    const modelEnv: Record<string, string> =
      model.provider === 'bedrock' ? { [MODEL_ENV.provider]: 'bedrock', [MODEL_ENV.modelId]: model.modelId } : { [MODEL_ENV.provider]: 'offline' };
    /** `name` is the module under functions/; `withRegistry` joins it with the worker module. */
    const make = (
      id: string,
      name: string,
      withRegistry: boolean,
      props: Omit<TesseraFunctionProps, 'entry' | 'serviceName' | 'logRetention' | 'logRemovalPolicy'>,
    ) => {
      const entry = packageModule(`functions/${name}`);
      const registry = withRegistry ? { workers: { path: workers.path, exportName: workers.summary.exportName } } : {};
      return new TesseraFunction(this, id, {
        ...props,
        entry,
        bundleEntry: writeFunctionEntry({ project: workers.project, handlerModule: entry, ...registry }),
        project: workers.project,
        serviceName: settings.serviceName,
        logRetention,
        logRemovalPolicy: removalPolicy,
        environment: { [ENV.tableName]: this.table.tableName, ...props.environment },
      });
    };
    const maxDeadline = { [ENV.maxDeadlineSeconds]: String(settings.maxDeadlineSeconds) };
    const functions: FanOutFunctions = {
      api: make('ApiFunction', 'api', true, {
        description: 'validates, authorizes and starts runs; reads and cancels them',
        // A request of the largest size (2 MiB, 100,000 ids) is validated, planned, hashed and
        // compressed in about a second at 1 GB; 29 s is just under API Gateway's 30 s integration limit.
        timeout: Duration.seconds(29),
        memorySize: 1024,
        environment: {
          // The same model variables as the workers, so planning refuses a model they would refuse.
          ...modelEnv,
          ...maxDeadline,
          [ENV.tenantClaim]: settings.auth.tenantClaim,
          [ENV.workerKinds]: JSON.stringify(Object.keys(settings.kinds)),
          [ENV.workerCapacity]: JSON.stringify(Object.fromEntries(Object.entries(settings.kinds).map(([kind, k]) => [kind, kindCapacity(k.maxConcurrency)]))),
        },
      }),
      dispatch: make('DispatchFunction', 'dispatch', true, {
        description: 'sends a round as it was stored (round 1: appends the stored plan) and enqueues its subtasks',
        // One invocation writes and enqueues a whole round: up to MAX_SUBTASKS (10,000) subtask
        // items and 1,000 SendMessageBatch calls for the largest. Five minutes leaves room for that
        // round under throttling retries; a round of tens of subtasks takes well under a second.
        timeout: Duration.minutes(5),
        memorySize: 1024,
        environment: { ...maxDeadline, [ENV.batchSubtasks]: String(settings.batchSubtasks) },
      }),
      deadline: make('DeadlineFunction', 'deadline', false, {
        description: 'arms, awaits, hedges and seals each subtask against its absolute deadline',
        timeout: Duration.seconds(15),
      }),
      worker: make('WorkerFunction', 'worker', true, {
        description: 'claims a subtask, runs its worker kind and records the outcome',
        timeout: Duration.seconds(settings.workerTimeoutSeconds),
        memorySize: 1024,
        environment: {
          ...modelEnv,
          [ENV.leaseSeconds]: String(settings.workerTimeoutSeconds),
          [ENV.maxReceiveCount]: String(MAX_RECEIVE_COUNT),
          [ENV.tenantDailyModelCalls]: String(settings.tenantDailyAllowance.modelCalls),
          [ENV.tenantDailyCostLimit]: String(settings.tenantDailyAllowance.costLimit),
        },
      }),
      reconcile: make('ReconcileFunction', 'reconcile', true, {
        description: 'reconciles outcomes with the manifest, plans follow-ups, writes the answer',
        // It reads every subtask of the run (up to 10,000 in up to 20 write shards) and proves the tiling.
        timeout: Duration.minutes(5),
        memorySize: 1024,
        // A requested synthesis calls the deployment's model (docs/workers.md, "Synthesis").
        environment: { ...modelEnv },
      }),
    };
    // The worker and a requested synthesis (reconcile) call a model; the api reads the model variables to plan, never to invoke.
    if (model.provider === 'bedrock') this.grantModel(model.modelId, [functions.worker, functions.reconcile]);
    return functions;
  }

  /** Invoke rights on exactly one foundation model, for the functions that call it. */
  private grantModel(modelId: string, grantees: readonly TesseraFunction[]): void {
    const modelArn = Stack.of(this).formatArn({
      service: 'bedrock',
      account: '',
      resource: 'foundation-model',
      resourceName: modelId,
    });
    for (const grantee of grantees) {
      grantee.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['bedrock:InvokeModel'], resources: [modelArn] }));
    }
  }

  /**
   * Least privilege per function. Each function gets exactly the ledger actions its code sends
   * (`LEDGER_ACTIONS`, lib/ledger/access.ts), on the table and, for the api alone, the run list
   * index. The tenant-scoped functions (api, dispatch, deadline, worker) hold them not on their
   * own role but on a ledger-access role that only their role may assume, once per tenant, with
   * a session policy naming that tenant's keys (lib/runtime/ledger-credentials.ts): their own
   * credentials reach no table at all. The worker may also answer task tokens and consume its
   * queues (the event sources grant that), and nothing else: it cannot start an execution or send
   * to a subtask queue, so a worker can never fan out again.
   */
  private grantRunAccess(): Record<TenantScopedFunction, iam.Role> {
    const { api, deadline, worker, reconcile } = this.functions;
    const accessRoles = {
      api: this.ledgerAccessRole('api'),
      dispatch: this.ledgerAccessRole('dispatch'),
      deadline: this.ledgerAccessRole('deadline'),
      worker: this.ledgerAccessRole('worker'),
    };
    for (const statement of this.ledgerStatements('reconcile')) reconcile.role.addToPrincipalPolicy(statement);
    this.stateMachine.grantTaskResponse(worker);
    // A batched round's subtasks wait in the batch machine's executions: their tokens are its.
    this.batchStateMachine.grantTaskResponse(worker);

    this.stateMachine.grantStartExecution(api);
    // A cancel stops the run's execution (one StopExecution; its batches' children stop with it).
    this.stateMachine.grantExecution(api, 'states:StopExecution');
    NagSuppressions.addResourceSuppressions(
      api.role,
      [
        {
          id: 'AwsSolutions-IAM5',
          reason:
            "A cancel stops its run's execution, which is named after the run id at run time: StopExecution on the run machine's executions (execution:<run machine name>:*) only.",
          appliesTo: [{ regex: '/^Resource::arn:.*:states:.*:execution:.*RunsStateMachine.*\\*$/g' }],
        },
      ],
      true,
    );
    api.function.addEnvironment(ENV.stateMachineArn, this.stateMachine.stateMachineArn);

    // The state machine invokes the deadline function, so granting through the function's default
    // policy would make the function depend on the state machine that depends on it (a cycle).
    // A standalone policy attached to the role carries the same statement without that edge.
    new iam.Policy(this, 'DeadlineTaskResponse', {
      roles: [deadline.role],
      statements: [
        new iam.PolicyStatement({ actions: TASK_RESPONSE_ACTIONS, resources: [this.stateMachine.stateMachineArn, this.batchStateMachine.stateMachineArn] }),
      ],
    });
    return accessRoles;
  }

  /**
   * The ledger-access role of one tenant-scoped function: trusted by that function's role alone,
   * holding exactly the function's ledger actions. The function's role may assume it and holds
   * no DynamoDB action itself; the function learns the role from its environment.
   */
  private ledgerAccessRole(name: TenantScopedFunction): iam.Role {
    const fn = this.functions[name];
    const role = new iam.Role(this, `${LEDGER_ACCESS_IDS[name]}LedgerAccess`, {
      assumedBy: new iam.ArnPrincipal(fn.role.roleArn),
      description: `The ${name} function's ledger access, assumed per tenant with a session policy naming that tenant's keys`,
    });
    for (const statement of this.ledgerStatements(name)) role.addToPolicy(statement);
    fn.role.addToPrincipalPolicy(new iam.PolicyStatement({ actions: ['sts:AssumeRole'], resources: [role.roleArn] }));
    fn.function.addEnvironment(ENV.ledgerAccess, 'tenant-role');
    fn.function.addEnvironment(ENV.ledgerAccessRoleArn, role.roleArn);
    return role;
  }

  /**
   * One function's ledger statements, from `LEDGER_ACTIONS`. The api's also deny it any write
   * that sets an outcome attribute (`OUTCOME_ATTRIBUTES`), and any write that names no attribute
   * at all: `dynamodb:Attributes` is absent from such a request, so a Deny on its values alone
   * would never match it.
   */
  private ledgerStatements(name: LedgerFunction): iam.PolicyStatement[] {
    const grant: LedgerGrant = LEDGER_ACTIONS[name];
    const tableArn = this.table.tableArn;
    const statements = [new iam.PolicyStatement({ actions: [...grant.table], resources: [tableArn] })];
    if (grant.runListIndex.length > 0) {
      statements.push(new iam.PolicyStatement({ actions: [...grant.runListIndex], resources: [`${tableArn}/index/${RUN_LIST_INDEX.indexName}`] }));
    }
    if (name !== 'api') return statements;
    const writes = ['dynamodb:PutItem', 'dynamodb:UpdateItem', 'dynamodb:BatchWriteItem'];
    return [
      ...statements,
      new iam.PolicyStatement({
        sid: 'ApiNeverWritesOutcomes',
        effect: iam.Effect.DENY,
        actions: writes,
        resources: [tableArn],
        conditions: { 'ForAnyValue:StringEquals': { 'dynamodb:Attributes': [...OUTCOME_ATTRIBUTES] } },
      }),
      new iam.PolicyStatement({
        sid: 'ApiWritesNameTheirAttributes',
        effect: iam.Effect.DENY,
        actions: writes,
        resources: [tableArn],
        conditions: { Null: { 'dynamodb:Attributes': 'true' } },
      }),
    ];
  }
}

/** The worker module as synthesis uses it. */
interface ReadWorkers {
  readonly path: string;
  readonly project: WorkerProject;
  readonly summary: WorkerModuleSummary;
}

/** Reads the worker module named by `props.workers`, failing synth with one clear problem when it cannot be used. */
const readWorkers = (constructPath: string, props: TesseraFanOutProps): ReadWorkers => {
  const entry = props.workers?.entry;
  const fail = (problem: string, cause?: unknown): never => {
    throw new InvalidConstructProps(constructPath, [`workers.entry: ${problem}`], cause === undefined ? {} : { cause });
  };
  if (typeof entry !== 'string' || entry === '') return fail('is required: the path of a module exporting `registry` made with createRegistry([...])');
  const path = resolve(entry);
  if (!existsSync(path)) return fail(`worker module ${entry} does not exist (resolved to ${path})`);
  const project = projectOf(path) ?? fail(`no package.json at or above ${path}, so there is no project to bundle it in`);
  try {
    return { path, project, summary: readWorkerModule(path) };
  } catch (error) {
    if (error instanceof WorkerModuleUnreadable) return fail(error.problem, error);
    throw error;
  }
};

/** The settings of every registered kind; a `kinds` key naming no registered kind is a problem. */
const kindSettings = (constructPath: string, props: TesseraFanOutProps, registered: readonly string[]): Record<string, WorkerKindSettings> => {
  const given = props.kinds ?? {};
  const unknown = Object.keys(given).filter((kind) => !registered.includes(kind));
  if (unknown.length > 0) {
    throw new InvalidConstructProps(
      constructPath,
      unknown.map((kind) => `kinds.${kind}: names no worker kind of ${props.workers.entry} (its kinds: ${registered.join(', ') || 'none'})`),
    );
  }
  return Object.fromEntries(registered.map((kind) => [kind, { ...given[kind] }]));
};

const settingsInput = (constructPath: string, props: TesseraFanOutProps, registered: readonly string[]) => ({
  auth: {
    issuer: props.auth.issuer,
    audiences: [...props.auth.audiences],
    tenantClaim: props.auth.tenantClaim ?? FAN_OUT_DEFAULTS.tenantClaim,
  },
  corsAllowedOrigins: [...(props.corsAllowedOrigins ?? [])],
  throttle: props.throttle ?? FAN_OUT_DEFAULTS.throttle,
  kinds: kindSettings(constructPath, props, registered),
  workerTimeoutSeconds: (props.workerTimeout ?? FAN_OUT_DEFAULTS.workerTimeout).toSeconds(),
  // Not rounded: a fraction of a second is refused by the settings, with the prop's name.
  workerBatchingWindowSeconds: (props.workerBatchingWindow ?? FAN_OUT_DEFAULTS.workerBatchingWindow).toSeconds({ integral: false }),
  maxDeadlineSeconds: (props.maxDeadline ?? FAN_OUT_DEFAULTS.maxDeadline).toSeconds(),
  mapMaxConcurrency: props.mapMaxConcurrency ?? FAN_OUT_DEFAULTS.mapMaxConcurrency,
  batchConcurrency: props.batchConcurrency ?? FAN_OUT_DEFAULTS.batchConcurrency,
  batchSubtasks: props.batchSubtasks ?? FAN_OUT_DEFAULTS.batchSubtasks,
  tenantDailyAllowance: props.tenantDailyAllowance ?? FAN_OUT_DEFAULTS.tenantDailyAllowance,
  degradedRunRateThreshold: props.degradedRunRateThreshold ?? FAN_OUT_DEFAULTS.degradedRunRateThreshold,
  serviceName: props.serviceName ?? FAN_OUT_DEFAULTS.serviceName,
  model: props.model ?? { provider: 'offline' as const },
});

/** What the local cloud reads of a synthesized fan-out (lib/infra/fan-out-metadata.ts). */
const fanOutMetadata = (settings: FanOutSettings, workerModule: string): FanOutMetadata => ({
  version: 1,
  workers: workerModule,
  kinds: settings.kinds,
  workerTimeoutSeconds: settings.workerTimeoutSeconds,
  workerBatchingWindowSeconds: settings.workerBatchingWindowSeconds,
  maxDeadlineSeconds: settings.maxDeadlineSeconds,
  mapMaxConcurrency: settings.mapMaxConcurrency,
  batchConcurrency: settings.batchConcurrency,
  batchSubtasks: settings.batchSubtasks,
  tenantDailyAllowance: settings.tenantDailyAllowance,
});

/**
 * The pipeline benchmark's emulators: DynamoDB Local and fauxqs behind counting proxies, the local
 * cloud wired to them, and one measured run of 20 no-op subtasks. See bench/pipeline.bench.ts.
 */
import type { TesseraClient } from '../../lib/client';
import type { RunRequestInput } from '../../lib/contract';
import { functionHandlers } from '../../lib/infra/synthesized';
import { PACKAGE_ROOT } from '../../lib/infra/handler-metadata';
import { exampleWorkerModule } from '../../examples/app/cdk';
import { registry as faultRegistry } from '../../examples/app/fault-workers';
import { startLocalCloud, type LocalCloud } from '../../lib/local/cloud';
import { startDynamoDbLocal } from '../../lib/local/dynamodb-local';
import { startRequestCounter, type Exchange, type OperationCount, type RequestCounter } from '../request-counter';
import { startSqsLocal } from '../../lib/local/sqs-local';
import { LOCAL_AUTH } from '../../lib/local/local-auth';
import { synthesizeLocalTemplate } from '../../lib/local/local-template';

export const SUBTASKS = 20;
export const TENANT = 'bench';
/** After the execution ends: the last DeleteMessageBatch calls and poller round trips land. */
export const SETTLE_MS = 2_000;
export const PER_1000 = 1_000 / SUBTASKS;

/** The functions of the template, named after their handler module (`functions/<role>.ts`). */
export const ROLES = ['api', 'dispatch', 'deadline', 'worker', 'reconcile'] as const;
export type Role = (typeof ROLES)[number];

export const ids = Array.from({ length: SUBTASKS }, (_, index) => `item-${String(index + 1).padStart(2, '0')}`);

const runRequest = (label: string): RunRequestInput => ({
  goal: `Pipeline benchmark (${label}): ${SUBTASKS} no-op subtasks`,
  universe: { dimension: 'ids', ids },
  subtasks: ids.map((id, index) => ({
    id: `S${index + 1}`,
    worker: 'chaos',
    scope: { ids: [id] },
    input: { fault: 'none' },
    deadlineSeconds: 30,
    budget: { modelCalls: 1, estimatedCostPerCall: 0 },
  })),
  policy: { retry: { timed_out: 0, invalid: 0, empty: 0 }, maxRounds: 1 },
  budget: { modelCalls: SUBTASKS, costLimit: 1 },
});

// ---------------------------------------------------------------------------------------------
// The stack: emulators behind counters, and the local cloud wired to the counters.

export interface Stack {
  readonly cloud: LocalCloud;
  readonly template: unknown;
  readonly dynamodb: RequestCounter;
  readonly sqs: RequestCounter;
  /** DynamoDB Local itself, for reads the benchmark makes without counting them. */
  readonly dynamodbDirect: string;
  /** DynamoDB Local's JVM, for its memory. */
  readonly dynamodbPid: number;
  readonly stop: () => Promise<void>;
}

export const startStack = async (): Promise<Stack> => {
  const stops: (() => Promise<void>)[] = [];
  const stop = async () => {
    for (const step of stops.reverse()) await step();
  };
  try {
    const [ddb, sqsLocal] = await Promise.all([startDynamoDbLocal(), startSqsLocal()]);
    stops.push(
      () => ddb.stop(),
      () => sqsLocal.stop(),
    );
    // The SQS counter forwards Host unchanged, so fauxqs names the queues after the counter's port
    // (`sqs.<region>.localhost:<counter port>`), which is the origin the cloud derives from this endpoint.
    const [dynamodb, sqs] = await Promise.all([
      startRequestCounter({ target: ddb.endpoint, keepBodies: true }),
      startRequestCounter({ target: sqsLocal.endpoint }),
    ]);
    stops.push(
      () => dynamodb.stop(),
      () => sqs.stop(),
    );
    // The benchmark's no-op workers are the fault-injection kind `chaos` with fault 'none'.
    const template = synthesizeLocalTemplate(exampleWorkerModule({ faultInjection: true }));
    const cloud = await startLocalCloud({
      template,
      repoRoot: PACKAGE_ROOT,
      registry: faultRegistry,
      emulators: { dynamodbEndpoint: dynamodb.endpoint, sqsEndpoint: sqs.endpoint },
      jwt: { issuer: LOCAL_AUTH.issuer, audience: [LOCAL_AUTH.audience], tenantClaim: LOCAL_AUTH.tenantClaim },
      functionEnvironment: { POWERTOOLS_LOG_LEVEL: 'ERROR' },
    });
    stops.push(() => cloud.stop());
    return { cloud, template, dynamodb, sqs, dynamodbDirect: ddb.endpoint, dynamodbPid: ddb.pid, stop };
  } catch (error) {
    await stop();
    throw error;
  }
};

// ---------------------------------------------------------------------------------------------
// One measured run.

export interface Measurement {
  readonly runId: string;
  readonly seconds: number;
  /** State transitions of the run's execution and its batches' child executions. */
  readonly transitions: number;
  /** Of them, the child executions'. */
  readonly childTransitions: number;
  /** The child executions (one per batch). */
  readonly children: number;
  readonly invocations: Record<Role, number>;
  readonly dynamodb: readonly Exchange[];
  readonly sqs: Record<string, OperationCount>;
  /** The event logs of the run's execution and of its children, one after the other. */
  readonly events: readonly unknown[];
}

export const roleOf = (handler: string): Role => {
  const role = ROLES.find((candidate) => handler === `functions/${candidate}.ts`);
  if (!role) throw new Error(`function handler ${handler} is not one of ${ROLES.join(', ')}`);
  return role;
};

/** Lambda invocations by role since `before`, through the template's `tessera:handler` metadata. */
export const invocationsSince = (stack: Stack, before: Readonly<Record<string, { invocations: number }>>): Record<Role, number> => {
  const handlers = functionHandlers(stack.template);
  const after = stack.cloud.lambdaStats();
  const byRole = Object.fromEntries(ROLES.map((role) => [role, 0])) as Record<Role, number>;
  for (const fn of stack.cloud.resources.functions) {
    const handler = handlers[fn.logicalId];
    if (handler === undefined) continue;
    byRole[roleOf(handler)] += (after[fn.name]?.invocations ?? 0) - (before[fn.name]?.invocations ?? 0);
  }
  return byRole;
};

export const measureRun = async (stack: Stack, client: TesseraClient, label: string): Promise<Measurement> => {
  const lambdaBefore = stack.cloud.lambdaStats();
  stack.dynamodb.reset();
  stack.sqs.reset();
  const started = performance.now();
  const { runId } = await client.createRun(runRequest(label));
  const execution = stack.cloud.executions.executions().find((record) => record.name === runId);
  if (!execution) throw new Error(`run ${runId} started no execution`);
  // Waiting on the execution rather than polling GET /runs keeps the caller's reads out of the counts.
  const ended = await stack.cloud.executions.settled(execution.executionArn);
  const seconds = (performance.now() - started) / 1000;
  await new Promise((resolve) => setTimeout(resolve, SETTLE_MS));
  // Each batch of a round runs in a child execution named `<runId>-<round>-<batch>`: it is billed like the run's own.
  const children = stack.cloud.executions.executions().filter((record) => record.name.startsWith(`${runId}-`));
  const childTransitions = children.reduce((sum, child) => sum + child.transitions, 0);
  const measurement: Measurement = {
    runId,
    seconds,
    transitions: ended.transitions + childTransitions,
    childTransitions,
    children: children.length,
    invocations: invocationsSince(stack, lambdaBefore),
    dynamodb: stack.dynamodb.exchanges(),
    sqs: stack.sqs.counts(),
    events: [...ended.events, ...children.flatMap((child) => child.events)],
  };
  const run = await client.getRun(runId);
  const ok = run.subtasks.filter((subtask) => subtask.state === 'ok').length;
  if (ended.status !== 'SUCCEEDED' || run.status !== 'succeeded' || ok !== SUBTASKS) {
    throw new Error(
      `${label} run ${runId} ended ${ended.status}/${run.status} with ${ok} of ${SUBTASKS} subtasks ok; the figures would not describe a normal run`,
    );
  }
  return measurement;
};

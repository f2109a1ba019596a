/**
 * Shared setup of the handler tests. Every handler is built with `createHandler(deps)` over real
 * data planes: the ledger on this file's own DynamoDB Local table, the subtask queues on this
 * file's own fauxqs queues, the reference worker registry and the offline model. The only test
 * double is `recordingExecutions`, standing in for Step Functions (the e2e suite runs the real
 * state machine): it records which executions were started and which task tokens answered.
 */
import { CreateQueueCommand, GetQueueAttributesCommand } from '@aws-sdk/client-sqs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import { afterAll, beforeAll } from 'vitest';
import { z } from 'zod';
import { createHandler as createApiHandler } from '../../../functions/api';
import { createHandler as createDeadlineHandler } from '../../../functions/deadline';
import { createHandler as createDispatchHandler } from '../../../functions/dispatch';
import { createHandler as createReconcileHandler } from '../../../functions/reconcile';
import { createHandler as createWorkerHandler } from '../../../functions/worker';
import { createLedger, ledgerTableDefinition, type Ledger } from '../../../lib/ledger';
import type { RunExecutions } from '../../../lib/orchestration/run-execution';
import { createRedelivery } from '../../../lib/queue/redelivery';
import { createSubtaskQueue } from '../../../lib/queue/subtask-queue';
import { createLogger, createMetrics } from '../../../lib/runtime/lambda';
import { createModelProvider, parseModelConfig } from '../../../lib/workers';
import { referenceRegistry } from '../../../examples/app';
import { createTable, documentClient, dynamoClient, localRegion, sqsClient, uniqueName } from '../../support/aws';
import { tagLedger, wireRecorder, type WireRecorder } from '../../support/wire-calls';
import type { LedgerFunction } from '../../../lib/ledger/access';

// Metrics are asserted nowhere here; disabled, Powertools keeps them off stdout.
process.env.POWERTOOLS_METRICS_DISABLED = 'true';

/**
 * Where every clock starts. In 2040 on purpose: DynamoDB Local's TTL sweeper deletes by the wall
 * clock, so idempotency records stamped by a clock in the past could vanish mid-test.
 */
export const T0 = '2040-06-01T12:00:00.000Z';

/** `T0` plus `ms`, as the ISO instant the ledger writes. */
export const at = (ms: number): string => new Date(Date.parse(T0) + ms).toISOString();

/** A clock the test moves by hand, shared by the ledger and the handlers, so deadlines pass without sleeping. */
export interface ManualClock {
  readonly now: () => number;
  /** Moves the clock to `T0 + ms`. */
  readonly moveTo: (ms: number) => void;
}

const manualClock = (): ManualClock => {
  let offset = 0;
  return {
    now: () => Date.parse(T0) + offset,
    moveTo: (ms) => {
      offset = ms;
    },
  };
};

/** What the Step Functions double saw. */
export interface ExecutionCalls {
  readonly start: { runId: string; tenantId: string }[];
  readonly release: { taskToken: string; output: Record<string, unknown> }[];
  readonly fail: { taskToken: string; error: string; cause: string }[];
  /** Runs whose execution was stopped (a cancel), in order. */
  readonly stop: string[];
}

/**
 * The one test double: a `RunExecutions` that records its calls and always reaches its waiter.
 *
 * @example
 * const { executions, calls } = recordingExecutions();
 * await createHandler({ ...deps, executions })(event);
 * calls.start; // [{ runId, tenantId }]
 */
export const recordingExecutions = (): { executions: RunExecutions; calls: ExecutionCalls } => {
  const calls: ExecutionCalls = { start: [], release: [], fail: [], stop: [] };
  const executions: RunExecutions = {
    start: async (run) => {
      const alreadyStarted = calls.start.some((earlier) => earlier.runId === run.runId);
      calls.start.push({ runId: run.runId, tenantId: run.tenantId });
      return { alreadyStarted };
    },
    release: async (taskToken, output) => {
      calls.release.push({ taskToken, output });
      return { delivered: true };
    },
    fail: async (taskToken, error, cause) => {
      calls.fail.push({ taskToken, error, cause });
      return { delivered: true };
    },
    stop: async (runId) => {
      calls.stop.push(runId);
      return { stopped: true };
    },
  };
  return { executions, calls };
};

const quietLogger = (component: string) => createLogger(component, { POWERTOOLS_LOG_LEVEL: 'ERROR' });

/** The worker kinds this file deploys a queue for, as the construct does (one queue per kind). */
const KINDS = ['tax-statements', 'transaction-feed'] as const;
export type Kind = (typeof KINDS)[number];

interface KindQueue {
  readonly url: string;
  readonly arn: string;
}

const createKindQueue = async (prefix: string, kind: Kind): Promise<KindQueue> => {
  const client = sqsClient();
  const url = (await client.send(new CreateQueueCommand({ QueueName: uniqueName(`${prefix}-${kind}`) }))).QueueUrl;
  if (url === undefined) throw new Error(`fauxqs returned no URL for the ${kind} queue`);
  const attributes = await client.send(new GetQueueAttributesCommand({ QueueUrl: url, AttributeNames: ['QueueArn'] }));
  return { url, arn: attributes.Attributes?.QueueArn ?? `arn:aws:sqs:${localRegion}:000000000000:${kind}` };
};

/** The five handlers of one file, wired to one table, one set of queues and one clock. */
export interface Pipeline {
  readonly clock: ManualClock;
  readonly calls: ExecutionCalls;
  readonly ledger: Ledger;
  readonly tableName: string;
  readonly queues: Readonly<Record<Kind, KindQueue>>;
  readonly api: ReturnType<typeof createApiHandler>;
  readonly dispatch: ReturnType<typeof createDispatchHandler>;
  readonly deadline: ReturnType<typeof createDeadlineHandler>;
  readonly worker: ReturnType<typeof createWorkerHandler>;
  readonly reconcile: ReturnType<typeof createReconcileHandler>;
  /** Run ids the API was handed by `newRunId`, in order. */
  readonly issuedRunIds: string[];
  /** The api handler's logger (quiet by default), for tests of what it logs. */
  readonly apiLogger: ReturnType<typeof quietLogger>;
}

/** How the pipeline's deployment is set: subtasks per batch (`BATCH_SUBTASKS`), 500 by default as the construct's. */
export interface PipelineOptions {
  readonly batchSubtasks?: number;
}

const build = async (prefix: string, options: PipelineOptions, recorder: WireRecorder): Promise<Pipeline> => {
  const tableName = uniqueName(prefix);
  await createTable(dynamoClient(), ledgerTableDefinition(tableName));
  const [tax, feed] = await Promise.all(KINDS.map((kind) => createKindQueue(prefix, kind)));
  if (!tax || !feed) throw new Error('both queues are created');
  const queues = { 'tax-statements': tax, 'transaction-feed': feed };
  // Dispatch enqueues rounds on these, the deadline function a hedged subtask's copies.
  const kindQueues = createSubtaskQueue({ client: sqsClient(), queueUrls: { 'tax-statements': tax.url, 'transaction-feed': feed.url } });
  const clock = manualClock();
  const ledger = createLedger({ client: documentClient(), tableName, now: clock.now });
  // Each handler has a ledger of its own, on a client whose calls are recorded under its name
  // (test/iam compares them with each function's grant); `ledger` is the tests' own, unrecorded.
  const ledgerOf = (fn: LedgerFunction) => tagLedger(createLedger({ client: recorder.attach(documentClient(), fn), tableName, now: clock.now }));
  const { executions, calls } = recordingExecutions();
  const catalog = referenceRegistry.catalog();
  const issuedRunIds: string[] = [];
  const apiLogger = quietLogger('api');
  return {
    apiLogger,
    clock,
    calls,
    ledger,
    tableName,
    queues,
    issuedRunIds,
    api: createApiHandler({
      ledger: ledgerOf('api'),
      executions,
      catalog,
      maxDeadlineSeconds: 900,
      tenantClaim: 'custom:tenant',
      newRunId: () => {
        const runId = uniqueName('run');
        issuedRunIds.push(runId);
        return runId;
      },
      logger: apiLogger,
    }),
    dispatch: createDispatchHandler({
      ledger: ledgerOf('dispatch'),
      queue: kindQueues,
      batchSubtasks: options.batchSubtasks ?? 500,
      now: clock.now,
      logger: quietLogger('dispatch'),
    }),
    deadline: createDeadlineHandler({ ledger: ledgerOf('deadline'), executions, queue: kindQueues, now: clock.now, logger: quietLogger('deadline') }),
    worker: createWorkerHandler({
      now: clock.now,
      ledger: ledgerOf('worker'),
      redelivery: createRedelivery({ client: sqsClient() }),
      executions,
      registry: referenceRegistry,
      models: createModelProvider({ config: parseModelConfig({}) }),
      leaseMs: 60_000,
      maxReceiveCount: 3,
      logger: quietLogger('worker'),
      metrics: createMetrics({}),
    }),
    reconcile: createReconcileHandler({
      ledger: ledgerOf('reconcile'),
      now: clock.now,
      registry: referenceRegistry,
      sources: referenceRegistry.sources(),
      logger: quietLogger('reconcile'),
      metrics: createMetrics({}),
    }),
  };
};

/**
 * This file's pipeline, built once in `beforeAll` on its own table and queues.
 *
 * @example
 * const p = pipeline('fn-worker');
 * it('…', async () => { await p.get().api(apiEvent({ … })); });
 */
export const pipeline = (prefix: string, options: PipelineOptions = {}): { get(): Pipeline } => {
  let built: Pipeline | undefined;
  const recorder = wireRecorder();
  beforeAll(async () => {
    built = await build(prefix, options, recorder);
  });
  afterAll(() => recorder.flush(prefix));
  return {
    get: () => {
      if (built === undefined) throw new Error('the pipeline is built in beforeAll');
      return built;
    },
  };
};

// ---------------------------------------------------------------- Step Functions task outputs

const Item = z.object({ runId: z.string(), tenantId: z.string(), subtaskId: z.string(), deadline: z.string() });
const Batch = z.object({ round: z.int(), batch: z.int() });
const DispatchOutput = z.object({ runId: z.string(), tenantId: z.string(), round: z.int(), batches: z.array(Batch) });
const LoadedBatch = z.object({ items: z.array(Item) });
/** Dispatch's output, and the items its batches' LoadBatch steps answered, in batch order. */
export type DispatchOutput = z.infer<typeof DispatchOutput> & { readonly items: z.infer<typeof Item>[] };

/**
 * Runs the Dispatch task as the state machine would, then each batch's LoadBatch (the first state
 * of its child execution), and answers the items the children's Maps iterate over.
 */
export const dispatchRound = async (p: Pipeline, tenantId: string, runId: string, round = 1): Promise<DispatchOutput> => {
  const output = DispatchOutput.parse(await p.dispatch({ runId, tenantId, round }));
  const loaded = await Promise.all(output.batches.map((b) => p.deadline({ action: 'batch', runId, tenantId, round: b.round, batch: b.batch })));
  return { ...output, items: loaded.flatMap((batch) => LoadedBatch.parse(batch).items) };
};

// ---------------------------------------------------------------- the table itself

/**
 * Every item whose key belongs to a tenant, read straight from the table. Used only to prove that
 * nothing at all was written, which no ledger read can show.
 */
export const itemsOfTenant = async (p: Pipeline, tenantId: string): Promise<Record<string, unknown>[]> => {
  const output = await documentClient().send(
    new ScanCommand({
      TableName: p.tableName,
      FilterExpression: 'begins_with(pk, :prefix)',
      ExpressionAttributeValues: { ':prefix': `T#${encodeURIComponent(tenantId)}#` },
      ConsistentRead: true,
    }),
  );
  return output.Items ?? [];
};

import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import { AlreadySealed, AlreadyTerminal, ClaimHeld, DeadlinePassed, LeaseLost, RunCancelled, RunEnded, type Claim, type Ledger } from '../lib/ledger';
import { METRICS } from '../lib/observability/metrics';
import type { RunExecutions } from '../lib/orchestration/run-execution';
import { SubtaskMessage } from '../lib/queue/message';
import { backoffSeconds, type Redelivery } from '../lib/queue/redelivery';
import { executionsFor, ledgerFor, redeliveryFor } from '../lib/runtime/aws';
import { intVariable, parseConfig } from '../lib/runtime/config';
import { createLogger, createMetrics, onColdStart, publishMetrics } from '../lib/runtime/lambda';
import { createModelProvider, parseModelConfig, runSubtask, type ModelProvider, type WorkerRegistry } from '../lib/workers';

const Config = z.object({
  TABLE_NAME: z.string().min(1),
  LEASE_SECONDS: intVariable(),
  MAX_RECEIVE_COUNT: intVariable(3),
  TENANT_DAILY_MODEL_CALLS: intVariable(),
  TENANT_DAILY_COST_LIMIT: intVariable(),
});

export interface WorkerDeps {
  readonly now: () => number;
  readonly ledger: Ledger;
  readonly redelivery: Redelivery;
  readonly executions: RunExecutions;
  readonly registry: WorkerRegistry;
  readonly models: ModelProvider;
  readonly leaseMs: number;
  readonly maxReceiveCount: number;
  readonly logger: ReturnType<typeof createLogger>;
  readonly metrics: Metrics;
}

/** What the function needs, from its environment and the deployment's worker registry. */
export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>, registry: WorkerRegistry): WorkerDeps => {
  const config = parseConfig(Config, env);
  return {
    now: Date.now,
    ledger: ledgerFor(config.TABLE_NAME, { modelCalls: config.TENANT_DAILY_MODEL_CALLS, costLimit: config.TENANT_DAILY_COST_LIMIT }),
    executions: executionsFor(),
    redelivery: redeliveryFor(),
    registry: registry,
    models: createModelProvider({ config: parseModelConfig(env) }),
    leaseMs: config.LEASE_SECONDS * 1000,
    maxReceiveCount: config.MAX_RECEIVE_COUNT,
    logger: createLogger('worker', env),
    metrics: createMetrics(env),
  };
};

/**
 * How long a worker that ignored its deadline may still hand in a result. The ledger refuses it
 * (the subtask is sealed at the deadline) and keeps it as late evidence; the worker's timeout
 * (LEASE_SECONDS, 2 min by default) leaves room for it.
 */
const LATE_GRACE_MS = 5_000;

/**
 * Another delivery already owns the subtask, it already ended, or its deadline passed before
 * this delivery (a backlog under the kind's concurrency cap): nothing to do, and nothing to
 * retry, so the message is acknowledged; the state machine seals the subtask at its deadline.
 */
const NOTHING_TO_DO = [ClaimHeld, AlreadyTerminal, RunCancelled, RunEnded, DeadlinePassed];
/** The result was refused but kept by the ledger as late evidence; the sealed state stands. */
const KEPT_LATE = [AlreadySealed, DeadlinePassed, RunCancelled, RunEnded];
const isOneOf = (error: unknown, classes: readonly (abstract new (...args: never[]) => Error)[]) => classes.some((c) => error instanceof c);

/**
 * For steps that only make recovery faster (releasing a claim early, redelivering sooner): if one
 * fails, the lease expiry and the visibility timeout still recover, so it is logged, not thrown.
 */
const bestEffort = (logger: WorkerDeps['logger'], step: string) => (error: unknown) =>
  logger.warn(`${step} failed; recovery falls back to the lease and the visibility timeout`, { errorName: (error as Error).name });

const parseBody = (body: string): SubtaskMessage | undefined => {
  try {
    const parsed = SubtaskMessage.safeParse(JSON.parse(body));
    return parsed.success ? parsed.data : undefined;
  } catch {
    return undefined;
  }
};

/** claim → run the worker kind → record the outcome → let the waiting Map iteration go on. */
const work = async (deps: WorkerDeps, claim: Claim): Promise<void> => {
  const outcome = await runSubtask({
    subtask: claim.subtask,
    registry: deps.registry,
    models: deps.models,
    budget: { reserve: () => deps.ledger.reserveBudget(claim) },
    lateGraceMs: LATE_GRACE_MS,
    now: deps.now,
  });
  if (outcome.state === 'timed_out') {
    // The worker stopped at its deadline: the state machine seals the subtask at that same
    // instant, and a timed-out report would only repeat it as "late evidence".
    deps.logger.info('worker stopped at its deadline', { deadline: claim.deadline });
    return;
  }
  try {
    const { taskToken } = await deps.ledger.recordOutcome(claim, outcome);
    deps.logger.info('outcome recorded', { state: outcome.state });
    if (taskToken) await deps.executions.release(taskToken, { subtaskId: claim.subtaskId, state: outcome.state });
  } catch (error) {
    if (!isOneOf(error, KEPT_LATE)) throw error;
    deps.logger.warn('result arrived after the subtask ended; kept as late evidence', { refusedBy: (error as Error).name });
    deps.metrics.addMetric(METRICS.lateResults, MetricUnit.Count, 1);
  }
};

/** One message. Returns false when it must be delivered again (and, after the last try, dead-lettered). */
const processRecord = async (deps: WorkerDeps, record: SQSRecord, requestId: string): Promise<boolean> => {
  const message = parseBody(record.body);
  if (!message) {
    // No retry can fix a body that does not parse: let it reach the dead-letter queue quickly.
    deps.logger.error('unreadable subtask message', { messageId: record.messageId });
    await deps.redelivery.retryIn(record.eventSourceARN, record.receiptHandle, 1).catch(bestEffort(deps.logger, 'early redelivery'));
    return false;
  }
  const ref = { tenantId: message.tenantId, runId: message.runId, subtaskId: message.subtaskId };
  const log = deps.logger.createChild({ persistentKeys: ref });
  let claim: Claim;
  try {
    claim = await deps.ledger.claimSubtask({ ...ref, workerId: requestId, leaseMs: deps.leaseMs });
  } catch (error) {
    if (isOneOf(error, NOTHING_TO_DO)) return true;
    throw error;
  }
  try {
    await work({ ...deps, logger: log }, claim);
    return true;
  } catch (error) {
    // Replaced by a newer generation, or the run ended while the worker ran: not a delivery failure.
    if (error instanceof LeaseLost || isOneOf(error, NOTHING_TO_DO)) return true;
    const receiveCount = Number(record.attributes.ApproximateReceiveCount);
    const deadLettered = receiveCount >= deps.maxReceiveCount;
    log.error('delivery failed', { errorName: (error as Error).name, receiveCount, deadLettered });
    await deps.ledger.recordDeliveryFailure({ ...ref, receiveCount, errorName: (error as Error).name, deadLettered });
    await deps.ledger.releaseClaim(claim).catch(bestEffort(log, 'releasing the claim'));
    // Deliver again after a short backoff, not after the queue's long visibility timeout; after
    // the last try, the next receive moves the message to the dead-letter queue just as soon.
    await deps.redelivery.retryIn(record.eventSourceARN, record.receiptHandle, backoffSeconds(receiveCount)).catch(bestEffort(log, 'early redelivery'));
    return false;
  }
};

/**
 * Worker: handles each message on its own and reports only the failed ones
 * (`ReportBatchItemFailures`), so one bad message never fails its siblings.
 */
export const createHandler = (deps: WorkerDeps) => async (event: SQSEvent, context?: unknown): Promise<SQSBatchResponse> => {
  const requestId = (context as { awsRequestId?: string } | undefined)?.awsRequestId ?? 'local';
  const results = await Promise.all(
    event.Records.map((record) =>
      processRecord(deps, record, requestId).catch((error: unknown) => {
        deps.logger.error('message failed', { messageId: record.messageId, errorName: (error as Error).name });
        return false;
      }),
    ),
  );
  publishMetrics(deps.metrics);
  return { batchItemFailures: event.Records.filter((_, i) => !results[i]).map((r) => ({ itemIdentifier: r.messageId })) };
};

/**
 * The Lambda handler over a worker registry. The construct bundles a one-line entry per function
 * that imports the deployment's worker module and exports `handlerFor(registry)` as `handler`.
 *
 * @example
 * export const handler = handlerFor(registry);
 */
export const handlerFor = (registry: WorkerRegistry) => onColdStart(() => createHandler(depsFromEnv(process.env, registry)));

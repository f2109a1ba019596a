import type { SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { MetricUnit } from '@aws-lambda-powertools/metrics';
import { AlreadySealed, AlreadyTerminal, ClaimHeld, DeadlinePassed, HandedOver, HedgeLost, LeaseLost, RunCancelled, RunEnded, type Claim } from '../ledger';
import { METRICS } from '../observability/metrics';
import { SubtaskMessage } from '../queue/message';
import { backoffSeconds } from '../queue/redelivery';
import { publishMetrics } from '../runtime/lambda';
import { actingFor } from '../runtime/tenant-scope';
import { runSubtask, SubtaskHandedOver } from '../workers';
import { processPartialBatch, type RecordResult } from './batch';
import type { WorkerDeps } from './deps';

/**
 * How long a worker that ignored its deadline may still hand in a result. The ledger refuses it
 * (the subtask is sealed at the deadline) and keeps it as late evidence; the worker's timeout
 * (the claim lease, 2 min by default) leaves room for it.
 */
export const LATE_GRACE_MS = 5_000;

type ErrorClass = abstract new (...args: never[]) => Error;
const isOneOf = (error: unknown, classes: readonly ErrorClass[]) => classes.some((c) => error instanceof c);

/**
 * Another delivery already owns the subtask, it already ended, or its deadline passed before
 * this delivery (a backlog under the kind's concurrency cap), or it handed over to its hedge
 * pieces (a redelivered original): nothing to do, and nothing to
 * retry, so the message is acknowledged; the state machine seals the subtask at its deadline.
 */
export const NOTHING_TO_DO: readonly ErrorClass[] = [ClaimHeld, AlreadyTerminal, RunCancelled, RunEnded, DeadlinePassed, HandedOver];
/** The result was refused but kept by the ledger as late evidence; the sealed state stands. */
export const KEPT_LATE: readonly ErrorClass[] = [AlreadySealed, DeadlinePassed, RunCancelled, RunEnded];
/**
 * While the worker ran, a newer generation replaced it, the run ended, its hedged race was
 * won by another copy (its spend stays charged), or it handed over to its hedge pieces (the
 * ledger said so at a write, or the SDK stopped it): not a delivery failure.
 */
const ENDED_WHILE_WORKING: readonly ErrorClass[] = [LeaseLost, HedgeLost, SubtaskHandedOver, ...NOTHING_TO_DO];

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

/** The refusals that say the whole run is over, for good. */
const RUN_OVER: readonly ErrorClass[] = [RunCancelled, RunEnded];

/** How many ended runs one worker instance remembers (see {@link endedRuns}). */
const ENDED_RUNS_REMEMBERED = 1_000;

/**
 * The runs this worker instance saw end: a claim or a reservation refused with RunCancelled or
 * RunEnded. A run never reopens, so every later message of such a run is acknowledged with no
 * ledger call at all. A cancelled run of 10,000 queued subtasks then costs each instance one
 * refused claim, not one per message. Bounded, the oldest forgotten first; a forgotten run costs
 * one more refused claim.
 */
const endedRuns = (limit = ENDED_RUNS_REMEMBERED) => {
  const seen = new Set<string>();
  const key = (ref: { tenantId: string; runId: string }) => `${ref.tenantId}\u0000${ref.runId}`;
  return {
    has: (ref: { tenantId: string; runId: string }): boolean => seen.has(key(ref)),
    add: (ref: { tenantId: string; runId: string }): void => {
      seen.delete(key(ref));
      seen.add(key(ref));
      if (seen.size > limit) seen.delete(seen.values().next().value as string);
    },
  };
};
type EndedRuns = ReturnType<typeof endedRuns>;

/** Claims the subtask; `undefined` when there is nothing to do. A refusal because the run ended is remembered. */
const claimOrSkip = (deps: WorkerDeps, ended: EndedRuns, ...args: Parameters<WorkerDeps['ledger']['claimSubtask']>): Promise<Claim | undefined> =>
  deps.ledger.claimSubtask(...args).catch((error: unknown) => {
    if (isOneOf(error, RUN_OVER)) ended.add(args[0]);
    if (isOneOf(error, NOTHING_TO_DO)) return undefined;
    throw error;
  });

/** Records the outcome and lets the waiting Map iteration go on; a refused late result is only counted. */
const recordOutcome = async (deps: WorkerDeps, claim: Claim, outcome: Parameters<WorkerDeps['ledger']['recordOutcome']>[1]): Promise<void> => {
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

/** claim → run the worker kind → record the outcome → let the waiting Map iteration go on. */
const work = async (deps: WorkerDeps, claim: Claim): Promise<void> => {
  const outcome = await runSubtask({
    subtask: claim.subtask,
    registry: deps.registry,
    models: deps.models,
    budget: { reserve: () => deps.ledger.reserveBudget(claim) },
    lateGraceMs: LATE_GRACE_MS,
    now: deps.now,
    // What the tools observed so far is stored as the run goes (the outcome of a timeout carries the last one).
    checkpoints: {
      port: { write: (checkpoint) => deps.ledger.writeCheckpoint(claim, checkpoint) },
      generation: claim.generation,
      previous: claim.checkpoint,
      // A subdivide-hedged subtask: flush its findings and hold model calls across the hedge's cut.
      handoverAtMs: claim.handoverDueAt === undefined ? undefined : Date.parse(claim.handoverDueAt),
    },
  });
  if (outcome.state === 'timed_out') {
    // The worker stopped at its deadline: the state machine seals the subtask at that same
    // instant, and a timed-out report would only repeat it as "late evidence".
    deps.logger.info('worker stopped at its deadline', { deadline: claim.deadline });
    return;
  }
  await recordOutcome(deps, claim, outcome);
};

/** A delivery that failed: recorded (dead-lettered after the last try), then redelivered after a short backoff. */
const failDelivery = async (deps: WorkerDeps, record: SQSRecord, claim: Claim, error: unknown): Promise<RecordResult> => {
  const ref = { tenantId: claim.tenantId, runId: claim.runId, subtaskId: claim.subtaskId };
  const receiveCount = Number(record.attributes.ApproximateReceiveCount);
  const deadLettered = receiveCount >= deps.maxReceiveCount;
  const errorName = (error as Error).name;
  deps.logger.error('delivery failed', { errorName, receiveCount, deadLettered });
  await deps.ledger.recordDeliveryFailure({ ...ref, receiveCount, errorName, deadLettered });
  await deps.ledger.releaseClaim(claim).catch(bestEffort(deps.logger, 'releasing the claim'));
  // Deliver again after a short backoff, not after the queue's long visibility timeout; after
  // the last try, the next receive moves the message to the dead-letter queue just as soon.
  await deps.redelivery.retryIn(record.eventSourceARN, record.receiptHandle, backoffSeconds(receiveCount)).catch(bestEffort(deps.logger, 'early redelivery'));
  return 'retry';
};

/**
 * Run one delivery: a subtask message → claim → the worker kind → the outcome. `retry` when the
 * message must be delivered again (and, after the last try, dead-lettered).
 */
const runDelivery = async (deps: WorkerDeps, ended: EndedRuns, record: SQSRecord, workerId: string): Promise<RecordResult> => {
  const message = parseBody(record.body);
  if (!message) {
    // No retry can fix a body that does not parse: let it reach the dead-letter queue quickly.
    deps.logger.error('unreadable subtask message', { messageId: record.messageId });
    await deps.redelivery.retryIn(record.eventSourceARN, record.receiptHandle, 1).catch(bestEffort(deps.logger, 'early redelivery'));
    return 'retry';
  }
  if (ended.has(message)) {
    deps.logger.debug('run already ended; message acknowledged', { runId: message.runId, subtaskId: message.subtaskId });
    return 'done';
  }
  // Every ledger call for this delivery acts for the subtask's tenant (lib/runtime/tenant-scope.ts).
  return actingFor(message.tenantId, () => claimAndWork(deps, ended, record, message, workerId));
};

/** The delivery of a readable message: claim, work, and on failure record it and redeliver. */
const claimAndWork = async (deps: WorkerDeps, ended: EndedRuns, record: SQSRecord, message: SubtaskMessage, workerId: string): Promise<RecordResult> => {
  const ref = { tenantId: message.tenantId, runId: message.runId, subtaskId: message.subtaskId };
  const log = deps.logger.createChild({ persistentKeys: ref });
  const claim = await claimOrSkip(deps, ended, { ...ref, workerId, leaseMs: deps.leaseMs });
  if (!claim) return 'done';
  return work({ ...deps, logger: log }, claim).then(
    (): RecordResult => 'done',
    (error: unknown) => {
      // A cancelled run still lets a subtask be claimed; its first reservation is what refuses it.
      if (isOneOf(error, RUN_OVER)) ended.add(ref);
      return isOneOf(error, ENDED_WHILE_WORKING) ? 'done' : failDelivery({ ...deps, logger: log }, record, claim, error);
    },
  );
};

/**
 * Run the deliveries of one SQS batch, each on its own, and report only the ones to deliver
 * again (`ReportBatchItemFailures`), so one bad message never fails its siblings. A batch whose
 * every delivery is to be retried throws `FullBatchFailure` (see `processPartialBatch`).
 *
 * @example
 * const { batchItemFailures } = await runDeliveries(deps)(event, 'request-1');
 */
export const runDeliveries = (deps: WorkerDeps) => {
  const ended = endedRuns();
  return async (event: SQSEvent, workerId: string): Promise<SQSBatchResponse> => {
    try {
      return await processPartialBatch(
        event.Records,
        (record) => runDelivery(deps, ended, record, workerId),
        (record, error) => deps.logger.error('message failed', { messageId: record.messageId, errorName: (error as Error).name }),
      );
    } finally {
      // Also when the whole batch failed (FullBatchFailure): its subtasks' metrics still count.
      publishMetrics(deps.metrics);
    }
  };
};

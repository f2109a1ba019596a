import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import type { Answer, Coverage, SourceLabel } from '../lib/contract';
import { buildCoverage, currentRound, decideStatus, planNextRound, reconcile, synthesisInputs, type Reconciliation } from '../lib/domain';
import type { Ledger } from '../lib/ledger';
import { METRIC_DIMENSIONS, METRICS } from '../lib/observability/metrics';
import { CLOSED_RUN_ERROR_CODES, ExecutionStatusChange, RunExecutionInput, type UnfinishedExecutionStatus } from '../lib/orchestration/execution-events';
import { ledgerFor } from '../lib/runtime/aws';
import { jsonVariable, parseConfig, parseInput } from '../lib/runtime/config';
import { createLogger, createMetrics, onColdStart, publishMetrics } from '../lib/runtime/lambda';
import type { WorkerRegistry } from '../lib/workers';

const Config = z.object({ TABLE_NAME: z.string().min(1) });

const run = { runId: z.string().min(1), tenantId: z.string().min(1) };
const ReconcileTask = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('reconcile'), ...run, round: z.int().min(1) }),
  /** A Task failed for good (its Catch led here): end the run failed, with whatever coverage it has. */
  z.object({ mode: z.literal('abort'), ...run, error: z.object({ Error: z.string().optional(), Cause: z.string().optional() }).loose().optional() }),
]);
/**
 * What the handler is given: a task of the state machine, or (from the EventBridge rule) the
 * status change of an execution that ended FAILED, TIMED_OUT or ABORTED.
 */
const ReconcileEvent = z.union([ReconcileTask, ExecutionStatusChange]);
/** An abort that closes the run of an execution that already ended, with its own reason. */
type ReconcileTask = z.infer<typeof ReconcileTask> & {
  readonly closes?: { readonly executionStatus: UnfinishedExecutionStatus; readonly what: string; readonly error: { code: string; message: string } };
};

const ENDED: Readonly<Record<UnfinishedExecutionStatus, (error: string | null | undefined) => string>> = {
  FAILED: (error) => `failed (${error || 'no error named'})`,
  TIMED_OUT: () => 'timed out',
  ABORTED: () => 'was aborted',
};

/**
 * The run of an execution that ended unfinished (Finalize failed, the execution was aborted or
 * timed out, or failed past every Catch) is closed as Finalize would have closed it, with a
 * reason naming what happened. The run is named by the execution's input.
 */
const toTask = (event: z.infer<typeof ReconcileEvent>): ReconcileTask => {
  if (!('detail' in event)) return event;
  const { detail } = event;
  const run = parseInput('Reconcile', z.object({ input: jsonVariable(RunExecutionInput) }), { input: detail.input }).input;
  const ended = ENDED[detail.status](detail.error);
  const what = `its execution ${ended}`;
  const message = `the run's execution ${ended} before the run was recorded; the run was closed when the execution ended`;
  return {
    mode: 'abort',
    runId: run.runId,
    tenantId: run.tenantId,
    closes: { executionStatus: detail.status, what, error: { code: CLOSED_RUN_ERROR_CODES[detail.status], message } },
  };
};

export interface ReconcileDeps {
  readonly ledger: Ledger;
  readonly registry: WorkerRegistry;
  readonly sources: Record<string, SourceLabel>;
  readonly logger: ReturnType<typeof createLogger>;
  readonly metrics: Metrics;
}

/** What the function needs, from its environment and the deployment's worker registry. */
export const depsFromEnv = (env: Readonly<Record<string, string | undefined>>, registry: WorkerRegistry): ReconcileDeps => {
  const config = parseConfig(Config, env);
  return {
    ledger: ledgerFor(config.TABLE_NAME),
    registry: registry,
    sources: registry.sources(),
    logger: createLogger('reconcile', env),
    metrics: createMetrics(env),
  };
};

/** Run-level metrics: they join what was dispatched with what came back, which no component metric can. */
const emitMetrics = (metrics: Metrics, status: string, coverage: Coverage, states: readonly string[]) => {
  const count = (name: string, dimension?: [string, string]) => {
    const single = metrics.singleMetric();
    if (dimension) single.addDimension(...dimension);
    single.addMetric(name, MetricUnit.Count, 1);
  };
  count(METRICS.runsFinished, [METRIC_DIMENSIONS.status, status]);
  if (!coverage.complete) count(METRICS.runsDegraded);
  for (const reason of new Set(coverage.degradedReason.map((r) => r.slice(r.lastIndexOf(':') + 1)))) count(METRICS.degradedByReason, [METRIC_DIMENSIONS.reason, reason]);
  for (const state of states) count(METRICS.subtasksByState, [METRIC_DIMENSIONS.state, state]);
  const rechecked = coverage.gaps.filter((g) => g.recheckedAgainst !== undefined).length;
  if (rechecked > 0) metrics.singleMetric().addMetric(METRICS.gapsRechecked, MetricUnit.Count, rechecked);
};

/**
 * The answer: synthesis reads only `ok` outcomes (and re-checks that found data); a failed run
 * keeps its coverage but gives no result, because its policy says the parts cannot be trusted whole.
 */
const composeAnswer = (registry: WorkerRegistry, status: string, task: ReconcileTask, coverage: Coverage, reconciliation: Reconciliation): Answer => {
  if (status === 'failed') {
    const why = task.closes?.what ?? (task.mode === 'abort' ? 'a step could not be completed' : 'required coverage is missing');
    return { text: `The run failed: ${why}. ${coverage.statement}`, result: {}, coverage };
  }
  const merged = registry.merge(synthesisInputs(reconciliation).map((i) => ({ worker: i.subtask.worker, findings: i.outcome.findings })));
  return { text: [merged.text, coverage.statement].filter(Boolean).join(' '), result: merged.result, coverage };
};

/**
 * Reconcile: compare outcomes with the manifest; send the gaps and retries back out as the next
 * round while rounds remain; otherwise write the answer, whose coverage is computed only from
 * the manifest and the outcomes, and whose result is synthesized only from `ok` outcomes.
 */
export const createHandler = (deps: ReconcileDeps) => async (event: unknown) => {
  const task = toTask(parseInput('Reconcile', ReconcileEvent, event));
  // Keys of an earlier invocation on this warm instance must not leak into this one's lines.
  deps.logger.resetKeys();
  deps.logger.appendKeys({ runId: task.runId, tenantId: task.tenantId, mode: task.mode });
  const read = await deps.ledger.readManifest(task.tenantId, task.runId);
  const manifest = { ...read.manifest, sources: deps.sources };
  const round = currentRound(manifest);
  // An execution's end can only close a run nothing else closed: a run that ended (or was
  // cancelled and already answered) stays exactly as it is, so a repeated event changes nothing.
  if (task.closes && !(read.run.status === 'running' || (read.run.status === 'cancelled' && read.run.answer === undefined))) {
    deps.logger.info('execution ended after its run was closed', { status: read.run.status, executionStatus: task.closes.executionStatus });
    return { next: 'finish' as const, runId: task.runId, tenantId: task.tenantId, round, status: read.run.status };
  }
  if (task.mode === 'reconcile' && read.run.status === 'running' && planNextRound(manifest, read.outcomes).length > 0) {
    return { next: 'dispatch' as const, runId: task.runId, tenantId: task.tenantId, round: round + 1 };
  }

  const reconciliation = reconcile(manifest, read.outcomes);
  const coverage = buildCoverage(manifest, read.outcomes, reconciliation);
  const decision = decideStatus(manifest, coverage, reconciliation);
  const status = read.run.status === 'cancelled' ? 'cancelled' : task.mode === 'abort' ? 'failed' : decision.status;
  const answer = composeAnswer(deps.registry, status, task, coverage, reconciliation);
  const error =
    task.closes?.error ??
    (task.mode === 'abort'
      ? { code: task.error?.Error ?? 'RunAborted', message: 'a step of the run failed after its retries; see the execution history' }
      : decision.status === 'failed' && status === 'failed'
        ? { code: decision.error.name, message: decision.error.message }
        : undefined);
  await deps.ledger.finishRun({ tenantId: task.tenantId, runId: task.runId, status, answer, ...(error ? { error } : {}) });
  deps.logger.info('run finished', { status, complete: coverage.complete, round });
  emitMetrics(deps.metrics, status, coverage, read.outcomes.map((o) => o.state));
  if (task.closes) {
    const closed = deps.metrics.singleMetric();
    closed.addDimension(METRIC_DIMENSIONS.executionStatus, task.closes.executionStatus);
    closed.addMetric(METRICS.runsClosedOnExecutionEnd, MetricUnit.Count, 1);
  }
  publishMetrics(deps.metrics);
  return { next: 'finish' as const, runId: task.runId, tenantId: task.tenantId, round, status };
};

/**
 * The Lambda handler over a worker registry. The construct bundles a one-line entry per function
 * that imports the deployment's worker module and exports `handlerFor(registry)` as `handler`.
 *
 * @example
 * export const handler = handlerFor(registry);
 */
export const handlerFor = (registry: WorkerRegistry) => onColdStart(() => createHandler(depsFromEnv(process.env, registry)));

import { MetricUnit, type Metrics } from '@aws-lambda-powertools/metrics';
import { z } from 'zod';
import type { Answer, Coverage, SourceLabel } from '../lib/contract';
import { buildCoverage, currentRound, decideStatus, planNextRound, reconcile, synthesisInputs, type Reconciliation } from '../lib/domain';
import type { Ledger } from '../lib/ledger';
import { METRIC_DIMENSIONS, METRICS } from '../lib/observability/metrics';
import { ledgerFor } from '../lib/runtime/aws';
import { parseConfig, parseInput } from '../lib/runtime/config';
import { createLogger, createMetrics, onColdStart, publishMetrics } from '../lib/runtime/lambda';
import type { WorkerRegistry } from '../lib/workers';

const Config = z.object({ TABLE_NAME: z.string().min(1) });

const run = { runId: z.string().min(1), tenantId: z.string().min(1) };
const ReconcileTask = z.discriminatedUnion('mode', [
  z.object({ mode: z.literal('reconcile'), ...run, round: z.int().min(1) }),
  /** A Task failed for good (its Catch led here): end the run failed, with whatever coverage it has. */
  z.object({ mode: z.literal('abort'), ...run, error: z.object({ Error: z.string().optional(), Cause: z.string().optional() }).loose().optional() }),
]);
type ReconcileTask = z.infer<typeof ReconcileTask>;

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
const composeAnswer = (registry: WorkerRegistry, status: string, mode: ReconcileTask['mode'], coverage: Coverage, reconciliation: Reconciliation): Answer => {
  if (status === 'failed') {
    const why = mode === 'abort' ? 'a step could not be completed' : 'required coverage is missing';
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
  const task: ReconcileTask = parseInput('Reconcile', ReconcileTask, event);
  // Keys of an earlier invocation on this warm instance must not leak into this one's lines.
  deps.logger.resetKeys();
  deps.logger.appendKeys({ runId: task.runId, tenantId: task.tenantId, mode: task.mode });
  const read = await deps.ledger.readManifest(task.tenantId, task.runId);
  const manifest = { ...read.manifest, sources: deps.sources };
  const round = currentRound(manifest);
  if (task.mode === 'reconcile' && read.run.status === 'running' && planNextRound(manifest, read.outcomes).length > 0) {
    return { next: 'dispatch' as const, runId: task.runId, tenantId: task.tenantId, round: round + 1 };
  }

  const reconciliation = reconcile(manifest, read.outcomes);
  const coverage = buildCoverage(manifest, read.outcomes, reconciliation);
  const decision = decideStatus(manifest, coverage, reconciliation);
  const status = read.run.status === 'cancelled' ? 'cancelled' : task.mode === 'abort' ? 'failed' : decision.status;
  const answer = composeAnswer(deps.registry, status, task.mode, coverage, reconciliation);
  const error =
    task.mode === 'abort'
      ? { code: task.error?.Error ?? 'RunAborted', message: 'a step of the run failed after its retries; see the execution history' }
      : decision.status === 'failed' && status === 'failed'
        ? { code: decision.error.name, message: decision.error.message }
        : undefined;
  await deps.ledger.finishRun({ tenantId: task.tenantId, runId: task.runId, status, answer, ...(error ? { error } : {}) });
  deps.logger.info('run finished', { status, complete: coverage.complete, round });
  emitMetrics(deps.metrics, status, coverage, read.outcomes.map((o) => o.state));
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
